"""The gRPC face of the error policy (`services.core.failures`): a failure as a rich gRPC
status (google.rpc details, the rule id in trailing metadata), and ending a call with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.core.errors import ServiceError
from services.core.failures import Failure, failure_of


def status_code(failure: Failure) -> grpc.StatusCode:
    """The gRPC status code of `failure`."""
    return getattr(grpc.StatusCode, failure.code)  # type: ignore[no-any-return]


def rich_status(failure: Failure | ServiceError) -> grpc.Status:
    """The status of `failure`, with a google.rpc.Status detail (ErrorInfo; PreconditionFailure
    naming the rule; BadRequest naming the field that failed a check) and the rule id also in
    the `bummerl-rule` trailing metadata."""
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
    if failure.details.get("field"):
        bad = any_pb2.Any()
        bad.Pack(error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(
                field=failure.details["field"], description=failure.message)]))
        details.append(bad)
    status = rpc_status.to_status(status_pb2.Status(
        code=status_code(failure).value[0], message=failure.message, details=details))
    if failure.rule:
        trailing = (*status.trailing_metadata, ("bummerl-rule", failure.rule))
        status = status._replace(trailing_metadata=trailing)  # type: ignore[attr-defined]
    if failure.details.get("retry_after"):  # seconds a RESOURCE_EXHAUSTED asks to wait
        trailing = (*status.trailing_metadata, ("retry-after", failure.details["retry_after"]))
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


async def refuse_stream(context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
                        requests: AsyncIterator[Any], error: BaseException,
                        where: str, wait_s: float) -> None:
    """End a bidirectional call that is refused before it begins (no token, a suspended bot,
    over the stream cap, the database down) with `error`'s status, once the client's first
    message has arrived (or it half-closed, or `wait_s` passed: `BUMMERL_REFUSED_WAIT_S`).

    A grpc.aio client whose write of its first message is still under way when the call's
    status arrives reads INTERNAL ("Internal error from Core") instead of the status: under a
    storm of refused streams, some 3 in 100 did. A client sends its first message at once
    (Play: the Hello), so waiting for it costs nothing, and then its write is done. A client
    whose first write comes later than `wait_s` (its process stalled that long) may still read
    INTERNAL: the status cannot wait for ever on a client that never writes."""
    with contextlib.suppress(Exception):  # (a cancelled call ends the task: not caught here)
        await asyncio.wait_for(anext(aiter(requests)), wait_s)
    await abort_async(context, error, where)
