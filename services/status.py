"""The error policy of the service: any exception of a call becomes a gRPC status with the right
code and a bounded, safe message (docs/service.md, "Errors and limits").

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

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from sqlalchemy import exc as sa

from services.errors import ServiceError

log = logging.getLogger("bummerl.errors")

MAX_QUOTE = 100  # characters of a client's input quoted in a message
MAX_MESSAGE = 500  # characters of any message a client sees (fits the 16 KiB trailers)
UNAVAILABLE_MESSAGE = "the database is unavailable or too slow right now: retry shortly"
BUSY_MESSAGE = "the service is busy (no database connection free in time): retry shortly"
CLIENT_CODES = frozenset({
    "INVALID_ARGUMENT", "FAILED_PRECONDITION", "NOT_FOUND", "ALREADY_EXISTS",
    "UNAUTHENTICATED", "PERMISSION_DENIED", "ABORTED", "RESOURCE_EXHAUSTED", "OUT_OF_RANGE",
})


def cut(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text`, at most `limit` characters: a longer text is cut and ends with '…'."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(value: object, limit: int = MAX_QUOTE) -> str:
    """A client's input as quoted in a message: its repr, at most `limit` characters ('…' and
    the full length when cut)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    try:
        size = f" ({len(value)} {'characters' if isinstance(value, str) else 'items'})"  # type: ignore[arg-type]
    except TypeError:
        size = ""
    return text[: limit - 1] + "…" + size


@dataclass(frozen=True)
class Failure:
    """What a client is told about an exception."""

    code: str  # a grpc.StatusCode name
    message: str
    rule: str | None = None
    details: dict[str, str] = field(default_factory=dict)

    @property
    def status_code(self) -> grpc.StatusCode:
        return getattr(grpc.StatusCode, self.code)  # type: ignore[no-any-return]


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


def rich_status(failure: Failure | ServiceError) -> grpc.Status:
    """The status of `failure`, with a google.rpc.Status detail (ErrorInfo; PreconditionFailure
    naming the rule) and the rule id also in the `bummerl-rule` trailing metadata."""
    if isinstance(failure, ServiceError):
        failure = failure_of(failure)
    metadata = dict(failure.details)
    if failure.rule:
        metadata["rule"] = failure.rule
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(
        reason=failure.code, domain="bummerl.v1", metadata=metadata))
    details = [info]
    if failure.rule:
        violation = any_pb2.Any()
        violation.Pack(error_details_pb2.PreconditionFailure(violations=[
            error_details_pb2.PreconditionFailure.Violation(
                type="RULE", subject=failure.rule, description=failure.message)]))
        details.append(violation)
    status = rpc_status.to_status(status_pb2.Status(
        code=failure.status_code.value[0], message=failure.message, details=details))
    if failure.rule:
        trailing = (*status.trailing_metadata, ("bummerl-rule", failure.rule))
        status = status._replace(trailing_metadata=trailing)  # type: ignore[attr-defined]
    return status


def aborted(context: object, error: BaseException) -> bool:
    """`error` is the call being aborted already (context.abort raises to end the call)."""
    if isinstance(error, grpc.aio.AbortError):
        return True
    state = getattr(context, "_state", None)  # the sync server's context
    return bool(getattr(state, "aborted", False))


def abort(context: grpc.ServicerContext, error: BaseException, where: str = "") -> None:
    """End the call with the status of `error` (re-raises it if the call is aborted already).
    For a sync handler, also of a grpc.aio server; async handlers use `abort_async`."""
    if aborted(context, error):
        raise error
    status = rich_status(failure_of(error, where))
    if hasattr(context, "abort_with_status"):
        context.abort_with_status(status)
    else:  # grpc.aio's context of a sync handler
        context.abort(status.code, status.details, status.trailing_metadata)  # type: ignore[call-arg]


async def abort_async(context: grpc.aio.ServicerContext, error: BaseException,  # type: ignore[type-arg]
                      where: str = "") -> None:
    """`abort` for an async handler of a grpc.aio server."""
    if aborted(context, error):
        raise error
    status = rich_status(failure_of(error, where))
    await context.abort(status.code, status.details, status.trailing_metadata)


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
