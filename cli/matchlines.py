"""One line per finished match, for `bummerl up` without a terminal (`bummerl up | tee log`):

    12:03:04 match 17: house-rdeep beat house-random in 4 hands (played)
    12:03:09 match 18: house-bully vs mybot aborted (aborted by the operator: ...)

`FinishedMatches().lines()` returns the lines of the matches that finished since the last call
(the first call: since it was made), in the order they finished (times UTC).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

# A match that finished just before the last one seen may commit just after it was read:
# each look goes back this far, and skips the matches already told.
LOOK_BACK = timedelta(seconds=30)


class FinishedMatches:
    def __init__(self) -> None:
        from sqlalchemy import func, select

        from db.base import session_factory
        from db.models import Match

        self._sessions = session_factory()
        # The last finish told (at first: the last before this was made, not told) and the
        # matches told that finished within LOOK_BACK of it.
        self._told: dict[int, datetime] = {}
        with self._sessions() as s:
            self._since: datetime | None = s.scalar(select(func.max(Match.finished_at)))
            if self._since is not None:
                self._told = {i: t for i, t in s.execute(
                    select(Match.id, Match.finished_at)
                    .where(Match.finished_at > self._since - LOOK_BACK)).tuples() if t}

    def lines(self) -> list[str]:
        return [line(m) for m in self._read()]

    def _read(self) -> list[Any]:
        from sqlalchemy import select

        from db.models import RUNNING, Match

        query = select(Match).where(Match.state != RUNNING, Match.finished_at.is_not(None))
        if self._since is not None:
            query = query.where(Match.finished_at > self._since - LOOK_BACK)
        with self._sessions() as s:
            found = s.scalars(query.order_by(Match.finished_at, Match.id)).unique()
            new: list[Any] = [m for m in found if m.id not in self._told]
            for m in new:
                m.bot0, m.bot1  # noqa: B018  (loaded while the session is open)
        for m in new:
            finished: datetime = m.finished_at
            self._told[m.id] = finished
            self._since = finished if self._since is None else max(self._since, finished)
        if self._since is not None:
            cut = self._since - LOOK_BACK
            self._told = {i: t for i, t in self._told.items() if t > cut}
        return new


def line(m: Any) -> str:
    """The line of the finished match `m` (a db.models.Match)."""
    names = (m.bot0.name, m.bot1.name)
    when = f"{m.finished_at:%H:%M:%S}"
    if m.winner is None:
        detail = f": {m.end_detail}" if getattr(m, "end_detail", None) else ""
        return f"{when} match {m.id}: {names[0]} vs {names[1]} {m.state} ({m.end_reason}{detail})"
    hands = m.hand_number + 1
    return (f"{when} match {m.id}: {names[m.winner]} beat {names[1 - m.winner]} in {hands} "
            f"hand{'s' * (hands != 1)} ({m.end_reason})")
