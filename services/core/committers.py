"""Who commits the applied actions, and when: the group commit of each database, which puts
the appends of concurrent actions (of different matches) in one transaction
(`services.core.appends` writes them).

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

On PostgreSQL such an action is committed by that loop itself (`LoopCommit`), with no thread:
the committer thread gives up the GIL while it waits for the database and had to win it back
from the busy loop, which took milliseconds per batch under load (a batch's wall time is the
latency of every action in it). The loop sends the batch's one statement on an asyncio
connection of its own and goes on serving; the answer comes with the loop's own poll.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from db.base import IDLE_CHECK_S, AnswerTimeout, driver_params, waits_of
from db.waits import Released
from services.core import metrics
from services.core.appends import PG_BATCH, Applied, batch_error, batch_parameters, commit
from services.core.errors import Aborted

log = logging.getLogger(__name__)


Outcome = bool | BaseException  # committed, refused (see `commit`), or the database's error
Then = Callable[[], object]
# Called on the committer's thread with the outcome (it must settle the state there: the live
# row, the cache, the match's lock); what it returns, if anything, runs on the submitter's
# event loop (answers and announcements), or on the committer's thread without a loop. (A
# loop's own committer, `LoopCommit`, calls both on the loop.)
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
        self.loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopCommit] = \
            weakref.WeakKeyDictionary()

    def submit(self, p: Applied, done: Done,
               loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Commit `p` soon, then call `done` with the outcome on the committer's thread; what
        it returns runs on `loop` (the returns of one batch in one callback: one wake-up of
        the loop per batch, not one per action), or on the committer's thread without one or
        when the loop is not running (a stopped server's). On PostgreSQL, called on `loop`
        (a Play stream's answer), it is that loop's own committer's (`LoopCommit`)."""
        if loop is not None and self.bind.dialect.name == "postgresql" and _on(loop):
            self.on_loop(loop).submit(p, done)
            return
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
            started = time.perf_counter()
            outcomes = self._commit([p for p, _, _ in batch])
            metrics.committed(len(batch), started)
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

    def on_loop(self, loop: asyncio.AbstractEventLoop) -> LoopCommit:
        """The committer of `loop` for this database."""
        with self.lock:
            found = self.loops.get(loop)
            if found is None:
                found = self.loops[loop] = LoopCommit(self.bind)
            return found

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


def _on(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether this is `loop`'s thread and it is running. Asked on every action: an asyncio
    loop knows its thread while it runs (`_thread_id`, None otherwise), and comparing it
    with this thread's costs no system call; `asyncio.get_running_loop` calls getpid() each
    time (CPython 3.11), which was 4 % of the loop's busy time (py-spy --gil --native)."""
    thread = getattr(loop, "_thread_id", _UNKNOWN)
    if thread is not _UNKNOWN:
        return thread == threading.get_ident()
    try:  # another kind of loop
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


_UNKNOWN = object()


class LoopCommit:
    """The group commit of one event loop on PostgreSQL: what `submit` was given is committed
    in batches by a task of the loop, on an asyncio connection of its own (in autocommit mode:
    each batch is one statement, `appends.PG_BATCH`, which commits itself).

    The answers are those of the thread's commit: a refused batch is committed one by one;
    a failed one (the database down, or no answer within the engine's bound) gives each of
    its actions the error, and the connection is dropped and opened again for the next. A
    connection idle for more than `db.base.IDLE_CHECK_S` is pinged before a batch, as the
    engine's pool does (a restarted server, a dropped network: the batch goes on a new one)."""

    def __init__(self, bind: Engine) -> None:
        self.bind = bind
        self.pending: list[tuple[Applied, Done]] = []
        self.task: asyncio.Task[None] | None = None
        self.connection: Any = None  # a psycopg.AsyncConnection, once opened
        self.params: tuple[dict[str, str], float] | None = None  # db.base.driver_params
        self.used = 0.0  # time.monotonic() of the connection's last answer
        self.batches = 0  # statements of more than one action (tests)

    def submit(self, p: Applied, done: Done) -> None:
        """Commit `p` soon (call on the loop), then call `done` with the outcome and what it
        returns, on the loop."""
        self.pending.append((p, done))
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                started = time.perf_counter()
                try:
                    outcomes = await self._commit([p for p, _ in batch])
                except BaseException as e:  # cancelled (the loop is closing): all hear of it
                    _call_all([then for (_, done) in batch if (then := _call(done, e))])
                    raise
                metrics.committed(len(batch), started)
                _call_all([then for (_, done), outcome in zip(batch, outcomes, strict=True)
                           if (then := _call(done, outcome)) is not None])
        finally:
            self.task = None

    async def _commit(self, batch: list[Applied]) -> list[Outcome]:
        try:
            await self._execute(batch)
        except (IntegrityError, Aborted):
            if len(batch) == 1:
                return [False]
        except Exception as e:  # noqa: BLE001  (the database failed: all hear of it)
            return [e] * len(batch)
        else:
            if len(batch) > 1:
                self.batches += 1
            return [True] * len(batch)
        outcomes: list[Outcome] = []
        for p in batch:  # a refused batch: one by one, each as if alone
            try:
                await self._execute([p])
                outcomes.append(True)
            except (IntegrityError, Aborted):
                outcomes.append(False)
            except Exception as e:  # noqa: BLE001  (its own error, as if alone)
                outcomes.append(e)
        return outcomes

    async def _execute(self, batch: list[Applied]) -> None:
        import psycopg

        connection = await self._connection()
        try:
            await self._bounded(connection.execute(PG_BATCH, batch_parameters(batch)))
            self.used = time.monotonic()
        except TimeoutError:
            raise DBAPIError.instance(
                PG_BATCH, None, AnswerTimeout(
                    f"the database did not answer within {self._answer_s():g} s"),
                psycopg.Error, connection_invalidated=True) from None
        except psycopg.Error as e:
            invalidated = bool(connection.closed or connection.broken)
            if invalidated:
                self._drop()
            raise batch_error(e, invalidated) from e

    async def _connection(self) -> Any:
        import psycopg

        if self.connection is not None and not (self.connection.closed or
                                                self.connection.broken):
            if time.monotonic() - self.used < IDLE_CHECK_S:
                return self.connection
            try:  # idle for a while: the server may have restarted, the network dropped it
                await self._bounded(self.connection.execute("SELECT 1"))
                self.used = time.monotonic()
                return self.connection
            except (psycopg.Error, TimeoutError):
                pass  # a new one, then
        self._drop()
        waits = waits_of(self.bind)
        if waits is not None and waits.released:  # known down: no connect into the void
            raise DBAPIError.instance(PG_BATCH, None, Released(), psycopg.Error,
                                      connection_invalidated=True)
        try:
            if self.params is None:  # read off the engine's pool, once (blocking: a thread)
                self.params = await asyncio.to_thread(driver_params, self.bind)
            self.connection = await psycopg.AsyncConnection.connect(
                psycopg.conninfo.make_conninfo("", **self.params[0]), autocommit=True)
        except psycopg.Error as e:
            raise DBAPIError.instance(PG_BATCH, None, e, psycopg.Error,
                                      connection_invalidated=True) from e
        return self.connection

    async def _bounded(self, operation: Coroutine[Any, Any, Any]) -> None:
        """Await `operation` on the connection within the engine's answer bound; past it, the
        connection is closed, then the operation stopped, and TimeoutError raised. (Cancelled
        while its query is out, psycopg would ask the server to cancel it and wait again, up
        to 10 s more, over what may be a dead network; on a closed connection it does not.)"""
        waits = waits_of(self.bind)
        if waits is None:
            return await self._bounded_wait(operation)
        with waits.waiting(self.connection.pgconn.socket) as allowed:
            if not allowed:  # the service knows the database is down (db.waits)
                operation.close()
                self._drop()
                raise Released
            await self._bounded_wait(operation)

    async def _bounded_wait(self, operation: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(operation)
        await asyncio.wait([task], timeout=self._answer_s() or None)
        if task.done():
            task.result()
            return
        self._drop()
        task.cancel()
        await asyncio.wait([task])  # quick now; its error is the time-out's
        if not task.cancelled():
            task.exception()  # (retrieved: not logged as never retrieved)
        raise TimeoutError

    def _answer_s(self) -> float:
        return self.params[1] if self.params is not None else 0.0

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.pgconn.finish()  # no round trip: it may be dead
            self.connection = None

    async def close(self) -> None:
        """Finish the batches handed over (within the answer bound), then close the
        connection (a server that stops)."""
        task = self.task
        if task is not None:
            await asyncio.wait([task], timeout=(self._answer_s() or 10.0) + 1)
        self._drop()


async def close_loop(bind: Engine) -> None:
    """Close the committer of the running loop for `bind`'s database, if it has one."""
    found = committer(bind).loops.get(asyncio.get_running_loop())
    if found is not None:
        await found.close()


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
