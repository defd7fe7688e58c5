"""What a bot's Play streams take (issue 22), with the real server, on SQLite and PostgreSQL: a
Hello for challenges only, a Drain (no new match) and its answer, recorded in the bot's
presence (`bots.accepts`), and the service refusing a ladder pairing or a challenge the bot
does not take, with a message that says why."""

from __future__ import annotations

import dataclasses
import queue
import time
from collections.abc import Iterator

import grpc
import pytest
from bummerl.v1 import bot_pb2, match_pb2
from servicekit import CONFIG, OPERATOR, auth, fresh_database, running_service
from test_service_presence import row, wait_for

from client.challenge import challenge
from db.models import ACCEPTS_CHALLENGES, ACCEPTS_NONE, HOUSE
from services.core import matches as plain
from services.live import play
from services.ops import bots

FAST = dataclasses.replace(CONFIG, heartbeat_s=0.2)


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, FAST) as svc:
        yield svc


@pytest.fixture(params=["sqlite", "postgres"])
def steady_service(request, tmp_path):
    """The service with its default heartbeat (5 s: a connected bot looks gone only after 15 s
    without one), for a test of what connected bots are told, not of the heartbeat. With a
    0.2 s heartbeat a bot looks gone after 0.6 s without one: on a loaded machine the presence
    thread's write lags that much, and a connected bot was refused as "not connected" (it
    failed so once in a run of the whole suite)."""
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, CONFIG) as svc:
        yield svc


class Stream:
    """A raw Play stream: send requests, read responses."""

    def __init__(self, service, token: str, hello: bot_pb2.Hello | None = None) -> None:  # type: ignore[no-untyped-def]
        self.outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        if hello is not None:
            self.outbox.put(bot_pb2.PlayRequest(hello=hello))
        self.call = service.bots.Play(self._requests(), metadata=auth(token), timeout=30)

    def _requests(self) -> Iterator[bot_pb2.PlayRequest]:
        while (request := self.outbox.get()) is not None:
            yield request

    def send(self, request: bot_pb2.PlayRequest) -> None:
        self.outbox.put(request)

    def next(self, kind: str) -> bot_pb2.PlayResponse:
        """The next response of `kind` (others are skipped)."""
        for response in self.call:
            if response.WhichOneof("message") == kind:
                return response
        raise AssertionError(f"the stream ended before a {kind}")

    def close(self) -> None:
        self.call.cancel()
        self.outbox.put(None)


def ladder_match(service, bot_ids: list[int]) -> match_pb2.Match:  # type: ignore[no-untyped-def]
    """CreateMatch as the ladder asks for it (over gRPC)."""
    return service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_ids=bot_ids, ladder=True), metadata=auth(OPERATOR), timeout=10).match


def refused(call) -> grpc.RpcError:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


def test_a_hello_for_challenges_only_is_recorded_and_confirmed(service):
    a_id, a_token = service.register("practiser")
    b_id, b_token = service.register("other")
    house, _ = bots.register_bot("house-random", kind=HOUSE, house_strategy="random",
                                 sessions=service.sessions)
    other = Stream(service, b_token, bot_pb2.Hello())
    stream = Stream(service, a_token, bot_pb2.Hello(client="test", challenges_only=True))
    try:
        assert other.next("welcome").welcome.challenges_only is False
        welcome = stream.next("welcome").welcome
        assert welcome.challenges_only is True
        assert row(service.sessions, a_id).accepts == ACCEPTS_CHALLENGES  # before the Welcome
        # the ladder's CreateMatch is refused, naming why; nothing is created
        error = refused(lambda: ladder_match(service, [house.id, a_id]))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "practiser is connected for challenges only" in error.details()
        assert plain.list_matches(sessions=service.sessions)[0] == []
        # an operator's one-off match and a challenge still reach it
        assert ladder_match(service, [house.id, b_id]).match_id  # the other bot: pairable
        started = challenge(service.channel, b_token, "practiser", 1)
        assert list(started[0].bot_ids) == [b_id, a_id]
    finally:
        stream.close()
        other.close()
    wait_for(lambda: row(service.sessions, a_id).accepts is None)  # cleared with the stream


def test_a_drain_is_recorded_then_answered_with_the_running_matches(steady_service):
    service = steady_service
    a_id, a_token = service.register("leaving")
    b_id, b_token = service.register("other")
    house, _ = bots.register_bot("house-random", kind=HOUSE, house_strategy="random",
                                 sessions=service.sessions)
    other = Stream(service, b_token, bot_pb2.Hello())
    stream = Stream(service, a_token, bot_pb2.Hello())
    try:
        stream.next("welcome")
        other.next("welcome")
        running = ladder_match(service, [house.id, a_id])  # the ladder's, before the drain
        stream.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="--matches 1 reached")))
        draining = stream.next("draining").draining
        assert list(draining.running_match_ids) == [running.match_id]
        assert row(service.sessions, a_id).accepts == ACCEPTS_NONE
        # from now on nothing new: no ladder pairing, no challenge; each says why
        error = refused(lambda: ladder_match(service, [house.id, a_id]))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "leaving takes no new matches now" in error.details()
        error = refused(lambda: challenge(service.channel, b_token, "leaving", 1))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "finishing its running ones" in error.details()
        assert [m.id for m in plain.running_matches_of(a_id, sessions=service.sessions)] \
            == [running.match_id]
        # the drained bot may still challenge (it asks for that match itself)
        assert challenge(service.channel, a_token, "other", 1)
    finally:
        stream.close()
        other.close()


def test_the_widest_open_stream_decides(service):
    """Two streams of one bot: it takes what the widest takes; closing one narrows it."""
    a_id, a_token = service.register("twice")
    wide = Stream(service, a_token, bot_pb2.Hello())
    narrow = Stream(service, a_token, bot_pb2.Hello(challenges_only=True))
    try:
        wide.next("welcome")
        narrow.next("welcome")
        assert row(service.sessions, a_id).accepts == "all"
        wide.close()
        wait_for(lambda: row(service.sessions, a_id).accepts == ACCEPTS_CHALLENGES)
        narrow.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain()))
        assert list(narrow.next("draining").draining.running_match_ids) == []
        assert row(service.sessions, a_id).accepts == ACCEPTS_NONE
    finally:
        wide.close()
        narrow.close()
    wait_for(lambda: row(service.sessions, a_id).accepts is None)


def test_a_stream_without_a_hello_is_welcomed_after_a_bounded_wait(service):
    """A client that never sends its Hello still plays (it takes every match)."""
    a_id, a_token = service.register("silent")
    started = time.monotonic()
    stream = Stream(service, a_token)  # no Hello, the request stream left open
    try:
        stream.next("welcome")
        waited = time.monotonic() - started
        assert play.HELLO_WAIT_S * 0.8 <= waited < play.HELLO_WAIT_S + 5
        assert row(service.sessions, a_id).accepts == "all"
    finally:
        stream.close()


def test_create_match_takes_bot_names(service):
    a_id, _ = service.register("mybot")
    b_id, _ = service.register("tsbot")
    m = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_names=["mybot", "tsbot"]), metadata=auth(OPERATOR), timeout=10).match
    assert list(m.bot_ids) == [a_id, b_id] and list(m.bot_names) == ["mybot", "tsbot"]
    error = refused(lambda: service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_names=["mybot", "nosuch"]), metadata=auth(OPERATOR), timeout=10))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert "no bot named 'nosuch'" in error.details()
    error = refused(lambda: service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_names=["mybot"]), metadata=auth(OPERATOR), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(plain.list_matches(sessions=service.sessions)[0]) == 1  # nothing else created


def test_a_drain_is_answered_only_once_it_is_written(service, monkeypatch):
    """The database refuses the Drain's write twice (an outage): the stream tries again each
    heartbeat and answers only once the presence says so; meanwhile it reads on."""
    from services.live.presence import Presence

    a_id, a_token = service.register("patient")
    real = Presence.changed
    failures = [True, True]

    def flaky(self, bot_id, key, accepts, version=None):  # type: ignore[no-untyped-def]
        if failures:
            failures.pop()
            return False
        return real(self, bot_id, key, accepts, version)

    monkeypatch.setattr(Presence, "changed", flaky)
    stream = Stream(service, a_token, bot_pb2.Hello())
    try:
        stream.next("welcome")
        started = time.monotonic()
        stream.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain()))
        stream.next("draining")
        assert not failures  # both failures happened before the answer
        assert time.monotonic() - started >= 2 * FAST.heartbeat_s - 0.05
        assert row(service.sessions, a_id).accepts == ACCEPTS_NONE
    finally:
        stream.close()


def test_a_stream_that_ends_before_its_open_is_recorded_is_not_counted(service):
    """A call that ends while its presence write waits for the pool: the close may run first;
    the bot must not stay "connected" (and pairable) for ever."""
    from services.live.presence import Presence, is_connected

    a_id, _ = service.register("brief")
    presence = Presence(service.sessions, FAST.heartbeat_s)
    key = presence.new_key()
    presence.closed(a_id, key)  # first
    presence.opened(a_id, key=key)  # then
    assert presence.accepts(a_id) is None
    assert not is_connected(row(service.sessions, a_id), FAST.heartbeat_s)
    other = presence.new_key()  # the usual order still counts
    presence.opened(a_id, ACCEPTS_CHALLENGES, other)
    assert presence.accepts(a_id) == ACCEPTS_CHALLENGES
    assert is_connected(row(service.sessions, a_id), FAST.heartbeat_s)
    presence.closed(a_id, other)
    assert row(service.sessions, a_id).connected_since is None


def test_a_late_heartbeat_does_not_open_the_door_to_a_pairing(service):
    """A loaded server's heartbeat may lag: the check at creation reads what the bot said,
    whatever its heartbeat (it failed so once under the whole suite's load)."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from db.models import Bot

    a_id, a_token = service.register("lagging")
    house, _ = bots.register_bot("house-random", kind=HOUSE, house_strategy="random",
                                 sessions=service.sessions)
    stream = Stream(service, a_token, bot_pb2.Hello(challenges_only=True))
    try:
        stream.next("welcome")
        with service.sessions.begin() as s:  # its heartbeat, as if 10 beats late
            s.execute(update(Bot).where(Bot.id == a_id).values(
                last_seen_at=datetime.now(UTC) - timedelta(seconds=10 * FAST.heartbeat_s)))
        error = refused(lambda: ladder_match(service, [house.id, a_id]))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "challenges only" in error.details()
    finally:
        stream.close()
