"""Charts drawn on the server as SVG (no chart library, no CDN): a rating over time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 28


def rating_chart(points: list[dict[str, Any]], title: str) -> Markup:
    """mu (line) and mu ± 2·sigma (band) after each rated match, against time."""
    if not points:
        return Markup("")
    times = [datetime.fromisoformat(p["at"]).timestamp() for p in points]
    lows = [p["mu"] - 2 * p["sigma"] for p in points]
    highs = [p["mu"] + 2 * p["sigma"] for p in points]
    t0, t1 = min(times), max(times)
    y0, y1 = min(lows), max(highs)
    if t1 == t0:
        t0, t1 = t0 - 1, t1 + 1
    if y1 - y0 < 1:
        y0, y1 = y0 - 0.5, y1 + 0.5

    def x(t: float) -> float:
        return LEFT + (t - t0) / (t1 - t0) * (WIDTH - LEFT - RIGHT)

    def y(v: float) -> float:
        return TOP + (y1 - v) / (y1 - y0) * (HEIGHT - TOP - BOTTOM)

    line = " ".join(f"{x(t):.1f},{y(p['mu']):.1f}" for t, p in zip(times, points, strict=True))
    band = " ".join([f"{x(t):.1f},{y(v):.1f}" for t, v in zip(times, highs, strict=True)]
                    + [f"{x(t):.1f},{y(v):.1f}" for t, v in
                       reversed(list(zip(times, lows, strict=True)))])
    ticks = []
    for i in range(5):
        v = y0 + (y1 - y0) * i / 4
        ticks.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'class="grid"/><text x="{LEFT - 4}" y="{y(v) + 4:.1f}" '
                     f'text-anchor="end">{v:.1f}</text>')
    first, last = (datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M") for t in (t0, t1))
    dots = "".join(f'<circle cx="{x(t):.1f}" cy="{y(p["mu"]):.1f}" r="2.5"><title>μ '
                   f'{p["mu"]:.2f} ± {2 * p["sigma"]:.2f} after match {p["match_id"]}</title>'
                   "</circle>" for t, p in zip(times, points, strict=True))
    svg = (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
           f'height="{HEIGHT}" role="img" aria-label="{escape(title)}" '
           'xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="sans-serif">'
           f'<title>{escape(title)}</title>'
           # (its colours are in style.css: the CSP allows no inline style element)
           + "".join(ticks)
           + f'<polygon class="band" points="{band}"/><polyline class="mu" points="{line}"/>'
           + dots
           + f'<text x="{LEFT}" y="{HEIGHT - 8}">{first}</text>'
           f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">{last}</text>'
           "</svg>")
    return Markup(svg)  # noqa: S704  (numbers and escaped text only)
