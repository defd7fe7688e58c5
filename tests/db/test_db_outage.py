"""PostgreSQL outages, through a TCP proxy the test controls (tests/faultproxy.py; the real server
is never touched): while the database refuses or black-holes connections, every call gets
UNAVAILABLE promptly with a safe message (no host, port or driver text), never UNKNOWN and never
a hang to the caller's deadline; the dashboard's /healthz answers within its bound; both recover
by themselves when the database is back."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc
from faultproxy import BLACKHOLE, Proxy
from servicekit import CONFIG, OPERATOR, auth, fresh_database
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from db.base import DbTimeouts, make_engine
from services.api.server import Server, create_server
from services.core import matches
from services.core.failures import UNAVAILABLE_MESSAGE
from services.ops import bots

# Short bounds, so the test is quick; the defaults are in db.base.DbTimeouts.
FAST = DbTimeouts(connect_s=2, statement_ms=2000, answer_s=3.0, pool_s=3.0, keepalive_s=5)
PROMPT_S = 12.0  # generous: answer_s + connect_s + a loaded CI machine
CALLER_DEADLINE_S = 60.0
HEALTH_EVERY_S = 0.5  # the service's health check interval in these tests
FAST_S = 1.0  # "at once": a call refused by the open breaker (it was 2-3 s, the bounds, before)
pytestmark = pytest.mark.postgres


@dataclass
class Outage:
    proxy: Proxy
    url: str
    sessions: sessionmaker[Session]
    server: Server
    channel: grpc.Channel
    match_id: int
    seat: int
    tokens: tuple[str, str]
    direct_url: str  # the database itself, not through the proxy
    schema: str

    @property
    def matches(self) -> match_pb2_grpc.MatchServiceStub:
        return match_pb2_grpc.MatchServiceStub(self.channel)

    @property
    def bots(self) -> bot_pb2_grpc.BotServiceStub:
        return bot_pb2_grpc.BotServiceStub(self.channel)


@contextlib.contextmanager
def serving(request, tmp_path, timeouts: DbTimeouts) -> Iterator[Outage]:  # type: ignore[no-untyped-def]
    """A service on a fresh PostgreSQL database reached through a proxy the test controls, with
    two bots and a match between them."""
    with fresh_database("postgres", request, tmp_path) as database, \
            Proxy(("127.0.0.1", make_url(database.url).port or 5432)) as proxy:
        database.create_tables()
        url = make_url(database.url).set(port=proxy.port).render_as_string(hide_password=False)
        engine = make_engine(url, timeouts=timeouts,
                             connect_args={"options": f"-csearch_path={database.schema}"})
        sessions = sessionmaker(bind=engine, expire_on_commit=False)
        a, a_token = bots.register_bot("alice", sessions=sessions)
        b, b_token = bots.register_bot("bob", sessions=sessions)
        m = matches.create_match([a.id, b.id], seed=3, sessions=sessions, config=CONFIG)
        server = create_server("127.0.0.1:0", sessions=sessions, config=CONFIG).start()
        channel = grpc.insecure_channel(server.address)
        assert a_token and b_token and m.to_act is not None
        try:
            yield Outage(proxy, url, sessions, server, channel, m.id, m.to_act, (a_token, b_token),
                         database.url, database.schema)
        finally:
            proxy.restore()
            channel.close()
            server.stop(grace=0)
            engine.dispose()


@pytest.fixture
def outage(request, tmp_path, monkeypatch) -> Iterator[Outage]:
    monkeypatch.setenv("BUMMERL_HEALTH_EVERY", str(HEALTH_EVERY_S))
    with serving(request, tmp_path, FAST) as o:
        yield o


@pytest.fixture
def outage_as_deployed(request, tmp_path, monkeypatch) -> Iterator[Outage]:
    """The same with the service's own bounds and health check interval (the defaults), where a
    call waiting on a black-holed database would wait 12 s (the answer bound)."""
    monkeypatch.delenv("BUMMERL_HEALTH_EVERY", raising=False)
    with serving(request, tmp_path, DbTimeouts()) as o:
        yield o


def calls(o: Outage) -> dict[str, object]:
    """One call of each RPC that needs the database (each a function of no arguments)."""
    token = o.tokens[o.seat]
    return {
        "GetMatch": lambda: o.matches.GetMatch(
            match_pb2.GetMatchRequest(match_id=o.match_id), timeout=CALLER_DEADLINE_S),
        "ListMatches": lambda: o.matches.ListMatches(
            match_pb2.ListMatchesRequest(), timeout=CALLER_DEADLINE_S),
        "GetObservation": lambda: o.matches.GetObservation(
            match_pb2.GetObservationRequest(match_id=o.match_id, seat=o.seat),
            metadata=auth(token), timeout=CALLER_DEADLINE_S),
        "SubmitAction": lambda: o.matches.SubmitAction(
            match_pb2.SubmitActionRequest(match_id=o.match_id, seat=o.seat),
            metadata=auth(token), timeout=CALLER_DEADLINE_S),
        "CreateMatch": lambda: o.matches.CreateMatch(
            match_pb2.CreateMatchRequest(bot_ids=[1, 2]), metadata=auth(OPERATOR),
            timeout=CALLER_DEADLINE_S),
        "RegisterBot": lambda: o.bots.RegisterBot(
            bot_pb2.RegisterBotRequest(name="carol"), metadata=auth(OPERATOR),
            timeout=CALLER_DEADLINE_S),
        "GetBot": lambda: o.bots.GetBot(bot_pb2.GetBotRequest(bot_id=1),
                                        timeout=CALLER_DEADLINE_S),
        "WatchMatch": lambda: list(o.matches.WatchMatch(
            match_pb2.WatchMatchRequest(match_id=o.match_id), timeout=CALLER_DEADLINE_S)),
        "Play": lambda: list(o.bots.Play(
            iter([bot_pb2.PlayRequest(hello=bot_pb2.Hello())]), metadata=auth(token),
            timeout=CALLER_DEADLINE_S)),
    }


def assert_unavailable(o: Outage, name: str, call) -> float:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    with pytest.raises(grpc.RpcError) as info:
        call()
    elapsed = time.monotonic() - start
    error = info.value
    assert error.code() == grpc.StatusCode.UNAVAILABLE, (name, error.code(), error.details())
    assert error.details() == UNAVAILABLE_MESSAGE, (name, error.details())
    assert elapsed < PROMPT_S, f"{name} took {elapsed:.1f} s"
    return elapsed


def wait_until_recovered(o: Outage, limit: float = 30.0) -> float:
    """Wait until calls succeed again and the service knows it: its breaker is closed (a
    health check that failed in the outage may open it just after the database came back; it
    closes at the next check)."""
    from services.core import breaker

    start = time.monotonic()
    while True:
        try:
            o.matches.GetMatch(match_pb2.GetMatchRequest(match_id=o.match_id), timeout=20)
            if breaker.of_sessions(o.sessions).is_open:
                raise AssertionError("open")
            time.sleep(2 * HEALTH_EVERY_S)  # no check of the outage is still under way
            if breaker.of_sessions(o.sessions).is_open:
                raise AssertionError("open")
            return time.monotonic() - start
        except AssertionError:
            assert time.monotonic() - start < limit, "the breaker did not close"
            time.sleep(0.2)
            continue
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE, e.details()
            assert time.monotonic() - start < limit, "did not recover"
            time.sleep(0.2)


def assert_no_traceback(caplog) -> None:  # type: ignore[no-untyped-def]
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert not tracebacks, [(r.name, r.getMessage()) for r in tracebacks]


def test_refused_database_is_unavailable_and_recovers(outage, caplog):
    caplog.set_level(logging.INFO)
    outage.proxy.down()
    for name, call in calls(outage).items():
        assert_unavailable(outage, name, call)
    outage.proxy.restore()
    print(f"recovered {wait_until_recovered(outage):.2f} s after the database came back")
    answer = outage.matches.GetMatch(match_pb2.GetMatchRequest(match_id=outage.match_id))
    assert answer.match.match_id == outage.match_id
    assert_no_traceback(caplog)


def test_black_holed_database_is_unavailable_promptly_and_recovers(outage, caplog):
    caplog.set_level(logging.INFO)
    outage.matches.GetMatch(match_pb2.GetMatchRequest(match_id=outage.match_id))  # pool warm
    outage.proxy.set(BLACKHOLE)
    times = {name: assert_unavailable(outage, name, call)
             for name, call in calls(outage).items()}
    print("UNAVAILABLE after (s):", {k: round(v, 1) for k, v in times.items()})
    outage.proxy.restore()
    print(f"recovered {wait_until_recovered(outage):.2f} s after the database came back")
    assert_no_traceback(caplog)


def test_healthz_answers_within_its_bound_and_recovers(outage, monkeypatch):
    from web import create_app

    monkeypatch.setenv("BUMMERL_DB_ANSWER_S", "3")
    monkeypatch.setenv("BUMMERL_DB_CONNECT_S", "2")
    client = create_app({"DATABASE_URL": outage.url}).test_client()
    assert client.get("/healthz").status_code == 200
    outage.proxy.set(BLACKHOLE)
    for _ in range(3):  # a hung check is shared, never piled up
        start = time.monotonic()
        answer = client.get("/healthz")
        elapsed = time.monotonic() - start
        assert answer.status_code == 503 and elapsed < 5.0, elapsed
        body = answer.get_json()
        assert body["status"] == "error" and str(outage.proxy.port) not in str(body)
    outage.proxy.restore()
    deadline = time.monotonic() + 30
    while client.get("/healthz").status_code != 200:
        assert time.monotonic() < deadline, "the dashboard did not recover"
        time.sleep(0.2)


def turn_at(streams: dict, seq: int, timeout: float = 10.0) -> tuple[int, Any]:
    """(seat, Turn) of the turn at `seq`, from whichever of the two Play streams gets it."""
    import queue

    limit = time.monotonic() + timeout
    while True:
        for seat, stream in streams.items():
            try:
                item = stream.responses.get(timeout=0.02)
            except queue.Empty:
                continue
            if isinstance(item, grpc.RpcError):
                raise item
            if item.WhichOneof("message") == "turn" and item.turn.seq == seq:
                return seat, item.turn
        assert time.monotonic() < limit, f"no turn at seq {seq}"


def wait_applied(o: Outage, seq: int, what: str) -> None:
    """Wait until the match is past `seq` (an answer at `seq` applied); AssertionError `what`
    after PROMPT_S."""
    limit = time.monotonic() + PROMPT_S
    while o.matches.GetMatch(match_pb2.GetMatchRequest(match_id=o.match_id),
                             timeout=PROMPT_S).match.seq == seq:
        assert time.monotonic() < limit, what
        time.sleep(0.05)


def play_two(o: Outage, streams: dict) -> tuple[int, Any]:
    """Answer the first two turns (the second on the fast path, committed on the event loop's
    own connection, which is open from then on); the seat and Turn at seq 2."""
    from bummerl import wire

    for seq in (0, 1):
        seat, turn = turn_at(streams, seq)
        streams[seat].answer(o.match_id, turn.seq, wire.action_from_pb(
            turn.observation.legal_actions[0]), request_id=f"t{seq}")
    return turn_at(streams, 2)


@pytest.mark.parametrize("fault", ["down", BLACKHOLE])
def test_a_play_answer_in_an_outage_is_refused_and_the_match_goes_on(outage, fault, caplog):
    """An answer on a Play stream takes the fast path: the event loop commits it on its own
    connection (services.core.committers.LoopCommit). With the database refusing (its connections
    reset) or black-holed, the bot hears UNAVAILABLE within the bound (its answer rejected, or
    its stream ended), nothing of the answer is applied, and once the database is back the same
    answer, sent again on a new stream, is accepted and the match goes on."""
    from bummerl import wire
    from serviceprocs import PlayStream

    caplog.set_level(logging.INFO)
    o = outage
    streams = {seat: PlayStream(o.channel, o.tokens[seat]) for seat in (0, 1)}
    try:
        seat, turn = play_two(o, streams)  # the loop's connection is open by now
        action = wire.action_from_pb(turn.observation.legal_actions[0])
        if fault == "down":
            o.proxy.down()
        else:
            o.proxy.set(fault)
        start = time.monotonic()
        streams[seat].answer(o.match_id, turn.seq, action, request_id="second")
        try:
            rejected = streams[seat].next("rejected", timeout=PROMPT_S).rejected
            assert rejected.code == "UNAVAILABLE", rejected
            assert rejected.message == UNAVAILABLE_MESSAGE, rejected.message
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE, e
        assert time.monotonic() - start < PROMPT_S
        o.proxy.restore()
        wait_until_recovered(o)
        got = o.matches.GetMatch(match_pb2.GetMatchRequest(match_id=o.match_id)).match
        assert got.seq == turn.seq  # nothing of the refused answer was applied
        streams[seat].close()
        streams[seat] = PlayStream(o.channel, o.tokens[seat])  # the bot reconnects
        again = streams[seat].next("turn").turn
        assert again.seq == turn.seq
        streams[seat].answer(o.match_id, again.seq, action, request_id="second")
        wait_applied(o, turn.seq, "the answer was not applied after the outage")
        assert_no_traceback(caplog)
    finally:
        for stream in streams.values():
            stream.close()


def test_a_play_answer_after_the_database_dropped_its_connections_is_accepted(outage):
    """The database drops every connection (as when it restarts) while the loop's connection
    for Play answers is idle: the next answer is still accepted (that connection is pinged
    after a second idle, as the engine's pool does, and replaced), not refused UNAVAILABLE."""
    from bummerl import wire
    from serviceprocs import PlayStream

    from db.base import IDLE_CHECK_S

    o = outage
    streams = {seat: PlayStream(o.channel, o.tokens[seat]) for seat in (0, 1)}
    try:
        seat, turn = play_two(o, streams)  # the loop's connection is open by now
        o.proxy.cut()  # every open connection reset; new ones pass
        time.sleep(IDLE_CHECK_S + 0.3)
        streams[seat].answer(o.match_id, turn.seq, wire.action_from_pb(
            turn.observation.legal_actions[0]), request_id="second")
        wait_applied(o, turn.seq, "the answer was not applied")
        pending = []
        while not streams[seat].responses.empty():
            pending.append(streams[seat].responses.get_nowait())
        assert not [r for r in pending if not isinstance(r, grpc.RpcError)
                    and r.WhichOneof("message") == "rejected"], pending
    finally:
        for stream in streams.values():
            stream.close()


def drain_until(stream, want, timeout: float = PROMPT_S) -> list[Any]:  # type: ignore[no-untyped-def]
    """The responses of `stream` up to and including the first for which `want(response)`;
    AssertionError if the stream ends (every outage must leave it open) or after `timeout`."""
    import queue

    seen = []
    limit = time.monotonic() + timeout
    while True:
        try:
            item = stream.responses.get(timeout=max(0.01, limit - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"not seen within {timeout} s; seen {seen}") from None
        assert not isinstance(item, grpc.RpcError), f"the stream ended: {item}"
        seen.append(item)
        if want(item):
            return seen


def notice_of(kind: int):  # type: ignore[no-untyped-def]
    return lambda r: r.WhichOneof("message") == "notice" and r.notice.kind == kind


def test_black_holed_database_fails_fast_once_known_and_bots_are_told_once(outage, caplog):
    """Issue 25, item 4: once the health check knows the database is unreachable (NOT_SERVING),
    the calls that need it are UNAVAILABLE at once, not after their own bounds (a client with a
    5 s deadline saw DEADLINE_EXCEEDED call after call); each Play stream is told once, stays
    open, and has its answers refused at once; when the database is back every stream is told
    so and sent its pending turn again, and the answer to it is applied."""
    from bummerl import wire
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from serviceprocs import PlayStream

    caplog.set_level(logging.INFO)
    o = outage
    health = health_pb2_grpc.HealthStub(o.channel)
    streams = {seat: PlayStream(o.channel, o.tokens[seat]) for seat in (0, 1)}
    try:
        seat, turn = play_two(o, streams)
        o.proxy.set(BLACKHOLE)
        cut = time.monotonic()
        while health.Check(health_pb2.HealthCheckRequest(), timeout=5).status != \
                health_pb2.HealthCheckResponse.NOT_SERVING:
            assert time.monotonic() - cut < PROMPT_S, "the health check did not notice"
            time.sleep(0.05)
        known = time.monotonic() - cut
        token = o.tokens[seat]
        fast = {
            "GetMatch": lambda: o.matches.GetMatch(
                match_pb2.GetMatchRequest(match_id=o.match_id), timeout=5),
            "SubmitAction": lambda: o.matches.SubmitAction(match_pb2.SubmitActionRequest(
                match_id=o.match_id, seat=seat, expected_seq=turn.seq,
                action=turn.observation.legal_actions[0]), metadata=auth(token), timeout=5),
            "GetObservation": lambda: o.matches.GetObservation(match_pb2.GetObservationRequest(
                match_id=o.match_id, seat=seat), metadata=auth(token), timeout=5),
            "Play": lambda: list(o.bots.Play(
                iter([bot_pb2.PlayRequest(hello=bot_pb2.Hello())]), metadata=auth(token),
                timeout=5)),
        }
        times = {}
        for name, call in fast.items():
            times[name] = assert_unavailable(o, name, call)
            assert times[name] < FAST_S, f"{name}: UNAVAILABLE after {times[name]:.2f} s"
        for stream in streams.values():  # told, once
            drain_until(stream, notice_of(bot_pb2.NOTICE_KIND_DATABASE_UNAVAILABLE))
        start = time.monotonic()
        streams[seat].answer(o.match_id, turn.seq, wire.action_from_pb(
            turn.observation.legal_actions[0]), request_id="in-the-outage")
        (*_, rejected) = drain_until(streams[seat], lambda r: r.WhichOneof("message") ==
                                     "rejected")
        answered = time.monotonic() - start
        assert rejected.rejected.code == "UNAVAILABLE" and answered < FAST_S, answered
        time.sleep(2 * HEALTH_EVERY_S)  # more health checks fail: no second notice
        o.proxy.restore()
        back = time.monotonic()
        for each, stream in streams.items():
            seen = drain_until(stream, notice_of(bot_pb2.NOTICE_KIND_DATABASE_BACK))
            assert not [r for r in seen if notice_of(
                bot_pb2.NOTICE_KIND_DATABASE_UNAVAILABLE)(r)], "told twice"
            if each == seat:
                (*_, again) = drain_until(stream, lambda r: r.WhichOneof("message") == "turn")
                assert again.turn.seq == turn.seq
        told_back = time.monotonic() - back
        streams[seat].answer(o.match_id, turn.seq, wire.action_from_pb(
            turn.observation.legal_actions[0]), request_id="after-the-outage")
        wait_applied(o, turn.seq, "the answer after the outage was not applied")
        print(f"\nblack-holed: NOT_SERVING {known:.2f} s after the cut; then UNAVAILABLE in "
              + ", ".join(f"{k} {v:.3f} s" for k, v in times.items())
              + f"; a Play answer refused in {answered:.3f} s; database back: streams told "
              f"and the turn sent again {told_back:.2f} s after")
        assert_no_traceback(caplog)
    finally:
        for stream in streams.values():
            stream.close()


def test_a_turn_clock_that_runs_out_in_an_outage_is_not_charged(outage, caplog):
    """A seat whose move time runs out while the database is black-holed (its answers refused)
    does not forfeit: when the database is back every running match gets a fresh turn clock,
    the seat is sent its turn again with a deadline ahead, and its answer is applied. Before,
    the referee forfeited the seat on time as soon as it could reach the database again."""
    from bummerl import wire
    from serviceprocs import PlayStream

    caplog.set_level(logging.INFO)
    o = outage
    carol, carol_token = bots.register_bot("carol", sessions=o.sessions)
    dave, dave_token = bots.register_bot("dave", sessions=o.sessions)
    assert carol_token and dave_token
    m = matches.create_match([carol.id, dave.id], seed=5, move_ms=1500, bank_ms=0,
                             sessions=o.sessions, config=CONFIG)
    assert m.to_act is not None
    tokens = {0: carol_token, 1: dave_token}
    streams = {seat: PlayStream(o.channel, tokens[seat]) for seat in (0, 1)}
    try:
        turn = drain_until(streams[m.to_act], lambda r: r.WhichOneof("message") == "turn"
                           and r.turn.match_id == m.id)[-1].turn
        o.proxy.set(BLACKHOLE)
        time.sleep(1.5 + 2 * HEALTH_EVERY_S + 4.0)  # past the deadline, the breaker open
        o.proxy.restore()  # the seat's 1.5 s ran out long ago
        again = drain_until(streams[m.to_act], lambda r: r.WhichOneof("message") == "turn"
                            and r.turn.match_id == m.id and r.turn.seq == turn.seq)[-1].turn
        left = again.deadline.ToDatetime().timestamp() - time.time()
        assert left > 0.5, f"the turn came again with {left:.2f} s left"
        state = o.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.id), timeout=PROMPT_S)
        assert state.match.state == match_pb2.MATCH_STATE_RUNNING, state.match.end_detail
        streams[m.to_act].answer(m.id, turn.seq, wire.action_from_pb(
            again.observation.legal_actions[0]), request_id="after-the-outage")
        limit = time.monotonic() + PROMPT_S
        while o.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.id),
                                 timeout=PROMPT_S).match.seq == turn.seq:
            assert time.monotonic() < limit, "the answer after the outage was not applied"
            time.sleep(0.05)
        assert "fresh turn clocks" in caplog.text
    finally:
        for stream in streams.values():
            stream.close()


def test_calls_waiting_when_the_database_goes_dark_fail_when_the_breaker_opens(
        outage_as_deployed, caplog):
    """Issue 29: with the service's own bounds, a black-holed database (nothing answered,
    nothing closed) held the calls already waiting on it to their callers' 5 s deadlines
    (DEADLINE_EXCEEDED): the breaker refused only the calls that arrived after it opened. Now
    its opening releases every wait in flight (db.waits): a SubmitAction waiting in the database
    at the cut (on a row lock held by another session), and a GetMatch, a new Play stream and a
    SubmitAction sent 1 s after it, before the breaker opens, all hear UNAVAILABLE within ~3 s
    of the cut (the health check's interval, 1 s, plus its ping's bound, 2 s); calls after that
    are refused at once; once the database is back the service answers again."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from sqlalchemy import create_engine, text

    caplog.set_level(logging.INFO)
    o = outage_as_deployed
    deadline_s, bound_s = 5.0, 3.0 + 1.0  # the callers' deadlines; ~3 s and a loaded machine
    token = o.tokens[o.seat]
    seen = o.matches.GetObservation(match_pb2.GetObservationRequest(
        match_id=o.match_id, seat=o.seat), metadata=auth(token), timeout=10)
    submit = match_pb2.SubmitActionRequest(
        match_id=o.match_id, seat=o.seat, expected_seq=seen.seq,
        action=seen.observation.legal_actions[0])
    outcomes: dict[str, tuple[float, grpc.RpcError | None]] = {}

    def call(name: str, function) -> None:  # type: ignore[no-untyped-def]
        try:
            function()
            outcomes[name] = (time.monotonic(), None)
        except grpc.RpcError as e:
            outcomes[name] = (time.monotonic(), e)

    def submit_action() -> None:
        o.matches.SubmitAction(submit, metadata=auth(token), timeout=deadline_s)

    later = {
        "GetMatch": lambda: o.matches.GetMatch(
            match_pb2.GetMatchRequest(match_id=o.match_id), timeout=deadline_s),
        "Play (new stream)": lambda: list(o.bots.Play(
            iter([bot_pb2.PlayRequest(hello=bot_pb2.Hello())]), metadata=auth(token),
            timeout=deadline_s)),
        "SubmitAction": submit_action,
    }
    direct = create_engine(o.direct_url, connect_args={"options": f"-csearch_path={o.schema}"})
    threads = []
    try:
        with direct.connect() as holder:  # holds the match's row: the first call waits on it
            holder.execute(text("SELECT id FROM matches WHERE id = :id FOR UPDATE"),
                           {"id": o.match_id})
            first = threading.Thread(target=call, args=("SubmitAction (waiting at the cut)",
                                                        submit_action))
            first.start()
            threads.append(first)
            limit = time.monotonic() + 10
            while not holder.execute(text(  # the call waits on the lock, in the database
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database()")).scalar():
                assert time.monotonic() < limit, "the SubmitAction never waited on the lock"
                time.sleep(0.02)
            o.proxy.set(BLACKHOLE)
            cut = time.monotonic()
            holder.rollback()  # the database answers, but nothing reaches the service
        time.sleep(1.0)
        for name, function in later.items():
            threads.append(threading.Thread(target=call, args=(name, function)))
            threads[-1].start()
        for thread in threads:
            thread.join(timeout=deadline_s + 5)
        health = health_pb2_grpc.HealthStub(o.channel)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == \
            health_pb2.HealthCheckResponse.NOT_SERVING
        after = time.monotonic()
        call("GetMatch (after the breaker opened)", later["GetMatch"])
        refused_in = outcomes["GetMatch (after the breaker opened)"][0] - after
    finally:
        direct.dispose()
    seen = {name: (round(at - cut, 2), e.code().name if e else "OK")
            for name, (at, e) in outcomes.items()}
    print(f"\nblack-holed, seconds after the cut: {seen}; a call after the breaker opened "
          f"refused in {refused_in:.3f} s")
    for name, (at, error) in outcomes.items():
        assert error is not None, f"{name} succeeded through a black hole"
        assert error.code() == grpc.StatusCode.UNAVAILABLE, (name, error.code(), error.details())
        assert error.details() == UNAVAILABLE_MESSAGE, (name, error.details())
        assert at - cut < bound_s, f"{name}: UNAVAILABLE {at - cut:.2f} s after the cut"
    assert refused_in < FAST_S
    o.proxy.restore()
    print(f"recovered {wait_until_recovered(o):.2f} s after the database came back")
    answer = o.matches.GetMatch(match_pb2.GetMatchRequest(match_id=o.match_id), timeout=10)
    assert answer.match.match_id == o.match_id
    assert_no_traceback(caplog)
