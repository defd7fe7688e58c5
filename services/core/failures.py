"""The error policy of the service: what a client is told of any exception of a call (a status
code's name and a bounded, safe message), and the log line it makes
(docs/service-errors.md). `services.api.status` turns a `Failure` into a gRPC
status.

- A `ServiceError` keeps its code, rule id and message (cut to `MAX_MESSAGE` characters).
- The database being unreachable, too slow or out of connections is UNAVAILABLE (safe to
  retry), with a fixed message: never the driver's text, host or port.
- A conflicting concurrent write is ABORTED; a value the database cannot store is
  INVALID_ARGUMENT (the plain functions check ranges first; this is the safety net).
- Anything else is a bug: INTERNAL with a reference number, its traceback logged under it.

Logging: client errors and outages write one short line each, bugs a traceback; every kind is
rate-limited, so a flood of bad requests cannot flood the log.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field

from sqlalchemy import exc as sa

from services.core.errors import MAX_QUOTE, ServiceError, cut

log = logging.getLogger("bummerl.errors")

UNAVAILABLE_MESSAGE = "the database is unavailable or too slow right now: retry shortly"
BUSY_MESSAGE = "the service is busy (no database connection free in time): retry shortly"
CLIENT_CODES = frozenset({
    "INVALID_ARGUMENT", "FAILED_PRECONDITION", "NOT_FOUND", "ALREADY_EXISTS",
    "UNAUTHENTICATED", "PERMISSION_DENIED", "ABORTED", "RESOURCE_EXHAUSTED", "OUT_OF_RANGE",
})


@dataclass(frozen=True)
class Failure:
    """What a client is told about an exception."""

    code: str  # a gRPC status code's name (e.g. "INVALID_ARGUMENT")
    message: str
    rule: str | None = None
    details: dict[str, str] = field(default_factory=dict)



_references = itertools.count(1)


def failure_of(error: BaseException, where: str = "") -> Failure:
    """The code and safe message for `error` (and its log line, see the module docstring)."""
    if isinstance(error, ServiceError):
        failure = Failure(error.code, cut(error.message), error.rule,
                          {k: cut(str(v), MAX_QUOTE) for k, v in error.details.items()})
        if error.code != "INTERNAL":
            line = CLIENT_LOG if error.code in CLIENT_CODES else OUTAGE_LOG
            line.emit(logging.INFO, "%s: %s %s", where, error.code, cut(error.message, 200))
            return failure
    elif conflict(error):
        CLIENT_LOG.emit(logging.INFO, "%s: ABORTED (%s)", where, _first_line(error))
        return Failure("ABORTED", "a concurrent change conflicted with this one: retry")
    elif isinstance(error, sa.TimeoutError):  # the pool had no free connection in time
        OUTAGE_LOG.emit(logging.WARNING, "%s: UNAVAILABLE (database pool timeout)", where)
        return Failure("UNAVAILABLE", BUSY_MESSAGE)
    elif unavailable(error):
        OUTAGE_LOG.emit(logging.WARNING, "%s: UNAVAILABLE (%s)", where, _first_line(error))
        return Failure("UNAVAILABLE", UNAVAILABLE_MESSAGE)
    elif isinstance(error, sa.IntegrityError):
        CLIENT_LOG.emit(logging.INFO, "%s: ABORTED (%s)", where, _first_line(error))
        return Failure("ABORTED", "a concurrent change conflicted with this one: retry")
    elif isinstance(error, sa.DataError | OverflowError):
        CLIENT_LOG.emit(logging.INFO, "%s: INVALID_ARGUMENT (%s)", where, _first_line(error))
        return Failure("INVALID_ARGUMENT", "a value of the request is out of the range the "
                       "service can store")
    reference = next(_references)
    BUG_LOG.emit(logging.ERROR, "%s: internal error #%d", where, reference, exc=error)
    return Failure("INTERNAL", f"internal error #{reference} (logged by the service); "
                   "retry later or report it")


def conflict(error: BaseException) -> bool:
    """A transaction lost to a concurrent one (PostgreSQL: serialization failure, deadlock)."""
    try:
        from psycopg import errors
    except ImportError:  # pragma: no cover
        return False
    cause = getattr(error, "orig", error)
    return isinstance(cause, errors.SerializationFailure | errors.DeadlockDetected)


def unavailable(error: BaseException) -> bool:
    """The database cannot be reached, dropped the connection or did not answer in time."""
    if isinstance(error, sa.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, sa.OperationalError | sa.InterfaceError | sa.DisconnectionError):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover
        psycopg = None  # type: ignore[assignment]
    if psycopg is not None and isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        return True
    return isinstance(error, sqlite3.OperationalError | ConnectionError)


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error).strip().splitlines()
    return cut(f"{type(error).__name__}: {text[0] if text else ''}", 200)


class RateLimitedLog:
    """At most `burst` lines per `window` seconds; the next line says how many were dropped."""

    def __init__(self, burst: int, window: float) -> None:
        self.burst = burst
        self.window = window
        self.lock = threading.Lock()
        self.start = float("-inf")
        self.count = 0
        self.dropped = 0

    def emit(self, level: int, message: str, *args: object,
             exc: BaseException | None = None) -> None:
        if not log.isEnabledFor(level):
            return
        now = time.monotonic()
        with self.lock:
            if now - self.start >= self.window:
                self.start, self.count = now, 0
            if self.count >= self.burst:
                self.dropped += 1
                return
            self.count += 1
            dropped, self.dropped = self.dropped, 0
        if dropped:
            message += f" ({dropped} similar lines dropped)"
        log.log(level, message, *args,
                exc_info=(type(exc), exc, exc.__traceback__) if exc is not None else None)


CLIENT_LOG = RateLimitedLog(burst=20, window=10.0)
OUTAGE_LOG = RateLimitedLog(burst=3, window=10.0)
BUG_LOG = RateLimitedLog(burst=5, window=60.0)


def log_failure(what: str, error: BaseException) -> None:
    """Log an exception of a background loop (referee, heartbeat) by the same policy."""
    failure_of(error, what)
