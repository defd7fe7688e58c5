"""Jinja filters and globals of the dashboard's templates."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

REASONS = {
    "played": "played out",
    "forfeit_timeout": "forfeit: time-out",
    "forfeit_illegal": "forfeit: illegal actions",
    "aborted": "aborted by an operator",
}
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RANK_NAMES = {"A": "A", "T": "10", "K": "K", "Q": "Q", "J": "J"}


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def rating(value: float) -> str:
    return f"{value:.1f}"


def seconds(ms: int | None) -> str:
    return "–" if ms is None else f"{ms / 1000:.1f} s"


def duration(value: float | None) -> str:
    """Seconds as `42 s`, `3 min 20 s`, `2 h 05 min`."""
    if value is None:
        return "–"
    total = round(value)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def when(value: str | None) -> str:
    """An ISO time as `2026-11-29 12:34:56 UTC`."""
    if not value:
        return "–"
    moment = datetime.fromisoformat(value).astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def reason(value: str | None) -> str:
    return REASONS.get(value or "", value or "–")


def words(value: str | None) -> str:
    """`false_claim` → `false claim`."""
    return (value or "–").replace("_", " ")


def suits(text: str) -> Markup:
    """`text` (escaped) with its red suits (♥ ♦) in red."""
    out = str(escape(text))
    for symbol in ("♥", "♦"):
        out = out.replace(symbol, f'<span class="red">{symbol}</span>')
    return Markup(out)  # noqa: S704  (built from escaped text)


def signed(value: float | None, digits: int = 1) -> str:
    """`+1.2` / `−0.4` / `±0.0` / `–` (none), with `digits` decimals: never `-0.0` (a value
    that rounds to zero is `±0.0`)."""
    if value is None:
        return "–"
    shown = f"{abs(value):.{digits}f}"
    if float(shown) == 0:
        return f"±{shown}"
    return f"+{shown}" if value > 0 else f"−{shown}"


def bound(value: float) -> str:
    """An SPRT's Elo bound as set: `+50`, `-10`, `0` (no decimals it did not have)."""
    return "0" if value == 0 else f"{value:+g}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 trick`, `2 tricks`, `0 matches` (`many`: the plural when not `word` + s)."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {many or (word + 'es' if word.endswith(('s', 'x', 'ch', 'sh')) else word + 's')}"


def needs(counter: int) -> int:
    """The game points a seat still needs to win the match, from its counter (which starts
    at 7 and goes down by what it wins, past 0 with the winning hand: R9.1)."""
    return max(counter, 0)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def stock_words(table: dict[str, Any]) -> str:
    """The stock's size, saying that it counts the trump card (which lies apart, under the
    pile): `stock 8 (7 + the trump card)`."""
    size = table["stock_size"]
    if not size:
        return "stock 0"
    trump = "the trump card" if table["trump_face_up"] else "the trump card, turned down"
    return f"stock {size} ({trump})" if size == 1 else f"stock {size} ({size - 1} + {trump})"


def seat_name(match: dict[str, Any], seat: int | None) -> str:
    return "–" if seat is None else str(match["seats"][seat]["name"])


FILTERS = {"percent": percent, "rating": rating, "seconds": seconds, "duration": duration,
           "when": when, "reason": reason, "words": words, "suits": suits, "signed": signed,
           "plural": plural, "needs": needs, "bound": bound}
GLOBALS = {"seat_name": seat_name, "stock_words": stock_words, "SUIT_SYMBOLS": SUIT_SYMBOLS,
           "SUIT_NAMES": SUIT_NAMES, "RANK_NAMES": RANK_NAMES, "now_iso": now_iso}
