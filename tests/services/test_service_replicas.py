"""More than one replica, and crashes, with real server processes (`bummerl serve`):

- two replicas on one database and one change bus (Redis): bots connected to different
  replicas play a match to its end, each turn pushed across (the safety-net reads are set to a
  minute, so only the bus can deliver them in time);
- a change committed by one replica reaches a Play stream on the other promptly;
- `kill -9` of the service right after it acknowledged an action loses nothing: the action is
  in the log and the match resumes on the restarted service.
SQLite and PostgreSQL.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
import urllib.request

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import match_pb2
from serviceprocs import PlayStream, ServiceProcess, auth, database_url, free_port
from sqlalchemy import select

import engine
from client import Runner
from db.base import make_session_factory
from db.models import ActionLog
from examples.random_bot import RandomBot

# safety-net reads a minute apart: only the bus can deliver turns in time; no time banks
REPLICA_ENV = {"BUMMERL_SAFETY_S": "60", "BUMMERL_POLL_S": "60", "BUMMERL_BANK_MS": "0"}


@pytest.fixture(params=["sqlite", "postgres"])
def url(request, tmp_path):
    with database_url(request.param, request, tmp_path) as u:
        yield u


@pytest.fixture
def replicas(url, redis_url, tmp_path):
    """Two service processes on one database, with the change bus on the test Redis."""
    started: list[ServiceProcess] = []
    try:
        for i in range(2):  # one after the other: the first applies the migrations
            started.append(ServiceProcess(url, tmp_path / f"replica{i}.log",
                                          BUMMERL_BUS_URL=redis_url, **REPLICA_ENV))
        yield started
    finally:
        for p in started:
            p.stop()


class TimedRunner(Runner):
    """Records, per match, the time from an answer queued to the next turn received."""

    sent: dict[int, float] = {}
    gaps: list[float] = []
    lock = threading.Lock()

    def on_answer(self, turn) -> None:  # type: ignore[no-untyped-def]
        with self.lock:
            self.sent[turn.match_id] = time.perf_counter()

    def on_turn(self, turn) -> None:  # type: ignore[no-untyped-def]
        now = time.perf_counter()
        with self.lock:
            start = self.sent.pop(turn.match_id, None)
            if start is not None:
                self.gaps.append(now - start)


def test_bots_on_two_replicas_play_a_match_to_its_end_with_pushed_turns(replicas):
    one, two = replicas
    a_id, a_token = one.register("on-replica-1")
    b_id, b_token = two.register("on-replica-2")
    TimedRunner.gaps, TimedRunner.sent = [], {}
    runners = [TimedRunner(RandomBot(1), one.address, a_token, max_matches=1),
               TimedRunner(RandomBot(2), two.address, b_token, max_matches=1)]
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for t in threads:
        t.start()
    time.sleep(1.0)  # both streams open: the match's creation is pushed as well
    m = two.create_match([a_id, b_id], seed=31)
    for t in threads:
        t.join(120)
    for r in runners:
        r.stop()
    assert not any(t.is_alive() for t in threads), "the match did not finish in time"
    final = one.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.match_id)).match
    assert final.state == match_pb2.MATCH_STATE_FINISHED
    assert final.end_reason == match_pb2.END_REASON_PLAYED, final.end_detail
    gaps = sorted(TimedRunner.gaps)
    print(f'turn gaps: median {statistics.median(gaps):.4f} s, largest {gaps[-3:]}')
    assert len(gaps) >= 20
    # every turn crossed replicas (the opponent answered on the other one); generous bounds
    assert statistics.median(gaps) < 0.5, gaps
    assert gaps[-1] < 5.0, gaps


def test_a_change_committed_on_one_replica_is_pushed_from_the_other_promptly(replicas):
    one, two = replicas
    a_id, a_token = one.register("listener")
    b_id, b_token = one.register("actor")
    seed = next(s for s in range(100) if engine.Match(s, "soft").to_act == 1)
    m = one.create_match([a_id, b_id], seed=seed)  # seat 1 (the actor) acts first
    stream = PlayStream(one.channel, a_token)  # the listener's stream is on replica 1
    try:
        stream.next("welcome")
        game = engine.Match(seed, "soft")
        delays = []
        for _ in range(6):
            if game.to_act == 1:  # the actor submits on replica 2
                action = game.legal_actions()[0]
                started = time.perf_counter()
                two.matches.SubmitAction(match_pb2.SubmitActionRequest(
                    match_id=m.match_id, seat=1, expected_seq=len(game.history),
                    action=wire.action_to_pb(action), request_id=f"r{len(game.history)}"),
                    metadata=auth(b_token))
                game.apply(1, action)
                if game.to_act == 0:
                    turn = stream.next("turn").turn
                    delays.append(time.perf_counter() - started)
                    assert turn.seq == len(game.history)
            else:  # the listener answers by a unary call on its replica (acknowledged)
                action = game.legal_actions()[0]
                one.matches.SubmitAction(match_pb2.SubmitActionRequest(
                    match_id=m.match_id, seat=0, expected_seq=len(game.history),
                    action=wire.action_to_pb(action), request_id=f"a{len(game.history)}"),
                    metadata=auth(a_token))
                game.apply(0, action)
        assert delays
        assert statistics.median(delays) < 0.5, delays
    finally:
        stream.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_kill_9_after_turns_on_the_play_stream_loses_nothing(kind, request, tmp_path):
    """The Play stream's path (applied on the event loop, appended by the group commit with
    the actions of the other matches): a turn at seq s is sent only once the action at s - 1 is
    committed, so after `kill -9` the log holds every action a turn acknowledged."""
    with database_url(kind, request, tmp_path) as url:
        service = ServiceProcess(url, tmp_path / "service.log")
        streams: list[PlayStream] = []
        sessions = None
        try:
            a_id, a_token = service.register("a")
            b_id, b_token = service.register("b")
            assert service.channel is not None
            streams = [PlayStream(service.channel, token) for token in (a_token, b_token)]
            games = {service.create_match([a_id, b_id], seed=seed).match_id:
                     engine.Match(seed, "soft") for seed in range(11, 17)}
            acknowledged = dict.fromkeys(games, 0)  # match -> actions a turn acknowledged
            deadline = time.monotonic() + 60
            while min(acknowledged.values()) < 8:  # several rounds of concurrent submits
                assert time.monotonic() < deadline, acknowledged
                for stream in streams:
                    while not stream.responses.empty():
                        item = stream.responses.get()
                        assert not isinstance(item, grpc.RpcError), item
                        assert item.WhichOneof("message") != "rejected", item
                        if item.WhichOneof("message") != "turn":
                            continue
                        turn = item.turn
                        game = games[turn.match_id]
                        assert turn.seq == len(game.history) and turn.seat == game.to_act
                        acknowledged[turn.match_id] = turn.seq
                        action = game.legal_actions()[0]
                        game.apply(turn.seat, action)
                        stream.answer(turn.match_id, turn.seq, action, f"p{turn.seq}")
                time.sleep(0.001)
            service.kill()
            sessions = make_session_factory(url)
            with sessions() as s:
                for match_id, game in games.items():
                    logged = list(s.scalars(select(ActionLog.action).where(
                        ActionLog.match_id == match_id).order_by(ActionLog.seq)))
                    assert len(logged) >= acknowledged[match_id], (match_id, logged)
                    assert logged == [str(a) for _, a in game.history][:len(logged)]
        finally:
            for stream in streams:
                stream.close()
            service.stop()
            if sessions is not None:
                sessions.kw["bind"].dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_kill_9_after_an_acknowledged_action_loses_nothing(kind, request, tmp_path):
    with database_url(kind, request, tmp_path) as url:
        service = ServiceProcess(url, tmp_path / "service.log")
        sessions = None
        try:
            a_id, a_token = service.register("a")
            b_id, b_token = service.register("b")
            tokens = {0: a_token, 1: b_token}
            m = service.create_match([a_id, b_id], seed=7)
            game = engine.Match(7, "soft")
            for _ in range(3):  # acknowledged, then killed before anything else happens
                seat, seq = game.to_act, len(game.history)
                action = game.legal_actions()[0]
                reply = service.matches.SubmitAction(match_pb2.SubmitActionRequest(
                    match_id=m.match_id, seat=seat, expected_seq=seq,
                    action=wire.action_to_pb(action), request_id=f"k{seq}"),
                    metadata=auth(tokens[seat]))
                assert reply.seq == seq and not reply.duplicate
                service.kill()
                game.apply(seat, action)
                sessions = sessions or make_session_factory(url)
                with sessions() as s:
                    logged = list(s.scalars(select(ActionLog.action).where(
                        ActionLog.match_id == m.match_id).order_by(ActionLog.seq)))
                assert logged == [str(a) for _, a in game.history]
                service.start()
                # the retry of the acknowledged submit is recognised, not applied twice
                again = service.matches.SubmitAction(match_pb2.SubmitActionRequest(
                    match_id=m.match_id, seat=seat, expected_seq=seq,
                    action=wire.action_to_pb(action), request_id=f"k{seq}"),
                    metadata=auth(tokens[seat]))
                assert again.duplicate and again.seq == seq
            # the match resumes: the bots finish it on the restarted service
            runners = [Runner(RandomBot(3), service.address, a_token, max_matches=1),
                       Runner(RandomBot(4), service.address, b_token, max_matches=1)]
            threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
            for t in threads:
                t.start()
            for t in threads:
                t.join(90)
            for r in runners:
                r.stop()
            final = service.matches.GetMatch(
                match_pb2.GetMatchRequest(match_id=m.match_id)).match
            assert final.state == match_pb2.MATCH_STATE_FINISHED, final
            assert final.end_reason == match_pb2.END_REASON_PLAYED
        finally:
            service.stop()
            if sessions is not None:
                sessions.kw["bind"].dispose()


def test_without_the_bus_replicas_still_finish_a_match_by_the_safety_net(url, tmp_path):
    """The bus is down (nothing listens at its address): turns come late, never lost."""
    started: list[ServiceProcess] = []
    try:
        for i in range(2):
            started.append(ServiceProcess(url, tmp_path / f"replica{i}.log",
                                          BUMMERL_BUS_URL="redis://127.0.0.1:9/0",
                                          BUMMERL_POLL_S="0.05"))
        one, two = started
        a_id, a_token = one.register("a")
        b_id, b_token = two.register("b")
        runners = [Runner(RandomBot(5), one.address, a_token, max_matches=1),
                   Runner(RandomBot(6), two.address, b_token, max_matches=1)]
        threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
        for t in threads:
            t.start()
        m = one.create_match([a_id, b_id], seed=8)
        for t in threads:
            t.join(120)
        for r in runners:
            r.stop()
        final = two.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.match_id)).match
        assert final.state == match_pb2.MATCH_STATE_FINISHED
        assert final.end_reason == match_pb2.END_REASON_PLAYED, final.end_detail
    finally:
        for p in started:
            p.stop()


def test_two_referees_forfeit_a_silent_seat_once(replicas):
    one, two = replicas
    a_id, _ = one.register("silent-a")
    b_id, _ = one.register("silent-b")
    m = one.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_ids=[a_id, b_id], seed=3,
        time_control=match_pb2.TimeControl(move_ms=300)),
        metadata=(("authorization", "Bearer process-operator"),)).match
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        final = two.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.match_id)).match
        if final.state == match_pb2.MATCH_STATE_FINISHED:
            break
        time.sleep(0.1)
    assert final.end_reason == match_pb2.END_REASON_FORFEIT_TIMEOUT, final
    assert final.forfeit_seat == engine.Match(3, "soft").to_act and final.seq == 0
    time.sleep(0.5)  # both referees had their turns since: nothing changes any more
    again = one.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.match_id)).match
    assert again.end_detail == final.end_detail and again.finished_at == final.finished_at


def scrape(port: int, name: str) -> float:
    """A metric of a replica (its /metrics on `port`), summed over its labels."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? ([0-9.e+-]+)$", text,
                                            re.M))


def test_a_replica_hears_only_the_changes_of_the_bots_and_matches_it_serves(
        url, redis_url, tmp_path):
    """The bus routes a change to the channels of its match and its bots: a replica that
    serves neither hears nothing of it (with one channel per site, every replica heard every
    change of every other: bench/bus.py); one that serves a bot of it hears it."""
    ports = [free_port(), free_port(), free_port()]
    started = []
    try:
        for i, port in enumerate(ports):
            started.append(ServiceProcess(url, tmp_path / f"replica{i}.log",
                                          BUMMERL_BUS_URL=redis_url,
                                          BUMMERL_METRICS_PORT=str(port), **REPLICA_ENV))
        one, two, three = started
        a_id, a_token = one.register("home-a")
        b_id, b_token = one.register("home-b")
        c_id, c_token = two.register("elsewhere")
        watcher = PlayStream(two.channel, c_token)  # replica 2 serves bot c only
        watcher.next("welcome")
        assert scrape(ports[1], "bummerl_bus_channels") == 1
        runners = [Runner(RandomBot(1), one.address, a_token, max_matches=1),
                   Runner(RandomBot(2), one.address, b_token, max_matches=1)]
        threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
        for t in threads:
            t.start()
        time.sleep(1.0)
        one.create_match([a_id, b_id], seed=41)  # both bots on replica 1
        for t in threads:
            t.join(120)
        for r in runners:
            r.stop()
        assert not any(t.is_alive() for t in threads), "the match did not finish in time"
        # a match of bot c made on replica 3 is heard on replica 2, which serves c
        seed = next(s for s in range(100) if engine.Match(s, "soft").to_act == 0)
        three.create_match([c_id, a_id], seed=seed)  # c to act: its turn comes over the bus
        assert watcher.next("turn", timeout=10).turn.seat == 0
        assert scrape(ports[1], "bummerl_bus_received_total") >= 1
        assert scrape(ports[2], "bummerl_bus_received_total") == 0  # serves nothing
        heard_two = scrape(ports[1], "bummerl_bus_received_total")
        assert heard_two <= 3, heard_two  # only the changes of c's match, not the played one
        watcher.close()
    finally:
        for p in started:
            p.stop()
