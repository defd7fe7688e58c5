"""The spectators' safety net: one query per interval for all the matches watched on this
server (not one per WatchMatch stream), waking the streams of the matches whose seq or state
changed. Changes committed here or heard on the change bus wake them at once anyway
(`services.notify`); this only catches what was missed (another process without a bus).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from db.models import Match
from services.games import reading
from services.matches import bound_engine

log = logging.getLogger(__name__)
CHUNK = 500  # match ids per query


class Watched:
    def __init__(self, sessions: sessionmaker[Session] | None,
                 run: Callable[..., Any], interval: Callable[[], float]) -> None:
        self.sessions = sessions
        self.run = run  # runs a blocking function on the server's pool
        self.interval = interval
        self.events: dict[int, set[asyncio.Event]] = {}
        self.seen: dict[int, tuple[int, str] | None] = {}
        self.task: asyncio.Task[None] | None = None

    def add(self, match_id: int, event: asyncio.Event) -> None:
        self.events.setdefault(match_id, set()).add(event)
        self.seen.setdefault(match_id, None)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._loop())

    def remove(self, match_id: int, event: asyncio.Event) -> None:
        events = self.events.get(match_id)
        if events is not None:
            events.discard(event)
            if not events:
                del self.events[match_id]
                self.seen.pop(match_id, None)

    async def _loop(self) -> None:
        while self.events:
            await asyncio.sleep(self.interval())
            ids = sorted(self.events)
            try:
                now = await self.run(self._read, ids)
            except Exception as e:  # noqa: BLE001  (the next round retries)
                log.warning("spectators' safety-net read failed: %s", e)
                continue
            for match_id, version in now.items():
                before = self.seen.get(match_id)
                if match_id in self.seen:
                    self.seen[match_id] = version
                if before is not None and before != version:
                    for event in self.events.get(match_id, ()):
                        event.set()

    def _read(self, ids: list[int]) -> dict[int, tuple[int, str]]:
        found: dict[int, tuple[int, str]] = {}
        with reading(bound_engine(self.sessions)) as connection:
            for start in range(0, len(ids), CHUNK):
                rows = connection.execute(select(Match.id, Match.seq, Match.state).where(
                    Match.id.in_(ids[start:start + CHUNK])))
                found.update({row.id: (row.seq, row.state) for row in rows})
        return found
