"""The error policy over a real gRPC server: bad values and oversized fields are INVALID_ARGUMENT
with a bounded message naming the field and its limit (never UNKNOWN or RESOURCE_EXHAUSTED from
an oversized trailer), unparseable payloads are INVALID_ARGUMENT with one short log line."""

from __future__ import annotations

import logging
import time

import grpc
import pytest
from bummerl.v1 import bot_pb2, common_pb2, match_pb2
from servicekit import OPERATOR, auth, fresh_database, running_service

from services.api import limits
from services.core import bounds
from services.core import matches as plain
from services.core.errors import MAX_MESSAGE

INT64_MAX = 2**63 - 1


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


@pytest.fixture
def sqlite_service(request, tmp_path):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def refused(call, *args, **kwargs) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call(*args, **kwargs)
    details = info.value.details() or ""
    assert len(details) <= MAX_MESSAGE, "a message over the bound"
    return info.value.code(), details


def create(service, *, bot_ids=None, **time_control):
    a, _ = service.register("alice")
    b, _ = service.register("bob")
    return service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_ids=bot_ids if bot_ids is not None else [a, b],
        time_control=match_pb2.TimeControl(**time_control)), metadata=auth(OPERATOR))


@pytest.mark.parametrize("move_ms", [10**15, INT64_MAX, -1])
def test_out_of_range_time_control_is_invalid_argument(service, move_ms):
    code, details = refused(create, service, move_ms=move_ms)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "time_control.move_ms must be 200-86400000" in details and str(move_ms) in details


def test_out_of_range_bank_and_illegal_limit(sqlite_service):
    code, details = refused(create, sqlite_service, bank_ms=INT64_MAX)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "time_control.bank_ms" in details
    sqlite_service.channel.close()  # (the bots exist now: a plain call for the next one)
    with pytest.raises(Exception, match="time_control.max_illegal must be 1-1000"):
        plain.create_match([1, 2], max_illegal=10**6, sessions=sqlite_service.sessions,
                           config=sqlite_service.config)


@pytest.mark.parametrize("token", ["9" * 20, "0", "-5", " 12", "1_000", "１２", "12abc"])
def test_bad_page_token_is_invalid_argument(service, token):
    code, details = refused(service.matches.ListMatches,
                            match_pb2.ListMatchesRequest(page_token=token))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_token" in details


@pytest.mark.parametrize("size", [101, -1, 2**31 - 1])
def test_bad_page_size_names_its_range(sqlite_service, size):
    code, details = refused(sqlite_service.matches.ListMatches,
                            match_pb2.ListMatchesRequest(page_size=size))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == f"page_size must be 1-100 (0: 20), not {size}"


def test_thirty_nines_page_token_names_the_limit(service):
    code, details = refused(service.matches.ListMatches,
                            match_pb2.ListMatchesRequest(page_token="9" * 30))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token is 30 characters long; at most 20 allowed" in details


def test_huge_name_is_invalid_argument_with_a_short_message(service):
    code, details = refused(service.bots.RegisterBot,
                            bot_pb2.RegisterBotRequest(name="n" * 20_000), metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == "name is 20000 characters long; at most 40 allowed"
    # a name under the field limit but not a valid name: the name is quoted, cut to ~100
    code, details = refused(service.bots.RegisterBot,
                            bot_pb2.RegisterBotRequest(name="é" * 40), metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "bad bot name" in details


def test_five_thousand_bot_ids_is_invalid_argument(service):
    code, details = refused(create, service, bot_ids=list(range(1, 5001)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == "bot_ids has 5000 items; at most 2 allowed"


def test_an_id_beyond_the_databases_keys_is_invalid_argument_naming_it(service):
    """The protos' ids are int64, the database's keys 32-bit: a larger id is refused by the
    guard, naming the field, before any query (it was a generic 'out of range' from the
    database, or a stream's end); an id in range that nobody has stays NOT_FOUND."""
    a, token = service.register("erin")
    huge = bounds.MAX_ID + 1
    code, details = refused(create, service, bot_ids=[a, huge])
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == f"bot_ids: {huge} is not a valid id (ids are at most {bounds.MAX_ID})"
    for call, request in (
            (service.matches.GetMatch, match_pb2.GetMatchRequest(match_id=INT64_MAX)),
            (service.matches.SubmitAction, match_pb2.SubmitActionRequest(
                match_id=huge, seat=0, action=common_pb2.Action(
                    kind=common_pb2.ACTION_KIND_PLAY, card="TH")))):
        code, details = refused(call, request, metadata=auth(token))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("match_id: ")
    code, details = refused(service.matches.GetMatch,
                            match_pb2.GetMatchRequest(match_id=bounds.MAX_ID))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = refused(service.matches.CreateMatch, match_pb2.CreateMatchRequest(
        bot_ids=[a, bounds.MAX_ID]), metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.NOT_FOUND


def test_huge_card_is_invalid_argument(service):
    _, token = service.register("carol")
    request = match_pb2.SubmitActionRequest(match_id=1, seat=0, action=common_pb2.Action(
        kind=common_pb2.ACTION_KIND_PLAY, card="X" * 100_000), request_id="r" * 64)
    code, details = refused(service.matches.SubmitAction, request, metadata=auth(token))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == "action.card is 100000 characters long; at most 8 allowed"
    request.request_id = "r" * 65
    request.action.card = "TH"
    code, details = refused(service.matches.SubmitAction, request, metadata=auth(token))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "request_id is 65 characters" in details


def test_a_field_check_names_the_field_in_the_rich_status(sqlite_service):
    """The field that failed a check is in the rich status too: ErrorInfo's `field` and a
    google.rpc.BadRequest field violation, for tools that read them."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    _, token = sqlite_service.register("fred")
    request = match_pb2.SubmitActionRequest(match_id=1, seat=0, action=common_pb2.Action(
        kind=common_pb2.ACTION_KIND_PLAY, card="X" * 9))
    with pytest.raises(grpc.RpcError) as info:
        sqlite_service.matches.SubmitAction(request, metadata=auth(token))
    status = rpc_status.from_call(info.value)
    assert status is not None
    error_info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    assert status.details[0].Unpack(error_info) and status.details[1].Unpack(bad)
    assert error_info.metadata["field"] == "action.card"
    (violation,) = bad.field_violations
    assert violation.field == "action.card"
    assert violation.description == "action.card is 9 characters long; at most 8 allowed"


def test_unknown_enum_number_is_invalid_argument(sqlite_service):
    code, details = refused(sqlite_service.matches.ListMatches,
                            match_pb2.ListMatchesRequest(state=99))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("state: 99 is not a bummerl.v1.MatchState value")
    request = match_pb2.CreateMatchRequest(bot_ids=[1, 2], profile=7)
    code, details = refused(sqlite_service.matches.CreateMatch, request, metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("profile: 7")


def test_oversized_request_is_resource_exhausted(sqlite_service):
    name = "n" * (limits.MAX_REQUEST_BYTES + 10)
    code, _ = refused(sqlite_service.bots.RegisterBot, bot_pb2.RegisterBotRequest(name=name),
                      metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_oversized_metadata_is_resource_exhausted(sqlite_service):
    request = match_pb2.GetObservationRequest(match_id=1)
    code, details = refused(sqlite_service.matches.GetObservation, request,
                            metadata=auth("x" * 9000))
    assert code == grpc.StatusCode.UNAUTHENTICATED and "x" * 20 not in details
    code, _ = refused(sqlite_service.matches.GetObservation, request, metadata=auth("x" * 20_000))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED


def raw_unary(channel: grpc.Channel, method: str):
    return channel.unary_unary(method, request_serializer=None, response_deserializer=None)


def test_garbage_bytes_are_invalid_argument_and_log_one_short_line(sqlite_service, caplog):
    caplog.set_level(logging.INFO)
    call = raw_unary(sqlite_service.channel, "/bummerl.v1.MatchService/GetMatch")
    for _ in range(3):
        code, details = refused(call, b"\xff\xff\xff\xff garbage")
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert details == "the request (12 bytes) is not a valid bummerl.v1.GetMatchRequest message"
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    lines = [r.getMessage() for r in caplog.records if r.name == "bummerl.errors"]
    assert len(lines) == 3 and all(len(line) < 200 for line in lines)


def test_garbage_on_the_play_stream_is_invalid_argument(sqlite_service, caplog):
    _, token = sqlite_service.register("dora")
    play = sqlite_service.channel.stream_stream(
        "/bummerl.v1.BotService/Play", request_serializer=None, response_deserializer=None)
    responses = play(iter([bot_pb2.PlayRequest(hello=bot_pb2.Hello()).SerializeToString(),
                           b"\x12\xff\xff"]), metadata=auth(token), timeout=20)
    with pytest.raises(grpc.RpcError) as info:
        for _ in responses:
            pass
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid bummerl.v1.PlayRequest" in (info.value.details() or "")
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


def test_health_and_reflection_still_answer(sqlite_service):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    health = health_pb2_grpc.HealthStub(sqlite_service.channel)
    assert health.Check(health_pb2.HealthCheckRequest()).status == \
        health_pb2.HealthCheckResponse.SERVING


def two_matches(service) -> tuple[int, str, int, match_pb2.Match]:
    """Bots ann and ben in two matches of the same deal, seats swapped, so ann is to act in
    exactly one: (ann's id, her token, ben's id, the match where she is to act)."""
    a, a_token = service.register("ann")
    b, _ = service.register("ben")
    made = [plain.create_match(ids, seed=5, sessions=service.sessions, config=service.config)
            for ids in ([a, b], [b, a])]
    mine = next(m for m in made if (m.bot0_id, m.bot1_id)[m.to_act] == a)
    return a, a_token, b, service.matches.GetMatch(
        match_pb2.GetMatchRequest(match_id=mine.id)).match


def test_a_malformed_answer_is_refused_naming_its_field_and_the_stream_goes_on(service):
    """Issue 25, item 1: an answer that fails a field check (an id out of range, a string over
    its limit, an unknown enum number) is refused with an ActionRejected naming the field, like
    any other refused answer; the stream, and so every other match of the bot, goes on."""
    from bummerl import wire
    from serviceprocs import PlayStream

    _, token, _, match = two_matches(service)
    stream = PlayStream(service.channel, token)
    try:
        turn = stream.next("turn").turn
        assert turn.match_id == match.match_id
        legal = turn.observation.legal_actions[0]
        cases = [
            (bot_pb2.TurnAnswer(match_id=10**15, seq=turn.seq, action=legal), "action.match_id",
             f"action.match_id: {10**15} is not a valid id (ids are at most {bounds.MAX_ID})"),
            (bot_pb2.TurnAnswer(match_id=turn.match_id, seq=turn.seq, action=legal,
                                request_id="r" * 65), "action.request_id",
             "action.request_id is 65 characters long; at most 64 allowed"),
            (bot_pb2.TurnAnswer(match_id=turn.match_id, seq=turn.seq, action=common_pb2.Action(
                kind=99, card="TH")), "action.action.kind",
             "action.action.kind: 99 is not a bummerl.v1.ActionKind value"),
            (bot_pb2.TurnAnswer(match_id=turn.match_id, seq=turn.seq, action=common_pb2.Action(
                kind=common_pb2.ACTION_KIND_PLAY, card="X" * 100)), "action.action.card",
             "action.action.card is 100 characters long; at most 8 allowed"),
        ]
        for answer, field, message in cases:
            stream.requests.put(bot_pb2.PlayRequest(action=answer))
            rejected = stream.next("rejected").rejected
            assert (rejected.code, rejected.field) == ("INVALID_ARGUMENT", field), rejected
            assert rejected.message.startswith(message), rejected.message
            assert (rejected.match_id, rejected.seq) == (answer.match_id, answer.seq)
            if answer.match_id == turn.match_id:  # its turn comes again, to answer properly
                assert stream.next("turn").turn.seq == turn.seq
        stream.answer(turn.match_id, turn.seq, wire.action_from_pb(legal), request_id="ok")
        deadline = time.monotonic() + 10
        while service.matches.GetMatch(match_pb2.GetMatchRequest(
                match_id=turn.match_id)).match.seq == turn.seq:
            assert time.monotonic() < deadline, "the good answer after the bad ones was lost"
            time.sleep(0.02)
    finally:
        stream.close()


def test_a_hello_that_fails_a_check_is_ignored_with_a_notice(service):
    """A Hello over a limit is ignored, and the bot told so by a Notice naming the field; the
    stream plays on (its pending turn comes, and an answer to it is applied)."""
    from bummerl import wire
    from serviceprocs import PlayStream

    _, token, _, match = two_matches(service)
    stream = PlayStream(service.channel, token)  # (sends nothing itself: the Hello is ours)
    try:
        stream.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="c" * 300)))
        seen: dict[str, bot_pb2.PlayResponse] = {}
        while not {"notice", "turn"} <= set(seen):
            item = stream.responses.get(timeout=10)
            assert not isinstance(item, grpc.RpcError), item
            seen.setdefault(item.WhichOneof("message"), item)
        notice = seen["notice"].notice
        assert notice.kind == bot_pb2.NOTICE_KIND_HELLO_REFUSED
        assert (notice.code, notice.field) == ("INVALID_ARGUMENT", "hello.client")
        assert "hello.client is 300 characters long; at most 200 allowed" in notice.message
        turn = seen["turn"].turn
        assert turn.match_id == match.match_id
        stream.answer(turn.match_id, turn.seq, wire.action_from_pb(
            turn.observation.legal_actions[0]), request_id="after-hello")
        deadline = time.monotonic() + 10
        while service.matches.GetMatch(match_pb2.GetMatchRequest(
                match_id=turn.match_id)).match.seq == turn.seq:
            assert time.monotonic() < deadline, "the answer after the refused Hello was lost"
            time.sleep(0.02)
    finally:
        stream.close()
