"""The ranges of values the service stores and accepts: ids (the database's integer keys), a
time control's times and illegal-action limit; `in_range` refuses a value outside its range."""

from __future__ import annotations

from services.core.errors import InvalidArgument, cut

# The largest id of a bot or a match (the database's integer keys; the protos' ids are int64).
MAX_ID = 2**31 - 1
# Ranges of values (checked by the plain functions, e.g. services.core.matches.create_match).
MAX_TIME_MS = 24 * 3600 * 1000  # a time control's move time and bank: one day
MAX_ILLEGAL = 1000  # a time control's illegal actions that forfeit a match
# The shortest move time a new match, tournament or version test may have. A bot's clock runs
# from when its turn starts in the service to when its action is back: the turn's round trip
# through the service is in it, and its p99 reached 179 ms under load (bench/service.py at
# N = 200: docs/scaling.md). Below that a move can be lost on time by a bot that answers at
# once (`--time-control 1+1` was two forfeits on time). docs/service.md, "Time controls".
MIN_MOVE_MS = 200
MOVE_NOTE = f"ms, at least {MIN_MOVE_MS}: a turn's round trip through the service needs it"


def in_range(name: str, value: int, low: int, high: int, note: str = "") -> None:
    """Raise InvalidArgument naming `name` (also as its `field` detail) and its range unless
    low <= value <= high."""
    if not low <= value <= high:
        unit = f" ({note})" if note else ""
        raise InvalidArgument(
            f"{name} must be {low}-{high}{unit}, not {cut(str(value), 40)}", field=name)
