"""The streams' safety nets: one query per interval for all the streams of this server, not
one per stream, waking only the streams that missed something. Changes committed here or heard
on the change bus wake them at once anyway (`services.live.notify`); this only catches what was
missed (another process without a bus).

- `Watched`: the spectators' (WatchMatch), on the seq and state of the watched matches.
- `Players`: the bots' (Play), on the running matches of the bots playing here and the
  matches their streams follow: a stream is woken (it reads the database) when one of them
  holds something it has not sent (`PlaySession.missed`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from db.models import RUNNING, Match
from services.core import breaker
from services.core.connections import bound_engine, reading

if TYPE_CHECKING:
    from services.live.play import PlaySession

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
            if breaker.of_sessions(self.sessions).is_open:  # the database is down: no read
                continue
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


class Players:
    def __init__(self, sessions: sessionmaker[Session] | None,
                 run: Callable[..., Any], interval: Callable[[], float]) -> None:
        self.sessions = sessions
        self.run = run  # runs a blocking function on the server's pool
        self.interval = interval
        self.streams: set[PlaySession] = set()
        self.task: asyncio.Task[None] | None = None
        self.rounds = 0  # queries made (tests)

    def add(self, stream: PlaySession) -> None:
        self.streams.add(stream)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._loop())

    def remove(self, stream: PlaySession) -> None:
        self.streams.discard(stream)

    async def _loop(self) -> None:
        while self.streams:
            await asyncio.sleep(self.interval())
            if breaker.of_sessions(self.sessions).is_open:  # the streams re-read when it closes
                continue
            streams = list(self.streams)
            bots = sorted({s.bot_id for s in streams})
            followed = sorted({match_id for s in streams for match_id in s.known})
            try:
                rows = await self.run(self._read, bots, followed)
            except Exception as e:  # noqa: BLE001  (the next round retries)
                log.warning("play streams' safety-net read failed: %s", e)
                continue
            self.rounds += 1
            by_bot: dict[int, list[Any]] = {}  # each stream looks at its bot's rows only
            for row in rows:
                by_bot.setdefault(row.bot0_id, []).append(row)
                if row.bot1_id != row.bot0_id:
                    by_bot.setdefault(row.bot1_id, []).append(row)
            for stream in streams:  # (an idle stream: no rows, nothing followed, not stale)
                rows_of = by_bot.get(stream.bot_id)
                if rows_of is None and not stream.stale:
                    continue
                if stream in self.streams and stream.missed(rows_of or []):
                    stream.wake()

    def _read(self, bots: list[int], followed: list[int]) -> list[Any]:
        """The running matches of `bots` and the matches `followed`, as rows of (id, bot0_id,
        bot1_id, state, seq, to_act, hand_number, origin, version0, version1)."""
        columns = (Match.id, Match.bot0_id, Match.bot1_id, Match.state, Match.seq,
                   Match.to_act, Match.hand_number, Match.origin, Match.version0,
                   Match.version1)
        found: dict[int, Any] = {}
        with reading(bound_engine(self.sessions)) as connection:
            for start in range(0, len(bots), CHUNK):
                chunk = bots[start:start + CHUNK]
                for row in connection.execute(select(*columns).where(
                        Match.state == RUNNING,
                        or_(Match.bot0_id.in_(chunk), Match.bot1_id.in_(chunk)))):
                    found[row.id] = row
            for start in range(0, len(followed), CHUNK):
                for row in connection.execute(select(*columns).where(
                        Match.id.in_(followed[start:start + CHUNK]))):
                    found[row.id] = row
        return list(found.values())
