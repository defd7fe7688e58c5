"""The database breaker: once the service knows its database is unreachable, the calls that need
it fail at once with UNAVAILABLE, instead of each waiting out its own bounds (the connect and
answer time-outs of `db.base.DbTimeouts`, seconds each) for as long as the outage lasts.

One breaker per database engine (`of`). The health check (`services.api.health`) opens it when
the database does not answer its ping in time, and the first ping that succeeds closes it;
while it is open the health check pings every `RECHECK_S`. What is refused while it is open,
and how the Play streams are told (once), is in docs/service-errors.md ("Database outages").

When it opens it also releases the engine's waits in flight (`db.waits`): a call already waiting
on a socket of the black-holed database fails then with UNAVAILABLE, instead of at its answer
bound; new waits are refused until the health check reaches the database again (`resume`).
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from db.base import waits_of
from db.waits import Waits
from services.core.connections import bound_engine
from services.core.errors import Unavailable
from services.core.failures import UNAVAILABLE_MESSAGE

RECHECK_S = 0.5  # the health check's interval while the breaker is open


class Breaker:
    """Open while the database is known to be unreachable. `listen` callbacks hear each change
    (True: opened, False: closed), on the thread that made it."""

    def __init__(self) -> None:
        self.opened_at: float | None = None  # time.monotonic() when it opened
        self.openings = 0  # how many times it opened (a change means: an outage came between)
        self._lock = threading.Lock()
        # by a key of each `listen`: one stream's stop is O(1) with thousands listening
        self._listeners: dict[object, Callable[[bool], None]] = {}

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def steady(self, openings: int) -> bool:
        """Closed, and not opened since it had opened `openings` times."""
        return self.opened_at is None and self.openings == openings

    def check(self) -> None:
        """Raise Unavailable (the message of any database outage) while open."""
        if self.opened_at is not None:
            raise Unavailable(UNAVAILABLE_MESSAGE)

    def open(self) -> bool:
        """Open it; True if it was closed."""
        return self._set(True)

    def close(self) -> bool:
        """Close it; True if it was open."""
        return self._set(False)

    def _set(self, opened: bool) -> bool:
        with self._lock:
            if self.is_open == opened:
                return False
            self.opened_at = time.monotonic() if opened else None
            self.openings += opened
            listeners = list(self._listeners.values())
        for listener in listeners:
            listener(opened)
        return True

    def listen(self, callback: Callable[[bool], None]) -> Callable[[], None]:
        """Call `callback(opened)` on each change; returns the function that stops it."""
        key = object()
        with self._lock:
            self._listeners[key] = callback

        def stop() -> None:
            with self._lock:
                self._listeners.pop(key, None)

        return stop


_breakers: weakref.WeakKeyDictionary[Engine, Breaker] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def of(bind: Engine) -> Breaker:
    """The breaker of the database `bind` reaches (made on first use). Opening it releases the
    waits of `bind`'s connections (`db.waits`); closing it lets them go on."""
    breaker = _breakers.get(bind)
    if breaker is None:
        with _guard:
            breaker = _breakers.get(bind)
            if breaker is None:
                breaker = _breakers[bind] = Breaker()
                waits = waits_of(bind)
                if waits is not None:
                    breaker.listen(functools.partial(_release_or_resume, waits))
    return breaker


def _release_or_resume(waits: Waits, opened: bool) -> None:
    if opened:
        waits.release()
    else:
        waits.resume()


def resume(bind: Engine) -> None:
    """Let `bind`'s connections wait on the database again before the breaker closes (the
    health check reached it, and the server's recovery needs the database)."""
    waits = waits_of(bind)
    if waits is not None:
        waits.resume()


def of_sessions(sessions: sessionmaker[Session] | None) -> Breaker:
    """The breaker of the session factory's database (the configured one when None)."""
    return of(bound_engine(sessions))
