"""What a version change does to a ladder rating: sigma before and after the widening.

The ladder widens a bot's sigma once when it runs a new version (workers.ladder.
widen_for_version): sigma <- max(sigma, min(sigma0, sigma + sigma0 / 3)). For a bot that has
played n rated matches (two equal bots, wins alternating: openskill's sigma after n matches),
this prints sigma, the widened sigma, and how many matches a fresh bot plays before its sigma is
that narrow ("as if it had played"), beside the peer of resetting the rating (sigma0: as if 0
matches) and the ordinal (mu - 3 sigma) each costs.

Run: `.venv/bin/python bench/widening.py`
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workers.ladder import MODEL, VERSION_WIDENING  # noqa: E402

SHOWN = (10, 20, 50, 100, 200, 500, 1000)


def sigmas(n: int) -> list[float]:
    """sigma after 0 .. n matches between two fresh, equal bots (wins alternating)."""
    a, b = [MODEL.rating()], [MODEL.rating()]
    out = [a[0].sigma]
    for i in range(n):
        if i % 2 == 0:
            a, b = MODEL.rate([a, b], ranks=[0.0, 1.0])
        else:
            b, a = MODEL.rate([b, a], ranks=[0.0, 1.0])
        out.append(a[0].sigma)
    return out


def main() -> int:
    curve = sigmas(max(SHOWN))
    sigma0 = MODEL.sigma
    print(f"openskill sigma0 = {sigma0:.3f}; widening by {VERSION_WIDENING:.3f} sigma0 "
          f"= {VERSION_WIDENING * sigma0:.3f}")
    print(f"{'matches':>8} {'sigma':>7} {'widened':>8} {'as if played':>13} "
          f"{'ordinal cost':>13} {'reset cost (peer)':>18} {'ratio':>6}")
    for n in SHOWN:
        sigma = curve[n]
        widened = max(sigma, min(sigma0, sigma + VERSION_WIDENING * sigma0))
        as_if = next(k for k, s in enumerate(curve) if s <= widened + 1e-12)
        cost, reset = 3 * (widened - sigma), 3 * (sigma0 - sigma)
        print(f"{n:>8} {sigma:>7.2f} {widened:>8.2f} {as_if:>13} {cost:>13.2f} {reset:>18.2f} "
              f"{cost / reset:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
