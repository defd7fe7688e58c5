"""The request guard and the error policy on a grpc.aio server (the model the service may move
to): async, async-generator and sync handlers, unary and streaming, behind
`limits.AsyncRequestGuard`; errors ended with `status.abort_async` / `status.abort`."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc

from services.api import limits, status
from services.core.errors import NotFound


class Matches(match_pb2_grpc.MatchServiceServicer):
    async def GetMatch(self, request, context):  # type: ignore[no-untyped-def]
        try:
            raise NotFound(f"no match with id {request.match_id}")
        except Exception as e:  # noqa: BLE001
            await status.abort_async(context, e, "GetMatch")

    def ListMatches(self, request, context):  # type: ignore[no-untyped-def]  # a sync handler
        return match_pb2.ListMatchesResponse(next_page_token=request.page_token)

    async def WatchMatch(self, request, context):  # type: ignore[no-untyped-def]
        yield match_pb2.WatchMatchResponse(match_ended=match_pb2.Match(match_id=request.match_id))


class Bots(bot_pb2_grpc.BotServiceServicer):
    async def Play(self, request_iterator, context):  # type: ignore[no-untyped-def]
        async for request in request_iterator:
            yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(
                running_matches=len(request.hello.client)))


async def scenario() -> None:
    server = grpc.aio.server(interceptors=[limits.AsyncRequestGuard()],
                             options=limits.SERVER_OPTIONS)
    match_pb2_grpc.add_MatchServiceServicer_to_server(Matches(), server)
    bot_pb2_grpc.add_BotServiceServicer_to_server(Bots(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            matches = match_pb2_grpc.MatchServiceStub(channel)
            bots = bot_pb2_grpc.BotServiceStub(channel)

            async def refused(call) -> tuple[grpc.StatusCode, str]:  # type: ignore[no-untyped-def]
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await call
                return info.value.code(), info.value.details() or ""

            # an async handler: the guard, then the handler's own error
            code, details = await refused(matches.GetMatch(match_pb2.GetMatchRequest(match_id=4)))
            assert (code, details) == (grpc.StatusCode.NOT_FOUND, "no match with id 4")
            raw = channel.unary_unary("/bummerl.v1.MatchService/GetMatch")
            code, details = await refused(raw(b"\xff\xff\xff"))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "not a valid" in details
            # a sync handler (run in the aio server's thread pool)
            answer = await matches.ListMatches(match_pb2.ListMatchesRequest(page_token="12"))
            assert answer.next_page_token == "12"
            code, details = await refused(matches.ListMatches(
                match_pb2.ListMatchesRequest(page_token="9" * 30)))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_token is 30" in details
            code, details = await refused(matches.ListMatches(
                match_pb2.ListMatchesRequest(state=99)))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("state: 99")
            # an async generator handler
            events = [e async for e in matches.WatchMatch(match_pb2.WatchMatchRequest(match_id=5))]
            assert events[0].match_ended.match_id == 5
            raw_watch = channel.unary_stream("/bummerl.v1.MatchService/WatchMatch")
            with pytest.raises(grpc.aio.AioRpcError) as info:
                [e async for e in raw_watch(b"\x08")]
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            # a bidi stream: good messages pass, a bad one ends the stream
            hello = bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="abc"))
            big = bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="c" * 201))
            stream = bots.Play(iter([hello, big]))
            first = await stream.read()
            assert first.welcome.running_matches == 3
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stream.read()
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert info.value.details() == \
                "hello.client is 201 characters long; at most 200 allowed"
    finally:
        await server.stop(0)


def test_the_guard_on_a_grpc_aio_server():
    asyncio.run(scenario())


def test_each_methods_guard_is_made_once():
    """The interceptor runs on every call: the guarded handler of a method is made once, and
    made again only for another handler of the method."""
    from types import SimpleNamespace

    interceptor = limits.AsyncRequestGuard()
    details = SimpleNamespace(method="/bummerl.v1.MatchService/ListMatches")
    handlers = [grpc.unary_unary_rpc_method_handler(Matches().ListMatches) for _ in range(2)]

    async def intercept(handler):  # type: ignore[no-untyped-def]
        async def continuation(_):  # type: ignore[no-untyped-def]
            return handler
        return await interceptor.intercept_service(continuation, details)

    first, again = asyncio.run(intercept(handlers[0])), asyncio.run(intercept(handlers[0]))
    assert first is again and first is not handlers[0]
    assert first.unary_unary is not handlers[0].unary_unary  # the guard's, around it
    other = asyncio.run(intercept(handlers[1]))
    assert other is not first and asyncio.run(intercept(handlers[1])) is other
    assert asyncio.run(intercept(None)) is None


def test_a_nested_fields_path_is_named():
    from bummerl.v1 import common_pb2

    request = bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
        match_id=3, seq=1, action=common_pb2.Action(kind=99, card="TH")))
    with pytest.raises(limits.InvalidArgument, match=r"^action\.action\.kind: 99 is not a "):
        limits.check(request)
    request.action.action.kind = common_pb2.ACTION_KIND_PLAY
    limits.check(request)  # nothing over its limits
    request.action.request_id = "x" * 65
    with pytest.raises(limits.InvalidArgument,
                       match=r"^action\.request_id is 65 characters long; at most 64"):
        limits.check(request)
