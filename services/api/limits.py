"""Limits on what one request may hold, checked before any servicer runs.

`RequestGuard` (a server interceptor) answers INVALID_ARGUMENT, with a message naming the field
and its limit, when a request cannot be parsed, has a string or a repeated field over its limit,
an enum number its enum does not define, or an id (a `..._id` or `..._ids` field) above the
largest the database stores. A request over `MAX_REQUEST_BYTES` is refused by
gRPC itself with RESOURCE_EXHAUSTED. On a stream whose handler answers each message on its own
(`answers_refusals`: the Play stream) a message that fails a check is handed to the handler as
a `RefusedRequest`, to refuse that one and go on; only bytes that cannot be parsed end it.
The plain functions still check what the values mean (a name's characters, a time control's
range); these limits keep any request, and so any error message and any log line, small.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from services.api import status
from services.core.bounds import MAX_ID
from services.core.errors import InvalidArgument, RefusedRequest, cut

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1024 * 1024  # one request message (gRPC answers RESOURCE_EXHAUSTED above)
MAX_STRING = 1000  # characters of a string field not named in FIELD_LIMITS
MAX_REPEATED = 100  # items of a repeated field not named in FIELD_LIMITS
# Tighter limits of named fields (characters of a string, items of a repeated field).
FIELD_LIMITS = {
    "bummerl.v1.RegisterBotRequest.name": 40,
    "bummerl.v1.Hello.client": 200,
    "bummerl.v1.Hello.version": 100,
    "bummerl.v1.Hello.instance": 100,
    "bummerl.v1.TurnAnswer.request_id": 64,
    "bummerl.v1.SubmitActionRequest.request_id": 64,
    "bummerl.v1.Action.card": 8,
    "bummerl.v1.Action.suit": 8,
    "bummerl.v1.ListMatchesRequest.page_token": 20,
    "bummerl.v1.CreateMatchRequest.bot_ids": 2,
    "bummerl.v1.CreateMatchRequest.bot_names": 2,
    "bummerl.v1.Drain.reason": 200,
    "bummerl.v1.ExportMatchesRequest.bot": 40,
    "bummerl.v1.ExportMatchesRequest.opponent": 40,
    "bummerl.v1.ExportMatchesRequest.version": 100,
    "bummerl.v1.ExportMatchesRequest.origin": 12,
    "bummerl.v1.ExportMatchesRequest.cursor": 40,
    "bummerl.v1.CreateMatchRequest.seat_versions": 2,
    "bummerl.v1.StartTestRequest.candidate": 141,  # a bot's name (40), "@", a version (100)
    "bummerl.v1.StartTestRequest.baseline": 141,
    "bummerl.v1.StopTestRequest.reason": 200,
    "bummerl.v1.CreateTournamentRequest.name": 80,
    "bummerl.v1.CreateTournamentRequest.bot_ids": 64,
    "bummerl.v1.CreateTournamentRequest.bot_names": 64,
    "bummerl.v1.WithdrawBotRequest.reason": 500,
    "bummerl.v1.CancelTournamentRequest.reason": 500,
    # PeopleService (services/ops/people.py checks the meaning: names 2-20, passwords 8-200)
    "bummerl.v1.RegisterPersonRequest.name": 20,
    "bummerl.v1.RegisterPersonRequest.password": 200,
    "bummerl.v1.LoginRequest.name": 20,
    "bummerl.v1.LoginRequest.password": 200,
    "bummerl.v1.StartGuestRequest.name": 20,
    "bummerl.v1.StartGameRequest.opponent": 40,
    "bummerl.v1.AcceptInviteRequest.code": 40,
    "bummerl.v1.ActRequest.action": 20,
    "bummerl.v1.ActRequest.request_id": 64,
    # HostingService (services/ops/hosting.py checks the meaning)
    "bummerl.v1.UploadVersionRequest.version": 100,
    "bummerl.v1.UploadVersionRequest.entry": 200,
    "bummerl.v1.UploadVersionRequest.archive": 1000 * 1000,  # bytes: see hosting.archive
    "bummerl.v1.UploadVersionRequest.requirements": 10000,
    "bummerl.v1.UploadVersionRequest.image": 300,
    "bummerl.v1.UploadVersionRequest.bot_name": 40,
    "bummerl.v1.ListVersionsRequest.bot_name": 40,
    "bummerl.v1.GetVersionLogsRequest.version": 100,
    "bummerl.v1.GetVersionLogsRequest.bot_name": 40,
    "bummerl.v1.StopVersionRequest.version": 100,
    "bummerl.v1.StopVersionRequest.bot_name": 40,
    "bummerl.v1.StopVersionRequest.reason": 300,
    "bummerl.v1.ResumeVersionRequest.version": 100,
    "bummerl.v1.ResumeVersionRequest.bot_name": 40,
    "bummerl.v1.ClaimBotRequest.bot_name": 40,
    "bummerl.v1.ClaimBotRequest.bot_token": 100,
}
# gRPC options of the server that enforce the request size.
SERVER_OPTIONS = [("grpc.max_receive_message_length", MAX_REQUEST_BYTES)]


def limit_of(field: FieldDescriptor) -> int:
    """The most items of a repeated field, else the most characters (bytes) of a string."""
    return FIELD_LIMITS.get(field.full_name, MAX_REPEATED if field.is_repeated else MAX_STRING)


@dataclass(frozen=True)
class _Rule:
    """What to check of one field (worked out once per field: requests are checked on the
    hot path)."""

    repeated: bool
    items: int  # the most items (repeated fields)
    size: int  # the most characters or bytes of a string or bytes field; 0: not one
    enum: frozenset[int] | None  # the numbers an enum field may hold
    most: int | None  # the largest value of an id field
    message: bool  # a message field: checked in turn
    skip: bool  # nothing to check: a plain number or flag, or a map (no request has one)


_rules: dict[FieldDescriptor, _Rule] = {}
_INTEGERS = (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_UINT64,
             FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SINT32)


def _rule(field: FieldDescriptor) -> _Rule:
    rule = _rules.get(field)
    if rule is None:
        textual = field.type in (field.TYPE_STRING, field.TYPE_BYTES)
        enum = frozenset(field.enum_type.values_by_number) if field.enum_type else None
        most = (MAX_ID if field.type in _INTEGERS and field.name.endswith(("_id", "_ids"))
                else None)
        kind = field.message_type
        message = kind is not None
        plain = not (field.is_repeated or textual or enum is not None or most is not None
                     or message)  # a number or a flag: nothing to check
        rule = _rules[field] = _Rule(
            repeated=bool(field.is_repeated), items=limit_of(field),
            size=(MAX_STRING if field.is_repeated else limit_of(field)) if textual else 0,
            enum=enum, most=most, message=message,
            skip=plain or (kind is not None and kind.GetOptions().map_entry))
    return rule


def check(message: Message) -> None:
    """Raise InvalidArgument for the first field of `message` over its limit, or holding an
    enum number its enum does not define (the message names the field's path, and so does its
    `field` detail: e.g. "action.match_id")."""
    for field, value in message.ListFields():
        rule = _rules.get(field) or _rule(field)
        if rule.skip:
            continue
        values = value if rule.repeated else (value,)
        name = field.name
        if rule.repeated and len(values) > rule.items:
            raise InvalidArgument(
                f"{name} has {len(values)} items; at most {rule.items} allowed", field=name)
        for item in values:
            if rule.size and len(item) > rule.size:
                unit = "characters" if field.type == field.TYPE_STRING else "bytes"
                raise InvalidArgument(f"{name} is {len(item)} {unit} long; "
                                      f"at most {rule.size} allowed", field=name)
            if rule.enum is not None and item not in rule.enum:
                enum = field.enum_type
                assert enum is not None
                known = ", ".join(f"{v.name}={v.number}" for v in enum.values)
                raise InvalidArgument(f"{name}: {item} is not a {enum.full_name} "
                                      f"value ({cut(known, 300)})", field=name)
            if rule.most is not None and item > rule.most:
                raise InvalidArgument(f"{name}: {item} is not a valid id (ids are "
                                      f"at most {rule.most})", field=name)
            if rule.message:
                try:
                    check(item)  # the path is made only for an error: a request is checked
                except InvalidArgument as e:  # on the hot path, and nearly always passes
                    raise InvalidArgument(f"{name}.{e}",
                                          field=f"{name}.{e.details['field']}") from None


class Unparseable:
    """A request whose bytes are not a valid message of its type."""

    def __init__(self, type_name: str, size: int) -> None:
        self.type_name = type_name
        self.size = size

    def error(self) -> InvalidArgument:
        return InvalidArgument(
            f"the request ({self.size} bytes) is not a valid {self.type_name} message")


def _safe(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """`deserialize`, giving an `Unparseable` instead of failing (gRPC would log a traceback
    and answer INTERNAL)."""
    if deserialize is None:
        return None
    type_name = getattr(getattr(deserialize, "__self__", None), "DESCRIPTOR", None)
    name = type_name.full_name if type_name is not None else "request"

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception:  # noqa: BLE001  (answered with INVALID_ARGUMENT by the guard)
            return Unparseable(name, len(data))

    return parse


def _refusal(request: Any) -> InvalidArgument | None:
    if isinstance(request, Unparseable):
        return request.error()
    if isinstance(request, Message):
        try:
            check(request)
        except InvalidArgument as e:
            return e
    return None


def _checked(requests: Iterator[Any], context: grpc.ServicerContext,
             where: str) -> Iterator[Any]:
    for request in requests:
        refusal = _refusal(request)
        if refusal is not None:
            status.abort(context, refusal, where)
        yield request


async def _checked_async(requests: AsyncIterator[Any], context: Any,
                         where: str, abort: bool = True, answers: bool = False
                         ) -> AsyncIterator[Any]:
    """The requests, checked; a refused one aborts the call, or with `abort` false is raised
    to the reader (a bidirectional handler reads in a task of its own while its writer may be
    sending: the handler aborts from the writer, as two operations at once would fail). With
    `answers` (a handler marked with `answers_refusals`), a message that parses but
    fails a check is handed on as a `RefusedRequest`, and only one that cannot be parsed
    at all is raised."""
    async for request in requests:
        refusal = _refusal(request)
        if refusal is not None:
            if answers and not isinstance(request, Unparseable):
                yield RefusedRequest(request, refusal)
                continue
            if not abort:
                raise refusal
            await status.abort_async(context, refusal, where)
        yield request


def answers_refusals(method: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a bidirectional (async generator) handler that answers each message on its own:
    a message that fails a check reaches it as a `RefusedRequest` (it refuses that one and the
    stream goes on: the Play stream), instead of ending the stream. Only bytes that are not a
    message at all end it. Unmarked handlers keep the stream's end."""
    method.answers_refusals = True  # type: ignore[attr-defined]
    return method


def guard(handler: grpc.RpcMethodHandler, where: str) -> grpc.RpcMethodHandler:
    """`handler` with every request parsed safely and checked against the limits (sync
    behaviours, and the async ones of a grpc.aio server)."""
    changes: dict[str, Any] = {"request_deserializer": _safe(handler.request_deserializer)}
    kind = next(k for k in ("unary_unary", "unary_stream", "stream_unary", "stream_stream")
                if getattr(handler, k) is not None)
    behavior = getattr(handler, kind)
    single = kind.startswith("unary")
    if inspect.iscoroutinefunction(behavior) and single:
        async def call(request: Any, context: Any) -> Any:
            refusal = _refusal(request)
            if refusal is not None:
                await status.abort_async(context, refusal, where)
            return await behavior(request, context)
    elif inspect.isasyncgenfunction(behavior) and single:
        async def call(request: Any, context: Any) -> Any:  # type: ignore[misc]
            refusal = _refusal(request)
            if refusal is not None:
                await status.abort_async(context, refusal, where)
            async for response in behavior(request, context):
                yield response
    elif single:
        def call(request: Any, context: Any) -> Any:  # type: ignore[misc]
            refusal = _refusal(request)
            if refusal is not None:
                status.abort(context, refusal, where)
            return behavior(request, context)
    elif inspect.isasyncgenfunction(behavior):
        async def call(requests: Any, context: Any) -> Any:  # type: ignore[misc]
            checked = _checked_async(requests, context, where, abort=False,
                                     answers=getattr(behavior, "answers_refusals", False))
            try:
                async for response in behavior(checked, context):
                    yield response
            except InvalidArgument as e:  # a refusal the handler let through: abort here
                await status.abort_async(context, e, where)
    elif inspect.iscoroutinefunction(behavior):
        async def call(requests: Any, context: Any) -> Any:  # type: ignore[misc]
            return await behavior(_checked_async(requests, context, where), context)
    else:
        def call(requests: Any, context: Any) -> Any:  # type: ignore[misc]
            return behavior(_checked(requests, context, where), context)
    return handler._replace(**{**changes, kind: call})  # type: ignore[attr-defined,no-any-return]


class _Guarded:
    """`guard` of each method's handler, made once: a server's handler of a method is the same
    object on every call (interceptors run per call, a Play stream's start included)."""

    def __init__(self) -> None:
        self.made: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def __call__(self, handler: grpc.RpcMethodHandler | None, method: str
                 ) -> grpc.RpcMethodHandler | None:
        if handler is None:
            return None
        made = self.made.get(method)
        if made is None or made[0] is not handler:
            made = self.made[method] = (handler, guard(handler, method.rsplit("/", 1)[-1]))
        return made[1]


class RequestGuard(grpc.ServerInterceptor):
    """The server interceptor that applies `guard` to every method (a grpc.server)."""

    def __init__(self) -> None:
        self.guarded = _Guarded()

    def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        method = handler_call_details.method
        return self.guarded(continuation(handler_call_details), method)


class AsyncRequestGuard(grpc.aio.ServerInterceptor):
    """The same for a grpc.aio.server (`interceptors=[AsyncRequestGuard()]`)."""

    def __init__(self) -> None:
        self.guarded = _Guarded()

    async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        method = handler_call_details.method
        return self.guarded(await continuation(handler_call_details), method)
