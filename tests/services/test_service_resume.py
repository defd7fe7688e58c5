"""A restarted service resumes every unfinished match exactly; a silent client forfeits on
time; a disconnected bot gets its turn again when it reconnects."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import bot_pb2, match_pb2
from servicekit import auth, play_in_threads, running_service

import engine
from db.settings import Settings
from examples.random_bot import RandomBot
from services.core import actions, clocks
from services.core import cache as game_states
from services.core import matches as plain


def test_restart_mid_match_resumes_exactly(database):
    with running_service(database) as service:
        a_id, a_token = service.register("a")
        b_id, b_token = service.register("b")
        tokens = {0: a_token, 1: b_token}
        ids = [plain.create_match([a_id, b_id], seed=s, sessions=service.sessions,
                                  config=service.config).id for s in (21, 22)]
        games = {i: engine.Match(s, "soft") for i, s in zip(ids, (21, 22), strict=True)}
        # play 15 actions of each match by unary calls
        for match_id, game in games.items():
            for _ in range(15):
                seat = game.to_act
                action = next(a for a in game.legal_actions()
                              if a.kind == engine.ActionKind.PLAY)
                service.matches.SubmitAction(match_pb2.SubmitActionRequest(
                    match_id=match_id, seat=seat, expected_seq=len(game.history),
                    action=wire.action_to_pb(action)), metadata=auth(tokens[seat]))
                game.apply(seat, action)
        service.restart()  # a new server process: new engine, empty caches
        game_states._cache.clear()
        for match_id, game in games.items():
            seat = game.to_act
            got = service.matches.GetObservation(
                match_pb2.GetObservationRequest(match_id=match_id, seat=seat),
                metadata=auth(tokens[seat]))
            assert wire.observation_from_pb(got.observation) == game.observe(seat)
            assert got.seq == len(game.history)
            m = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id)).match
            assert m.state == match_pb2.MATCH_STATE_RUNNING
            assert list(m.counters) == list(game.counters)
        # and the bots finish both matches on the restarted server
        play_in_threads(service, [(RandomBot(1), a_token), (RandomBot(2), b_token)], matches=2)
        for match_id in ids:
            m = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id)).match
            assert m.state == match_pb2.MATCH_STATE_FINISHED
            assert m.end_reason == match_pb2.END_REASON_PLAYED


FAST = Settings(operator_token_sha256=None, move_ms=300, bank_ms=400, max_illegal=3)


def test_a_client_that_never_answers_forfeits_on_time(database):
    with running_service(database, FAST) as service:
        a_id, a_token = service.register("silent")
        b_id, b_token = service.register("b")
        started = time.monotonic()  # before the turn's clock starts (in create_match)
        m = plain.create_match([a_id, b_id], seed=8, sessions=service.sessions, config=FAST)
        silent_seat = m.to_act
        silent_token = a_token if silent_seat == 0 else b_token
        # the silent bot connects, is sent its turn, and never answers
        requests_done = threading.Event()

        def requests():
            yield bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="silent"))
            requests_done.wait(10)

        stream = service.bots.Play(requests(), metadata=auth(silent_token), timeout=10)
        received = []
        for response in stream:
            received.append(response.WhichOneof("message"))
            if received[-1] == "match_ended":
                ended = response.match_ended
                break
        elapsed = time.monotonic() - started
        requests_done.set()
        assert received[:2] == ["welcome", "turn"]
        assert not ended.won and ended.seat == silent_seat
        assert ended.match.end_reason == match_pb2.END_REASON_FORFEIT_TIMEOUT
        assert ended.match.forfeit_seat == silent_seat and ended.match.winner == 1 - silent_seat
        assert "on time" in ended.match.end_detail
        assert 0.6 <= elapsed < 5  # move time + bank, then the referee's next round


def test_a_bot_that_disconnects_gets_its_turn_again(database):
    with running_service(database, FAST) as service:
        a_id, a_token = service.register("a")
        b_id, b_token = service.register("b")
        m = plain.create_match([a_id, b_id], seed=9, sessions=service.sessions,
                               config=Settings(move_ms=5000, bank_ms=0))
        token = a_token if m.to_act == 0 else b_token
        for _ in range(2):  # connect, get the turn, drop the connection; twice
            stream = service.bots.Play(iter([]), metadata=auth(token), timeout=5)
            kinds = []
            for response in stream:
                kinds.append(response.WhichOneof("message"))
                if kinds[-1] == "turn":
                    assert response.turn.seq == 0 and response.turn.match_id == m.id
                    stream.cancel()
                    break
            assert kinds == ["welcome", "turn"]
        got = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.id)).match
        assert got.state == match_pb2.MATCH_STATE_RUNNING


def test_server_refuses_answers_after_the_deadline(database):
    with running_service(database, FAST) as service:
        a_id, a_token = service.register("a")
        b_id, b_token = service.register("b")
        m = plain.create_match([a_id, b_id], seed=10, sessions=service.sessions, config=FAST)
        service.server.stop(grace=0)  # no referee: the late submit itself finds the time-out
        seat = m.to_act
        action = engine.Match(10, "soft").legal_actions()[0]
        time.sleep(0.8)
        with pytest.raises(Exception) as info:
            actions.submit_action(m.id, seat, action, expected_seq=0, sessions=service.sessions,
                                  config=FAST)
        assert "forfeited on time" in str(info.value)
        got = plain.get_match(m.id, sessions=service.sessions)
        assert got.end_reason == "forfeit_timeout" and got.winner == 1 - seat
        service.server = type(service.server)("127.0.0.1:0", sessions=service.sessions,
                                              config=FAST).start()
        service.channel = grpc.insecure_channel(service.server.address)


def test_time_over_the_move_time_comes_from_the_bank(database):
    """The bank is charged the time used beyond the move time, measured against the actual
    elapsed time (bounded by clock readings around the turn's start and the submit), so a
    loaded machine does not make it flaky; a large bank keeps a slow run from timing out."""
    move_ms, bank_ms = 200, 20000  # the floor (services.core.bounds.MIN_MOVE_MS)
    config = Settings(move_ms=move_ms, bank_ms=bank_ms)
    with running_service(database, config) as service:
        a_id, a_token = service.register("a")
        b_id, b_token = service.register("b")
        started_before = time.time()
        m = plain.create_match([a_id, b_id], seed=13, sessions=service.sessions, config=config)
        started_after = time.time()
        seat = m.to_act
        game = engine.Match(13, "soft")
        time.sleep(0.5)
        submitted_before = time.time()
        result = actions.submit_action(m.id, seat, game.legal_actions()[0], expected_seq=0,
                                       sessions=service.sessions, config=config)
        submitted_after = time.time()
        left = clocks.bank_left(result.match, seat)
        charged = bank_ms - left
        # the time over the move time, bounded by what the clocks saw (+ 5 ms for rounding)
        least = (submitted_before - started_after) * 1000 - move_ms
        most = (submitted_after - started_before) * 1000 - move_ms
        assert least >= 290  # the 0.5 s sleep is ~300 ms over the move time
        assert least - 5 <= charged <= most + 5, (least, charged, most)
        assert clocks.bank_left(result.match, 1 - seat) == bank_ms
        # the next deadline is the next seat's move time + its whole bank, from the submit
        got = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.id)).match
        assert list(got.bank_left_ms)[seat] == left
        deadline = got.deadline.seconds + got.deadline.nanos / 1e9
        whole = (move_ms + bank_ms) / 1000
        assert submitted_before + whole - 0.005 <= deadline <= submitted_after + whole + 0.005


class SlowRandom(RandomBot):
    def act(self, observation):
        time.sleep(0.01)
        return super().act(observation)


def test_connected_bots_reconnect_and_finish_after_a_restart(database):
    from client import Runner
    from services.api.server import create_server

    with running_service(database) as service:
        a_id, a_token = service.register("a")
        b_id, b_token = service.register("b")
        m = plain.create_match([a_id, b_id], seed=30, sessions=service.sessions,
                               config=service.config)
        address = service.server.address
        runners = [Runner(SlowRandom(i), address, token, max_matches=1)
                   for i, token in enumerate((a_token, b_token))]
        threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while plain.get_match(m.id, sessions=service.sessions).seq < 8:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        service.server.stop(grace=0)  # the service goes down mid-match ...
        game_states._cache.clear()
        service.server = create_server(address, sessions=service.sessions,
                                       config=service.config).start()  # ... and comes back
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        final = plain.get_match(m.id, sessions=service.sessions)
        assert final.state == "finished" and final.end_reason == "played"
        game = engine.Match(30, "soft")
        _, _, log = plain.match_hands(m.id, sessions=service.sessions)
        for row in log:
            game.apply(row.seat, engine.Action.from_text(row.action))
        assert game.winner == final.winner
