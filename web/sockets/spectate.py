"""The spectators at the socket tier: a match page's live part, pushed when the match changes.

One MatchService.WatchMatch stream per followed match (a `Watch`), shared by every viewer of
that match in this process; it closes when the last viewer leaves. Each change the stream
tells of (an action, a hand's end, the match's end) wakes one render of the page's live part,
the web's own templates over web.queries.match_detail (`Render`, on a thread), and that one
payload goes to every viewer: it is what a reload shows, and it shows what the page shows a
spectator, no more (the page's safety is the stream's: no card in hand, no stock, no seed
while the match runs). Changes that come while a render runs make one more render, not one
each. A viewer that is slow gets the latest payload, never a queue of old ones.

A broken WatchMatch stream is opened again with backoff from the last seq it told of: it tells
again of every action since (and of the match's end), so no change is missed, and nothing is
read while it is away. A viewer misses nothing either, as every payload is the whole live part.
A refused action alone (no action logged) is not a change WatchMatch tells of: the page shows
its count with the next action, as a reload would show it then.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc
from bummerl.v1 import match_pb2, match_pb2_grpc

log = logging.getLogger(__name__)

BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)  # waits before opening a broken stream again


@dataclass(frozen=True)
class Snapshot:
    """A match page's live part: `data` the JSON of {"html": {element id: HTML}, "final"}."""

    seq: int
    data: str
    final: bool


# match id -> its page's live part now, or None when there is no such match
Render = Callable[[int], "tuple[int, dict[str, object]] | None"]


class Viewer:
    """One browser's stream: the latest snapshot it has not taken yet."""

    def __init__(self) -> None:
        self.latest: Snapshot | None = None  # None: there is no such match
        self.ready = asyncio.Event()

    def deliver(self, snapshot: Snapshot | None) -> None:
        self.latest = snapshot
        self.ready.set()

    async def take(self) -> Snapshot | None:
        await self.ready.wait()
        self.ready.clear()
        return self.latest


class Watch:
    """One followed match: its viewers, its latest snapshot, its WatchMatch stream."""

    def __init__(self, match_id: int, spectators: Spectators) -> None:
        self.match_id = match_id
        self.spectators = spectators
        self.viewers: set[Viewer] = set()
        self.latest: Snapshot | None = None
        self.rendered = False  # (latest None and rendered: no such match)
        self.changed = asyncio.Event()
        self.from_seq = 0  # WatchMatch resumes here
        self.task = asyncio.ensure_future(self._run())

    def join(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)
        if self.rendered:
            viewer.deliver(self.latest)

    async def _render(self) -> Snapshot | None:
        got = await asyncio.get_running_loop().run_in_executor(
            self.spectators.renderer, self.spectators.render, self.match_id)
        if got is None:
            return None
        seq, payload = got
        return Snapshot(seq, json.dumps(payload, separators=(",", ":")),
                        bool(payload.get("final")))

    async def _run(self) -> None:
        follower: asyncio.Task[None] | None = None
        self.changed.set()
        try:
            while True:
                await self.changed.wait()
                self.changed.clear()
                try:
                    snapshot = await self._render()
                except Exception:  # noqa: BLE001  (the database may be away: again soon)
                    log.warning("sockets: rendering match %d failed", self.match_id,
                                exc_info=True)
                    await asyncio.sleep(1.0)
                    self.changed.set()
                    continue
                self.latest, self.rendered = snapshot, True
                for viewer in list(self.viewers):
                    viewer.deliver(snapshot)
                if snapshot is None or snapshot.final:
                    return  # nothing more will change
                if follower is None:  # from the seq rendered on: no change missed
                    self.from_seq = snapshot.seq
                    follower = asyncio.ensure_future(self._follow())
        finally:
            if follower is not None:
                follower.cancel()

    async def _follow(self) -> None:
        failures = 0
        while True:
            try:
                call = self.spectators.stub().WatchMatch(
                    match_pb2.WatchMatchRequest(match_id=self.match_id, from_seq=self.from_seq),
                    metadata=self.spectators.metadata)
                async for response in call:
                    failures = 0
                    if response.HasField("action"):
                        self.from_seq = max(self.from_seq, response.action.seq + 1)
                    self.changed.set()
                self.changed.set()  # the match is over: its last render says so
                return
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001  (open it again from the last seq)
                if failures == 0:
                    log.warning("sockets: the WatchMatch stream of match %d broke (%s); "
                                "opening it again", self.match_id, _short(e))
                failures += 1
            await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])


class Spectators:
    """Every followed match of this process, on one gRPC channel to the service."""

    def __init__(self, address: str, options: list[tuple[str, int]],
                 metadata: tuple[tuple[str, str], ...], render: Render) -> None:
        self.address = address
        self.options = options
        self.metadata = metadata
        self.render = render
        # renders one at a time on a thread of their own: never more than one beside the event
        # loop (a render is Python, and holds the interpreter while it runs), and never in the
        # way of the tier's other reads (the sessions' checks, on the loop's default pool)
        self.renderer = ThreadPoolExecutor(1, thread_name_prefix="spectators-render")
        self.watches: dict[int, Watch] = {}
        self.channel: grpc.aio.Channel | None = None

    def stub(self) -> match_pb2_grpc.MatchServiceStub:
        if self.channel is None:
            self.channel = grpc.aio.insecure_channel(self.address, options=self.options)
        return match_pb2_grpc.MatchServiceStub(self.channel)

    @property
    def viewers(self) -> int:
        return sum(len(w.viewers) for w in self.watches.values())

    def join(self, match_id: int) -> Viewer:
        watch = self.watches.get(match_id)
        if watch is None:
            watch = self.watches[match_id] = Watch(match_id, self)
        viewer = Viewer()
        watch.join(viewer)
        return viewer

    def leave(self, match_id: int, viewer: Viewer) -> None:
        watch = self.watches.get(match_id)
        if watch is None:
            return
        watch.viewers.discard(viewer)
        if not watch.viewers:  # the last one: its stream closes
            del self.watches[match_id]
            watch.task.cancel()

    async def close(self) -> None:
        for watch in self.watches.values():
            watch.task.cancel()
        self.watches.clear()
        self.renderer.shutdown(wait=False, cancel_futures=True)
        if self.channel is not None:
            with contextlib.suppress(Exception):
                await self.channel.close(None)


def _short(error: BaseException) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error) or type(error).__name__
