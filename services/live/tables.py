"""The tables one socket process follows (PeopleService.FollowTables): pushed, not polled.

A socket process (the web's socket tier, `web.sockets`) holds the browsers' table streams and
keeps one FollowTables stream to the service for all of them. Each follow names a person and a
match; the service sends that person's `Table` when the follow starts (if the match moved past
the seq its viewer saw) and each time the match changes, with the actions since the last table
it sent. A change wakes the follow at once when it is committed here or heard on the change bus
(`services.live.notify`, the same subscription as a WatchMatch stream); the spectators' one
safety-net query for all watched matches (`services.live.watchers.Watched`) catches what a
replica without a bus would miss. Changes that come while a table is being read are folded into
the next read: a follow reads at most one table at a time, however fast the match moves.

A follow ends when its match is over (its last table says so), when the caller stops it, or
when it is refused (no such match, not the person's seat): then its response says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from bummerl.v1 import match_pb2, people_pb2

from services.core.errors import ServiceError
from services.live import bus, notify
from services.live.watchers import Watched

log = logging.getLogger(__name__)

MAX_FOLLOWS = 50_000  # follows on one stream at once (a socket process's open tables)

# Reads the person's table and the actions from a seq on (`services.ops.people.table_since`),
# blocking: (person_id, match_id, after_seq, heard, memo) -> (people_pb2.Table,
# [(seq, seat, text)]); `heard` holds the actions the follow heard announced, by seq, and
# `memo` is the follow's own to keep what need not be read again (the finished hands).
Read = Callable[[int, int, int, dict[int, tuple[int, str]], dict[str, Any]],
                tuple[people_pb2.Table, list[tuple[int, int, str]]]]


class Follows:
    """The follows of one FollowTables stream, and what they have to send."""

    def __init__(self, site: str, read: Read, run: Callable[..., Awaitable[Any]],
                 watched: Watched) -> None:
        self.site = site
        self.read = read
        self.run = run  # runs a blocking function on the server's pool
        self.watched = watched
        self.outgoing: asyncio.Queue[people_pb2.FollowTablesResponse] = asyncio.Queue()
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def start(self, request: people_pb2.FollowTablesRequest) -> None:
        """Follow one table (a request with `stop`: stop following it)."""
        old = self.tasks.pop(request.follow_id, None)
        if old is not None:
            old.cancel()
        if request.stop:
            return
        if len(self.tasks) >= MAX_FOLLOWS:
            self.outgoing.put_nowait(people_pb2.FollowTablesResponse(
                follow_id=request.follow_id, ended=True,
                refused=f"this stream follows {MAX_FOLLOWS} tables already"))
            return
        self.tasks[request.follow_id] = asyncio.ensure_future(self._follow(
            request.follow_id, request.person_id, request.match_id, max(0, request.after_seq)))

    def close(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()

    async def _follow(self, follow_id: int, person_id: int, match_id: int, seen: int) -> None:
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()
        heard = asyncio.Event()  # the change bus listens to the match's channel
        actions: dict[int, tuple[int, str]] = {}  # announced with their changes, by seq
        memo: dict[str, Any] = {}

        def record(change: Any) -> None:  # (on the loop: `actions` is the loop's alone)
            if change is not None and change.action is not None:
                actions[change.match.seq - 1] = change.action
            woken.set()

        def changed(change: Any) -> None:  # (on the committing or the bus's thread)
            loop.call_soon_threadsafe(record, change)

        unsubscribe = notify.subscribe(notify.key(self.site, "match", match_id), changed,
                                       on_ready=lambda: loop.call_soon_threadsafe(heard.set))
        self.watched.add(match_id, woken)
        try:
            with contextlib.suppress(TimeoutError):  # then no change of another replica is lost
                await asyncio.wait_for(heard.wait(), bus.READY_S)
            while True:
                woken.clear()
                try:
                    table, sent = await self.run(self.read, person_id, match_id, seen,
                                                 dict(actions), memo)
                except ServiceError as e:  # gone, or not the person's seat: say so and end
                    self.outgoing.put_nowait(people_pb2.FollowTablesResponse(
                        follow_id=follow_id, refused=str(e), ended=True))
                    return
                except Exception as e:  # noqa: BLE001  (the database may be away: try again)
                    log.warning("followed table %d: cannot read it (%s); trying again",
                                match_id, e)
                    await asyncio.sleep(1.0)
                    woken.set()
                    continue
                over = table.match.state != match_pb2.MATCH_STATE_RUNNING
                if table.seq > seen or over:
                    self.outgoing.put_nowait(people_pb2.FollowTablesResponse(
                        follow_id=follow_id, table=table, ended=over,
                        actions=[people_pb2.TableAction(seq=seq, seat=seat, action=text)
                                 for seq, seat, text in sent]))
                    seen = max(seen, table.seq)
                    for old in [q for q in actions if q < seen]:  # sent: no longer needed
                        actions.pop(old, None)
                if over:
                    return
                await woken.wait()
        finally:
            self.watched.remove(match_id, woken)
            unsubscribe()
            if self.tasks.get(follow_id) is asyncio.current_task():
                del self.tasks[follow_id]


async def serve(requests: AsyncIterator[people_pb2.FollowTablesRequest], follows: Follows
                ) -> AsyncIterator[people_pb2.FollowTablesResponse]:
    """The responses of one FollowTables stream, as its requests come."""

    async def take() -> None:
        async for request in requests:
            follows.start(request)

    reader = asyncio.ensure_future(take())
    try:
        while True:
            getter = asyncio.ensure_future(follows.outgoing.get())
            done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield getter.result()
                continue
            getter.cancel()
            reader.result()  # the caller closed its side (or it failed: raise it)
            return
    finally:
        reader.cancel()
        follows.close()
