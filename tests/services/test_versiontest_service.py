"""VersionTestService over the real service (gRPC, SQLite and PostgreSQL): bad input is
INVALID_ARGUMENT naming the field and writes nothing; a bot tests itself only and sees its
own tests; the per-bot limit; stopping; and the routing of a version test's match: two Play
streams of one bot, each with its Hello.version, each get the turns of their own seat only."""

from __future__ import annotations

import queue
import time
from dataclasses import replace

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import bot_pb2, match_pb2, versiontest_pb2, versiontest_pb2_grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from servicekit import CONFIG, OPERATOR, auth, fresh_database, running_service
from serviceprocs import PlayStream
from sqlalchemy import func, select

from db.pairs import OWNER_TEST, PLAYING, DuplicatePair
from db.versiontests import BotVersion, VersionTest
from services.ops import bots
from workers.testing import wait_until

TEST_CONFIG = replace(CONFIG, tests_per_bot=2)


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, TEST_CONFIG) as svc:
        yield svc


def stub(service) -> versiontest_pb2_grpc.VersionTestServiceStub:
    return versiontest_pb2_grpc.VersionTestServiceStub(service.channel)


def connect(service, token: str, version: str) -> PlayStream:
    """A raw Play stream whose Hello says `version`; waits until the version is recorded."""
    stream = PlayStream(service.channel, token)
    stream.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="t", version=version)))
    stream.next("welcome")

    def seen() -> bool:
        with service.sessions() as s:
            row = s.scalar(select(BotVersion).where(BotVersion.version == version))
            return row is not None and row.open_streams > 0

    wait_until(seen, 10, every=0.05, what=f"version {version} recorded")
    return stream


def refused(call, request, token: str) -> tuple[grpc.StatusCode, str, str]:
    """The code, message and BadRequest field of a refused call."""
    with pytest.raises(grpc.RpcError) as info:
        call(request, metadata=auth(token))
    status = rpc_status.from_call(info.value)
    field = ""
    if status is not None:
        for detail in status.details:
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(bad):
                field = bad.field_violations[0].field
    return info.value.code(), info.value.details(), field


def start(candidate: str, baseline: str, **fields) -> versiontest_pb2.StartTestRequest:
    return versiontest_pb2.StartTestRequest(candidate=candidate, baseline=baseline, **fields)


def test_bad_input_names_the_field_and_writes_nothing(service):
    bot_id, token = service.register("mybot")
    service.register("other")
    bots.register_bot("house-random", kind="house", house_strategy="random",
                      sessions=service.sessions)
    streams = [connect(service, token, "1.9"), connect(service, token, "2.0")]
    try:
        cases = [
            (start("nobody@1.0", "mybot@1.9"), "candidate", "no bot named 'nobody'"),
            (start("mybot@3.0", "mybot@1.9"), "candidate", "never connected with version"),
            (start("mybot", "mybot@1.9"), "candidate", "name the version"),
            (start("mybot@2.0", "mybot@4.4"), "baseline", "never connected with version"),
            (start("mybot@2.0", "mybot@2.0"), "baseline", "is its own baseline"),
            (start("mybot@2.0", "house-random@x"), "baseline", "house bot"),
            (start("mybot@2.0", "", elo0=0), "baseline", "baseline is missing"),
            (start("mybot@2.0", "mybot@1.9", elo0=5, elo1=5), "elo1", "must be above elo0"),
            (start("mybot@2.0", "mybot@1.9", alpha=0.7), "alpha", "between 0 and 0.5"),
            (start("mybot@2.0", "mybot@1.9", concurrency=9), "concurrency", "between 1 and"),
            (start("mybot@2.0", "mybot@1.9", games=30000), "games", "between 0"),
        ]
        for request, field, words in cases:
            code, message, named = refused(stub(service).StartTest, request, token)
            assert (code, named) == (grpc.StatusCode.INVALID_ARGUMENT, field), (request, message)
            assert words in message, message
        long = start("m" * 200, "mybot@1.9")
        code, message, _ = refused(stub(service).StartTest, long, token)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "candidate" in message
        with service.sessions() as s:
            assert s.scalar(select(func.count(VersionTest.id))) == 0
        # a house baseline needs no version, and another bot of its own versions is fine too
        ok = stub(service).StartTest(start("mybot@2.0", "house-random"), metadata=auth(token))
        assert ok.test.baseline.version == "" and ok.test.baseline.connected
        assert ok.test.state == versiontest_pb2.TEST_STATE_WAITING and ok.test.sprt
        assert (ok.test.elo0, ok.test.elo1) == (0, 5)
        assert ok.test.candidate.bot_id == bot_id and ok.test.candidate.connected
    finally:
        for stream in streams:
            stream.close()


def test_a_bot_tests_itself_the_limit_and_stopping(service):
    _, token = service.register("mybot")
    _, other = service.register("other")
    streams = [connect(service, token, "1.9"), connect(service, token, "2.0")]
    try:
        tests = stub(service)
        code, message, _ = refused(tests.StartTest, start("mybot@2.0", "mybot@1.9"), other)
        assert code == grpc.StatusCode.PERMISSION_DENIED and "tests of itself" in message
        first = tests.StartTest(start("mybot@2.0", "mybot@1.9", games=10),
                                metadata=auth(token)).test
        assert not first.sprt and first.max_games == 10
        second = tests.StartTest(start("mybot@1.9", "mybot@2.0", elo0=-5, elo1=5),
                                 metadata=auth(OPERATOR)).test
        assert second.started_by == "operator" and first.started_by == "bot mybot"
        code, message, _ = refused(tests.StartTest, start("mybot@2.0", "mybot@1.9"), token)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "2 at most" in message
        # another bot neither sees nor stops them; the operator sees all
        code, _, _ = refused(tests.GetTest, versiontest_pb2.GetTestRequest(
            test_id=first.test_id), other)
        assert code == grpc.StatusCode.NOT_FOUND
        assert not tests.ListTests(versiontest_pb2.ListTestsRequest(),
                                   metadata=auth(other)).tests
        code, _, _ = refused(tests.StopTest, versiontest_pb2.StopTestRequest(
            test_id=first.test_id), other)
        assert code == grpc.StatusCode.NOT_FOUND
        mine = tests.ListTests(versiontest_pb2.ListTestsRequest(), metadata=auth(token)).tests
        assert [t.test_id for t in mine] == [second.test_id, first.test_id]
        stopped = tests.StopTest(versiontest_pb2.StopTestRequest(
            test_id=first.test_id, reason="enough"), metadata=auth(OPERATOR)).test
        assert stopped.state == versiontest_pb2.TEST_STATE_STOPPED
        assert stopped.reason == "stopped by operator: enough"
        code, message, _ = refused(tests.StopTest, versiontest_pb2.StopTestRequest(
            test_id=first.test_id), token)
        assert code == grpc.StatusCode.FAILED_PRECONDITION and "already ended" in message
        tests.StartTest(start("mybot@2.0", "mybot@1.9"), metadata=auth(token))  # room again
        waiting = tests.ListTests(versiontest_pb2.ListTestsRequest(
            state=versiontest_pb2.TEST_STATE_WAITING), metadata=auth(OPERATOR)).tests
        assert len(waiting) == 2
    finally:
        for stream in streams:
            stream.close()


def turns_of(stream: PlayStream, wait_s: float) -> list[bot_pb2.Turn]:
    """The turns `stream` got within `wait_s` seconds."""
    out = []
    end = time.monotonic() + wait_s
    while (left := end - time.monotonic()) > 0:
        try:
            item = stream.responses.get(timeout=left)
        except queue.Empty:
            break
        if not isinstance(item, grpc.RpcError) and item.WhichOneof("message") == "turn":
            out.append(item.turn)
    return out


def test_each_seat_is_played_by_the_stream_of_its_version(service):
    bot_id, token = service.register("mybot")
    new, old, stray = (connect(service, token, v) for v in ("2.0", "1.9", "3.0"))
    try:
        with service.sessions.begin() as s:
            pair = DuplicatePair(owner=OWNER_TEST, owner_id=1, round=None, board=1, seed=99,
                                 bot_a_id=bot_id, bot_b_id=bot_id, version_a="2.0",
                                 version_b="1.9", profile="soft", move_ms=5000, bank_ms=5000,
                                 rated=False, state=PLAYING)
            s.add(pair)
            s.flush()
            pair_id = pair.id
        code, message, field = refused(service.matches.CreateMatch, match_pb2.CreateMatchRequest(
            pair_id=pair_id, pair_leg=0, seat_versions=["1.9", "2.0"]), OPERATOR)
        assert (code, field) == (grpc.StatusCode.INVALID_ARGUMENT, "seat_versions"), message
        m = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
            pair_id=pair_id, pair_leg=0, seat_versions=["2.0", "1.9"]),
            metadata=auth(OPERATOR)).match
        assert list(m.bot_ids) == [bot_id, bot_id] and list(m.bot_versions) == ["2.0", "1.9"]
        seats = {"2.0": 0, "1.9": 1}
        played = 0
        while played < 12:
            turns = {v: turns_of(s, 0.3) for v, s in (("2.0", new), ("1.9", old))}
            assert all(t.seat == seats[v] for v, ts in turns.items() for t in ts), turns
            answered = False
            for version, stream in (("2.0", new), ("1.9", old)):
                for turn in turns[version][-1:]:
                    obs = wire.observation_from_pb(turn.observation)
                    stream.answer(turn.match_id, turn.seq, obs.legal_actions[0])
                    answered = True
                    played += 1
            assert answered, "no stream got the turn"
        assert not turns_of(stray, 0.2)  # a version the match does not name gets nothing
        # both seats played by their own streams: the log has actions of both seats
        got = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.match_id)).hands
        seats_seen = {a.seat for h in got for a in h.actions}
        assert seats_seen == {0, 1}
    finally:
        for stream in (new, old, stray):
            stream.close()
