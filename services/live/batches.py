"""Calls of many streams gathered into one: the database work of a burst of connects.

A `Batched` function is called by the streams on the event loop, one item each; the items that
arrive while a batch runs on the server's pool go into the next batch (the group commit's
rule, `services.core.committers`): one hop to the pool and one statement per batch rather than
per stream, with no wait added when streams come one at a time. A batch that fails fails each
of its calls with the same error; a function may also answer an item with an exception of its
own (an unknown token), which fails that call only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from services.core import matches
from services.core.values import MatchState
from services.live.presence import Opening, Presence

K = TypeVar("K")
R = TypeVar("R")

MOST = 500  # items in one batch (one IN list)


class Batched(Generic[K, R]):
    def __init__(self, function: Callable[[list[K]], Sequence[R | BaseException]],
                 run: Callable[..., Any], most: int = MOST) -> None:
        self.function = function  # blocking: the items' results (or errors), in order
        self.run = run  # runs a blocking function on the pool: `await run(f, *args)`
        self.most = most
        self.waiting: list[tuple[K, asyncio.Future[R]]] = []
        self.busy = False
        self.batches = 0  # batches run (tests)

    async def __call__(self, item: K) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self.waiting.append((item, future))
        if not self.busy:
            self.busy = True
            asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            await asyncio.sleep(0)  # the calls of this turn of the loop join the first batch
            while self.waiting:
                batch, self.waiting = self.waiting[:self.most], self.waiting[self.most:]
                self.batches += 1
                try:
                    results = await self.run(self.function, [item for item, _ in batch])
                except (Exception, asyncio.CancelledError) as e:  # each call gets it
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(e)
                    if isinstance(e, asyncio.CancelledError):
                        raise
                    continue
                for (_, future), result in zip(batch, results, strict=True):
                    if future.done():
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:
            self.busy = False
            if self.waiting:  # cancelled (the server stops): no batch will run them
                for _, future in self.waiting:
                    with contextlib.suppress(RuntimeError):  # its loop is closed already
                        future.cancel()
                self.waiting = []


class Connects:
    """The batched database work of Play streams opening and closing on one server: what the
    bot takes written to the presence (`Presence.opened_many`, `closed_many`), and the first
    read of its running matches (`matches.match_states_of_bots`)."""

    def __init__(self, presence: Presence, sessions: sessionmaker[Session] | None,
                 run: Callable[..., Any]) -> None:
        self.opened: Batched[Opening, None] = Batched(presence.opened_many, run)
        self.closed: Batched[tuple[int, int | None], None] = Batched(presence.closed_many, run)
        self.states: Batched[int, list[MatchState]] = Batched(
            functools.partial(matches.match_states_of_bots, sessions=sessions), run)
