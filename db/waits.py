"""The waits of one engine's PostgreSQL connections on the server, so that they can be released
at once when the service learns that its database stopped answering.

A black-holed database (packets lost, a stopped server or a proxy holding the connection open)
answers nothing and closes nothing: a call already waiting on its socket would wait out the
driver's answer bound (`db.base.DbTimeouts.answer_s`, 12 s), past most callers' deadlines.
Each wait of a connection (a statement, a ping of an idle pooled connection, a connect) is
registered here while it lasts; `release()` shuts down the socket of every registered wait (the
waiting thread sees the connection closed and fails at once) and refuses new waits until
`resume()`. The service's breaker (`services.core.breaker`) releases when it opens and resumes
when its health check reaches the database again (docs/service-errors.md, "Database outages").

`exempt()` marks the current thread's waits as never released nor refused: the health check's
ping, which must go on trying while the others are refused.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Generator, Iterator
from typing import Any

try:
    import psycopg
except ImportError:  # pragma: no cover  (SQLite only)
    psycopg = None  # type: ignore[assignment]

_exempt = threading.local()


class Released(psycopg.OperationalError if psycopg else Exception):  # type: ignore[misc]
    """A wait refused or cut short: the service knows its database stopped answering."""

    def __init__(self) -> None:
        super().__init__("the database stopped answering (its waits were released)")


@contextlib.contextmanager
def exempt() -> Iterator[None]:
    """The current thread's waits, while in this block, are neither released nor refused."""
    before = getattr(_exempt, "on", False)
    _exempt.on = True
    try:
        yield
    finally:
        _exempt.on = before


def _shutdown(fileno: int) -> None:
    """Shut the socket down (both ways) without closing its descriptor, which its owner still
    holds: a thread blocked reading it wakes up and reads the end of the stream."""
    with contextlib.suppress(OSError):
        sock = socket.socket(fileno=os.dup(fileno))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()


class Waits:
    """The waits in flight of one engine's connections."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[object, int] = {}  # a key per wait -> its socket's descriptor
        self.released = False
        self.releases = 0  # how many waits `release` cut short (tests, logs)

    @contextlib.contextmanager
    def waiting(self, fileno: int) -> Iterator[bool]:
        """Register a wait on the socket `fileno` for the block. Yields False, without
        registering, when the waits are released (the caller must not wait: refuse)."""
        if getattr(_exempt, "on", False):
            yield True
            return
        key = object()
        with self._lock:
            if self.released:
                refused = True
            else:
                refused = False
                self._waiting[key] = fileno
        try:
            yield not refused
        finally:
            with self._lock:
                self._waiting.pop(key, None)

    def connecting(self, gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        """Wrap a psycopg connection generator (it yields `(fileno, wait_for)` and is sent
        what is ready; its descriptor may change between steps): each step's socket is
        registered while the generator is suspended on it. A copy of the descriptor is kept, so
        that `release` never touches a number the connection closed and something reused."""
        if getattr(_exempt, "on", False):
            return (yield from gen)
        if self.released:
            gen.close()
            raise Released
        key = object()
        copies: dict[int, int] = {}  # the connection's descriptor -> our copy of it
        sent: Any = None
        try:
            while True:
                try:
                    fileno, wait_for = gen.send(sent)
                except StopIteration as stop:
                    return stop.value
                if fileno not in copies:
                    for old in copies.values():
                        os.close(old)
                    copies = {fileno: os.dup(fileno)}
                with self._lock:
                    if self.released:
                        _shutdown(copies[fileno])
                    self._waiting[key] = copies[fileno]
                sent = yield fileno, wait_for
        finally:
            with self._lock:
                self._waiting.pop(key, None)
            for copy in copies.values():
                os.close(copy)
            gen.close()

    def release(self) -> int:
        """Cut every registered wait short and refuse new ones until `resume`; how many were
        cut."""
        with self._lock:
            self.released = True
            filenos = list(self._waiting.values())
            for fileno in filenos:
                _shutdown(fileno)
            self.releases += len(filenos)
        return len(filenos)

    def resume(self) -> bool:
        """Let waits go on again; True if they were released."""
        with self._lock:
            was, self.released = self.released, False
        return was
