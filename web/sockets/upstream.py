"""The socket process's one FollowTables stream to the engine service, for all its tables.

`follow` starts following a person's table and returns its `Follow`, where the service's
tables land. A follow's tables are merged while its browser is slow (the latest table, with
every action since the one it last took), so nothing queues up and no action is lost. When the
stream breaks (the service restarts, the network drops) it is opened again with backoff and
every follow is sent again from the last seq it received: nothing is missed, nothing repeated.
A connection that goes quiet without closing (a cut link, a frozen service) is found by gRPC's
keepalive pings within `keepalive_s` and a half, and taken as broken.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator

import grpc
from bummerl.v1 import people_pb2, people_pb2_grpc

log = logging.getLogger(__name__)

BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)  # waits before opening the stream again


class Follow:
    """One followed table: what the service sent and the browser has not taken yet."""

    def __init__(self, follow_id: int, person_id: int, match_id: int, seen: int) -> None:
        self.follow_id = follow_id
        self.person_id = person_id
        self.match_id = match_id
        self.seen = seen  # the last seq received (a new stream resumes from it)
        self.pending: people_pb2.FollowTablesResponse | None = None
        self.ready = asyncio.Event()

    def deliver(self, response: people_pb2.FollowTablesResponse) -> None:
        if response.HasField("table"):
            self.seen = max(self.seen, response.table.seq)
        if self.pending is not None and not self.pending.refused:  # merge: keep every action
            actions = [*self.pending.actions, *response.actions]
            del response.actions[:]
            response.actions.extend(actions)
        self.pending = response
        self.ready.set()

    async def take(self) -> people_pb2.FollowTablesResponse:
        """The next update (tables merged since the last take)."""
        await self.ready.wait()
        self.ready.clear()
        taken, self.pending = self.pending, None
        assert taken is not None
        return taken


class Upstream:
    def __init__(self, address: str, token: str, keepalive_s: float = 20.0) -> None:
        self.address = address
        # a ping every keepalive_s on a quiet connection, answered within half of it, or the
        # stream is taken as broken and opened again (a link cut silently, a frozen service)
        self.options = [("grpc.keepalive_time_ms", int(keepalive_s * 1000)),
                        ("grpc.keepalive_timeout_ms", int(keepalive_s * 500)),
                        ("grpc.keepalive_permit_without_calls", 1),
                        ("grpc.http2.max_pings_without_data", 0),
                        # (gRPC waits this long for a ping's answer, not keepalive_timeout)
                        ("grpc.http2.ping_timeout_ms", int(keepalive_s * 500))]
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.follows: dict[int, Follow] = {}
        self.ids = itertools.count(1)
        self.requests: asyncio.Queue[people_pb2.FollowTablesRequest] | None = None
        self.connected = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.ensure_future(self._run())

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    def follow(self, person_id: int, match_id: int, after_seq: int) -> Follow:
        follow = Follow(next(self.ids), person_id, match_id, after_seq)
        self.follows[follow.follow_id] = follow
        self._send(self._request(follow))
        return follow

    def stop(self, follow: Follow) -> None:
        if self.follows.pop(follow.follow_id, None) is not None:
            self._send(people_pb2.FollowTablesRequest(follow_id=follow.follow_id, stop=True))

    @staticmethod
    def _request(follow: Follow) -> people_pb2.FollowTablesRequest:
        return people_pb2.FollowTablesRequest(follow_id=follow.follow_id,
                                              person_id=follow.person_id,
                                              match_id=follow.match_id, after_seq=follow.seen)

    def _send(self, request: people_pb2.FollowTablesRequest) -> None:
        if self.requests is not None:  # else the next stream sends every follow
            self.requests.put_nowait(request)

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                async with grpc.aio.insecure_channel(self.address,
                                                     options=self.options) as channel:
                    await self._stream(people_pb2_grpc.PeopleServiceStub(channel))
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001  (open it again; the follows resume)
                if failures == 0:
                    log.warning("sockets: the FollowTables stream to %s broke (%s); opening "
                                "it again", self.address, _short(e))
                failures += 1
            finally:
                self.requests = None
                self.connected.clear()
            await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])

    async def _stream(self, stub: people_pb2_grpc.PeopleServiceStub) -> None:
        requests: asyncio.Queue[people_pb2.FollowTablesRequest] = asyncio.Queue()
        for follow in self.follows.values():  # every follow, from the last seq it received
            requests.put_nowait(self._request(follow))
        self.requests = requests

        async def outgoing() -> AsyncIterator[people_pb2.FollowTablesRequest]:
            while True:
                yield await requests.get()

        call = stub.FollowTables(outgoing(), metadata=self.metadata)
        self.connected.set()
        async for response in call:
            found = self.follows.get(response.follow_id)
            if found is not None:
                found.deliver(response)


def _short(error: BaseException) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error) or type(error).__name__
