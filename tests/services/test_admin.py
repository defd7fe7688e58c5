"""Operator controls over gRPC (AdminService) and the CLI: list, suspend, reinstate, rotate a
token, abort a match; what each does to open Play streams, the ladder and ratings."""

from __future__ import annotations

import queue
import threading
import time

import grpc
import pytest
from bummerl.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, match_pb2
from servicekit import OPERATOR, auth, fresh_database, running_service

from cli.main import main as bummerl
from db.base import utcnow
from db.models import ABORTED, Bot, Match
from db.ratings import LadderMatch
from services.core import matches as plain_matches
from services.ops import bots as plain_bots
from workers import ladder


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


def admin(service) -> admin_pb2_grpc.AdminServiceStub:
    return admin_pb2_grpc.AdminServiceStub(service.channel)


def code_of(call, *args, **kwargs) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call(*args, **kwargs)
    return info.value.code(), info.value.details()


def until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


class OpenStream:
    """A bot's Play stream held open, its messages and how it ended, read in a thread."""

    def __init__(self, service, token: str) -> None:
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.messages: list[bot_pb2.PlayResponse] = []
        self.error: grpc.RpcError | None = None
        self.done = threading.Event()

        def requests():
            yield bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="test"))
            while (item := self.outbox.get()) is not None:
                yield item

        self.call = service.bots.Play(requests(), metadata=auth(token))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.messages.append(message)
        except grpc.RpcError as e:
            self.error = e
        finally:
            self.done.set()

    def kinds(self) -> list[str]:
        return [m.WhichOneof("message") for m in self.messages]

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()


def test_every_call_needs_the_operator_token(service):
    stub = admin(service)
    code, details = code_of(stub.ListBots, admin_pb2.ListBotsRequest())
    assert code == grpc.StatusCode.UNAUTHENTICATED and "operator token" in details
    bot_id, token = service.register("alice")
    for method, request in [
        (stub.ListBots, admin_pb2.ListBotsRequest()),
        (stub.SuspendBot, admin_pb2.SuspendBotRequest(bot_id=bot_id, reason="x")),
        (stub.ReinstateBot, admin_pb2.ReinstateBotRequest(bot_id=bot_id)),
        (stub.RotateBotToken, admin_pb2.RotateBotTokenRequest(bot_id=bot_id)),
        (stub.AbortMatch, admin_pb2.AbortMatchRequest(match_id=1, reason="x")),
        (stub.AnalyseMatch, admin_pb2.AnalyseMatchRequest(match_id=1)),
    ]:
        code, details = code_of(method, request, metadata=auth(token))  # a bot's token
        assert code == grpc.StatusCode.PERMISSION_DENIED, method
    with service.sessions() as s:
        assert s.get(Bot, bot_id).suspended_at is None  # nothing changed


def test_list_suspend_and_reinstate(service):
    stub = admin(service)
    alice, alice_token = service.register("alice")
    bob, _ = service.register("bob")
    house, _ = plain_bots.register_bot("house-random", kind="house", house_strategy="random",
                                       sessions=service.sessions)
    plain_matches.create_match([alice, bob], sessions=service.sessions, config=service.config)
    stream = OpenStream(service, alice_token)
    until(lambda: "welcome" in stream.kinds())
    until(lambda: {b.bot.name: b for b in stub.ListBots(
        admin_pb2.ListBotsRequest(), metadata=auth(OPERATOR)).bots}["alice"].connected)
    listed = stub.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(OPERATOR)).bots
    by_name = {b.bot.name: b for b in listed}
    assert [b.bot.bot_id for b in listed] == [alice, bob, house.id]
    assert by_name["alice"].connected and by_name["alice"].HasField("last_seen_at")
    assert not by_name["bob"].connected and not by_name["bob"].HasField("last_seen_at")
    assert by_name["alice"].running_matches == 1 and by_name["house-random"].running_matches == 0
    assert by_name["house-random"].bot.kind == bot_pb2.BOT_KIND_HOUSE
    assert not any(b.suspended for b in listed)

    # bad input changes nothing
    code, details = code_of(stub.SuspendBot, admin_pb2.SuspendBotRequest(bot_id=alice),
                            metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "reason" in details
    code, _ = code_of(stub.SuspendBot, admin_pb2.SuspendBotRequest(bot_id=999, reason="x"),
                      metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.NOT_FOUND
    code, details = code_of(stub.ReinstateBot, admin_pb2.ReinstateBotRequest(bot_id=alice),
                            metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "not suspended" in details

    reply = stub.SuspendBot(admin_pb2.SuspendBotRequest(bot_id=alice, reason="spamming"),
                            metadata=auth(OPERATOR))
    assert reply.bot.suspended and reply.bot.suspended_reason == "spamming"
    assert reply.bot.HasField("suspended_at")
    # its open stream is ended, saying why
    assert stream.done.wait(20)
    assert stream.error is not None
    assert stream.error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "suspended: spamming" in stream.error.details()
    # a new stream is refused, saying why
    code, details = code_of(lambda: list(service.bots.Play(iter([]),
                                                           metadata=auth(alice_token))))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "alice" in details and "suspended: spamming" in details
    listed = stub.ListBots(admin_pb2.ListBotsRequest(suspended_only=True),
                           metadata=auth(OPERATOR)).bots
    assert [b.bot.bot_id for b in listed] == [alice]
    with service.sessions() as s:  # the ladder skips it, connected or not
        assert alice not in {b.id for b in ladder.eligible_bots(s, "soft")}

    reply = stub.ReinstateBot(admin_pb2.ReinstateBotRequest(bot_id=alice),
                              metadata=auth(OPERATOR))
    assert not reply.bot.suspended and reply.bot.suspended_reason == ""
    again = OpenStream(service, alice_token)
    until(lambda: "welcome" in again.kinds())
    assert again.error is None
    again.close()
    stream.close()


def test_rotating_a_token(service):
    stub = admin(service)
    alice, old = service.register("alice")
    stream = OpenStream(service, old)
    until(lambda: "welcome" in stream.kinds())
    reply = stub.RotateBotToken(admin_pb2.RotateBotTokenRequest(bot_id=alice),
                                metadata=auth(OPERATOR))
    new = reply.token
    assert new and new != old and reply.bot.bot.bot_id == alice
    # the old token stops at once for new calls ...
    code, details = code_of(service.matches.GetObservation,
                            match_pb2.GetObservationRequest(match_id=1, seat=0),
                            metadata=auth(old))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    code, _ = code_of(lambda: list(service.bots.Play(iter([]), metadata=auth(old))))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    # ... and the stream opened with it is ended
    assert stream.done.wait(20)
    assert stream.error is not None and stream.error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "new token" in stream.error.details()
    fresh = OpenStream(service, new)
    until(lambda: "welcome" in fresh.kinds())
    assert fresh.messages[0].welcome.bot.bot_id == alice
    fresh.close()
    house, _ = plain_bots.register_bot("house-x", kind="house", house_strategy="random",
                                       sessions=service.sessions)
    code, details = code_of(stub.RotateBotToken,
                            admin_pb2.RotateBotTokenRequest(bot_id=house.id),
                            metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "house" in details


def test_aborting_a_match_tells_the_streams_and_is_not_rated(service):
    stub = admin(service)
    alice, alice_token = service.register("alice")
    bob, bob_token = service.register("bob")
    m = plain_matches.create_match([alice, bob], sessions=service.sessions,
                                   config=service.config)
    with service.sessions.begin() as s:
        s.add(LadderMatch(match_id=m.id, profile="soft"))
    streams = [OpenStream(service, alice_token), OpenStream(service, bob_token)]
    to_act = streams[m.to_act]
    until(lambda: "turn" in to_act.kinds())
    watch = service.matches.WatchMatch(match_pb2.WatchMatchRequest(match_id=m.id))

    code, _ = code_of(stub.AbortMatch, admin_pb2.AbortMatchRequest(match_id=m.id),
                      metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    reply = stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=m.id, reason="server move"),
                            metadata=auth(OPERATOR))
    assert reply.match.state == match_pb2.MATCH_STATE_ABORTED
    assert reply.match.end_reason == match_pb2.END_REASON_ABORTED
    assert "server move" in reply.match.end_detail and reply.match.winner == -1
    for stream in streams:
        until(lambda stream=stream: "match_ended" in stream.kinds())
        ended = next(x.match_ended for x in stream.messages if x.HasField("match_ended"))
        assert ended.match.state == match_pb2.MATCH_STATE_ABORTED and not ended.won
        stream.close()
    events = list(watch)
    assert events[-1].match_ended.state == match_pb2.MATCH_STATE_ABORTED
    with service.sessions() as s:
        row = s.get(Match, m.id)
        assert row.state == ABORTED and row.rated is False and row.finished_at is not None
    assert ladder.rate_match(m.id, service.sessions) is False  # never rated
    code, details = code_of(stub.AbortMatch,
                            admin_pb2.AbortMatchRequest(match_id=m.id, reason="again"),
                            metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "aborted" in details
    listed = service.matches.ListMatches(
        match_pb2.ListMatchesRequest(state=match_pb2.MATCH_STATE_ABORTED)).matches
    assert [x.match_id for x in listed] == [m.id]


def test_the_admin_command_line(sqlite_service, capsys, monkeypatch):
    service = sqlite_service
    monkeypatch.setenv("BUMMERL_SERVER", service.server.address)
    alice, _ = service.register("alice")
    common = ["--server", service.server.address, "--operator-token", OPERATOR]
    assert bummerl(["admin", "suspend", str(alice), "too many forfeits", *common]) == 0
    assert "suspended bot" in capsys.readouterr().out
    assert bummerl(["admin", "bots", *common]) == 0
    out = capsys.readouterr().out
    assert "alice" in out and "SUSPENDED" in out and "too many forfeits" in out
    assert bummerl(["admin", "reinstate", str(alice), *common]) == 0
    assert bummerl(["admin", "rotate-token", str(alice), *common]) == 0
    out = capsys.readouterr().out
    token = out.split("token ", 1)[1].split()[0]
    assert plain_bots.bot_for_token(token, sessions=service.sessions).id == alice
    # errors in the one style of every command (issue 29): `error: ...`, naming the flag
    assert bummerl(["admin", "abort-match", "42", "why", *common]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "42" in err and err.count("\n") == 1, err
    assert bummerl(["admin", "bots", "--server", service.server.address,
                    "--operator-token", "no"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the service refused the operator token") and \
        "--operator-token or $BUMMERL_OPERATOR_TOKEN" in err, err


def test_a_suspension_made_elsewhere_ends_the_open_stream_within_a_heartbeat(sqlite_service):
    """Another process (the workers' automatic suspension, another replica) writes the row:
    the stream guard's periodic check ends the open stream."""
    from sqlalchemy import update

    service = sqlite_service
    alice, token = service.register("alice")
    stream = OpenStream(service, token)
    until(lambda: "welcome" in stream.kinds())
    with service.sessions.begin() as s:
        s.execute(update(Bot).where(Bot.id == alice).values(
            suspended_at=utcnow(), suspended_reason="automatic: test"))
    started = time.monotonic()
    assert stream.done.wait(3 * service.config.heartbeat_s + 10)
    assert time.monotonic() - started <= 2 * service.config.heartbeat_s + 5  # generous
    assert stream.error is not None
    assert stream.error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "suspended: automatic: test" in stream.error.details()


def test_the_operators_commands_as_the_readme_writes_them(sqlite_service, capsys):
    """README: `bummerl admin suspend BOT REASON`, `reinstate BOT`, `rotate-token BOT`: BOT is
    a name (in any case, as names are unique so) or an id, for every one of them (issue 44:
    rotate-token took an id only); a person is named as a person, not as a bot."""
    from services.ops.people import register_person

    service = sqlite_service
    my_bot, _ = service.register("MyBot")
    common = ["--server", service.server.address, "--operator-token", OPERATOR]
    assert bummerl(["admin", "rotate-token", "MyBot", *common]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"bot id {my_bot} (MyBot)\n"), out
    token = out.split("\ntoken ", 1)[1].split()[0]
    assert plain_bots.bot_for_token(token, sessions=service.sessions).id == my_bot
    assert bummerl(["admin", "rotate-token", "mybot", *common]) == 0  # any case
    assert f"bot id {my_bot} (MyBot)" in capsys.readouterr().out
    assert bummerl(["admin", "rotate-token", str(my_bot), *common]) == 0  # an id, as before
    assert f"bot id {my_bot} (MyBot)" in capsys.readouterr().out
    assert bummerl(["admin", "suspend", "mybot", "too many forfeits", *common]) == 0
    assert capsys.readouterr().out == f"suspended bot {my_bot} (MyBot): too many forfeits\n"
    assert bummerl(["admin", "reinstate", "MYBOT", *common]) == 0
    assert capsys.readouterr().out == f"reinstated bot {my_bot} (MyBot)\n"
    assert bummerl(["admin", "rotate-token", "nobody", *common]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no bot or person named 'nobody'"), err

    alice = register_person("alice", "a long password", sessions=service.sessions).bot.id
    assert bummerl(["admin", "suspend", "@alice", "abusive chat", *common]) == 0
    assert capsys.readouterr().out == f"suspended person {alice} (@alice): abusive chat\n"
    assert bummerl(["admin", "reinstate", "@Alice", *common]) == 0
    assert capsys.readouterr().out == f"reinstated person {alice} (@alice)\n"
