"""Who commits the applied actions, and when: the group commit of each database, which puts
the appends of concurrent actions (of different matches) in one transaction
(`services.appends` writes them).

The group commit has one committer thread per database: whatever was handed to it while it was
busy goes into its next transaction. So under load the round trips, the pool checkout and the
commit are paid once per batch instead of once per action, and with one action in flight it is
the same transaction as before.

Each action gets the answer it would have had alone: if the batch is refused (a unique key, a
guarded update that matched no row: another process or a retry got there first) nothing of it
is committed and its actions are committed one by one, each in its own transaction; the ones
that still fail answer False (the caller takes the old path, which reads the row and decides).
An action is acknowledged (and its change pushed) only after its own commit.

An action handed over from an event loop (a Play stream's answer) is settled on the
committer's thread (the live row, the cache, the match's lock) and answered on that loop: the
committer wakes the loop once per batch and the loop answers and announces the batch's actions
to the streams without a further hop, instead of one cross-thread wake-up per action.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from sqlalchemy import Engine

from services.appends import Applied, commit

log = logging.getLogger(__name__)


Outcome = bool | BaseException  # committed, refused (see `commit`), or the database's error
Then = Callable[[], object]
# Called on the committer's thread with the outcome (it must settle the state there: the live
# row, the cache, the match's lock); what it returns, if anything, runs on the submitter's
# event loop (answers and announcements), or on the committer's thread without a loop.
Done = Callable[[Outcome], Then | None]


class GroupCommit:
    """The committer of one database: commits what `submit` was given, in batches."""

    def __init__(self, bind: Engine) -> None:
        self.bind = bind
        self.lock = threading.Lock()
        self.pending: list[tuple[Applied, Done, asyncio.AbstractEventLoop | None]] = []
        self.busy = False
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bummerl-commit")
        self.batches = 0  # transactions of more than one action (tests and metrics)

    def submit(self, p: Applied, done: Done,
               loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Commit `p` soon, then call `done` with the outcome on the committer's thread; what
        it returns runs on `loop` (the returns of one batch in one callback: one wake-up of
        the loop per batch, not one per action), or on the committer's thread without one or
        when the loop is not running (a stopped server's)."""
        with self.lock:
            self.pending.append((p, done, loop))
            if self.busy:
                return
            self.busy = True
        self.executor.submit(self._run)

    def _run(self) -> None:
        while True:
            with self.lock:
                batch, self.pending = self.pending, []
                if not batch:
                    self.busy = False
                    return
            outcomes = self._commit([p for p, _, _ in batch])
            on_loops: dict[asyncio.AbstractEventLoop, list[Then]] = {}
            for (_, done, loop), outcome in zip(batch, outcomes, strict=True):
                then = _call(done, outcome)
                if then is None:
                    continue
                if loop is None:
                    _call_all([then])
                else:
                    on_loops.setdefault(loop, []).append(then)
            for loop, thens in on_loops.items():
                if not loop.is_running():  # the server stopped: here, then
                    _call_all(thens)
                    continue
                try:
                    loop.call_soon_threadsafe(_call_all, thens)
                except RuntimeError:  # closed meanwhile
                    _call_all(thens)

    def _commit(self, batch: list[Applied]) -> list[Outcome]:
        if len(batch) > 1:
            try:
                if commit(self.bind, batch):
                    self.batches += 1
                    return [True] * len(batch)
            except BaseException as e:  # noqa: BLE001  (the database failed: all hear of it)
                return [e] * len(batch)
        outcomes: list[Outcome] = []
        for p in batch:  # a lone action, or a refused batch: one by one
            try:
                outcomes.append(commit(self.bind, [p]))
            except BaseException as e:  # noqa: BLE001  (its own error, as if alone)
                outcomes.append(e)
        return outcomes


def _call(done: Done, outcome: Outcome) -> Then | None:
    try:
        return done(outcome)
    except Exception:  # noqa: BLE001  (one waiter's failure must not stop the others')
        log.exception("a group commit's waiter failed")
        return None


def _call_all(thens: list[Then]) -> None:
    for then in thens:
        try:
            then()
        except Exception:  # noqa: BLE001  (as in `_call`)
            log.exception("a group commit's waiter failed")


_committers: dict[int, GroupCommit] = {}
_guard = threading.Lock()


def committer(bind: Engine) -> GroupCommit:
    """The group commit of the database of `bind` (one per engine)."""
    with _guard:
        found = _committers.get(id(bind))
        if found is None or found.bind is not bind:
            found = _committers[id(bind)] = GroupCommit(bind)
        return found


def commit_one(bind: Engine, p: Applied) -> bool:
    """Commit `p` through the group commit and wait: True once committed, False if refused."""
    future: Future[bool] = Future()

    def done(outcome: Outcome) -> None:
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
        return None

    committer(bind).submit(p, done)
    return future.result()
