"""Full matches between bots connected over the Play stream, on SQLite and PostgreSQL."""

from __future__ import annotations

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import common_pb2, match_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from servicekit import OPERATOR, auth, fresh_database, play_in_threads, running_service

import engine
from client import Bot
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot
from services.core import matches as plain


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


class Checking(Bot):
    """Records every observation it gets, and plays via another bot."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.seen: list[engine.Observation] = []
        self.hands_ended = 0
        self.results: dict[int, list[dict]] = {}  # match id -> the hand results it was sent
        self.ended: list[tuple[int, bool, str]] = []

    def act(self, observation):
        self.seen.append(observation)
        return self.inner.act(observation)

    def hand_ended(self, match_id, hand_number, result):
        self.hands_ended += 1
        assert hand_number == len(self.results.setdefault(match_id, []))
        self.results[match_id].append(result)

    def match_ended(self, match_id, won, detail):
        self.ended.append((match_id, won, detail))


def test_full_matches_between_connected_bots(service):
    a_id, a_token = service.register("randy")
    b_id, b_token = service.register("simple")
    created = []
    for seed in (1, 2, 3):  # several matches at once, seats swapped
        bots_ = [a_id, b_id] if seed % 2 else [b_id, a_id]
        response = service.matches.CreateMatch(
            match_pb2.CreateMatchRequest(bot_ids=bots_, seed=seed), metadata=auth(OPERATOR))
        created.append(response.match.match_id)
    a, b = Checking(RandomBot(7)), Checking(SimpleBot())
    runners = play_in_threads(service, [(a, a_token), (b, b_token)], matches=3)
    assert runners[0].stats.rejected == 0 and runners[1].stats.rejected == 0
    assert len(a.ended) == len(b.ended) == 3
    assert a.hands_ended >= 3 and a.hands_ended == b.hands_ended
    for match_id in created:
        got = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id))
        m = got.match
        assert m.state == match_pb2.MATCH_STATE_FINISHED
        assert m.end_reason == match_pb2.END_REASON_PLAYED
        assert min(m.counters) <= 0 and m.winner in (0, 1) and m.seed != 0
        # the log replays to the same result (the engine is the authority)
        log = [(x.seat, wire.action_from_pb(x.action)) for h in got.hands for x in h.actions]
        assert len(log) == m.seq
        game = engine.Match.replay(m.seed, "soft", log)
        assert game.winner == m.winner and list(game.counters) == list(m.counters)
        assert [h.result.winner for h in got.hands] == [r.winner for r in game.results]
        # the hand ends pushed to both bots are the recorded ones (mid-match ones come from
        # the cached game, the last one from the database)
        recorded = [{"winner": h.result.winner, "game_points": h.result.game_points,
                     "reason": h.result.reason, "points": list(h.result.points),
                     "tricks": list(h.result.tricks)} for h in got.hands if h.HasField("result")]
        assert a.results[match_id] == b.results[match_id] == recorded
    # each observation held exactly what the seat may know: its own cards, the legal actions
    for bot in (a, b):
        assert bot.seen
        for obs in bot.seen:
            assert obs.to_act == obs.seat and obs.legal_actions
            assert not set(obs.hand) & obs.played_cards()


def test_turn_observations_hold_only_own_cards(service):
    a_id, a_token = service.register("a")
    b_id, b_token = service.register("b")
    m = plain.create_match([a_id, b_id], seed=11, sessions=service.sessions,
                           config=service.config)
    game = engine.Match(11, "soft")
    seat = game.to_act
    token = a_token if seat == 0 else b_token
    got = service.matches.GetObservation(
        match_pb2.GetObservationRequest(match_id=m.id, seat=seat), metadata=auth(token))
    assert list(got.observation.hand) == [str(c) for c in game.observe(seat).hand]
    assert got.seq == 0 and got.deadline.seconds > 0
    assert len(got.observation.legal_actions) == len(game.legal_actions())
    # the message has no field that could hold the opponent's cards or the stock order
    names = {f.name for f in common_pb2.Observation.DESCRIPTOR.fields}
    assert not names & {"opponent_hand", "stock", "deck", "seed"}
    # the seed stays hidden while the match runs
    assert service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.id)).match.seed == 0


def test_spectator_stream_sees_every_public_event(service):
    a_id, a_token = service.register("a")
    b_id, b_token = service.register("b")
    m = plain.create_match([a_id, b_id], seed=5, sessions=service.sessions,
                           config=service.config)
    stream = service.matches.WatchMatch(match_pb2.WatchMatchRequest(match_id=m.id), timeout=60)
    play_in_threads(service, [(RandomBot(1), a_token), (RandomBot(2), b_token)], matches=1)
    events = list(stream)
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[-1] == "match_ended"
    actions = [e.action for e in events if e.HasField("action")]
    assert [x.seq for x in actions] == list(range(len(actions)))
    final = events[-1].match_ended
    assert final.seq == len(actions)
    assert kinds.count("hand_ended") == len(
        service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=m.id)).hands)


def test_list_matches_filters_and_pages(service):
    a_id, _ = service.register("a")
    b_id, _ = service.register("b")
    c_id, _ = service.register("c")
    ids = [plain.create_match(pair, seed=i, sessions=service.sessions, config=service.config).id
           for i, pair in enumerate([[a_id, b_id], [a_id, c_id], [b_id, c_id]] * 2)]
    seen, token = [], ""
    while True:
        page = service.matches.ListMatches(
            match_pb2.ListMatchesRequest(bot_id=a_id, page_size=3, page_token=token))
        seen += [m.match_id for m in page.matches]
        token = page.next_page_token
        if not token:
            break
    assert seen == sorted([i for i, k in zip(ids, range(6), strict=True) if k % 3 != 2],
                          reverse=True)
    running = service.matches.ListMatches(
        match_pb2.ListMatchesRequest(state=match_pb2.MATCH_STATE_RUNNING, page_size=100))
    assert len(running.matches) == 6
    finished = service.matches.ListMatches(
        match_pb2.ListMatchesRequest(state=match_pb2.MATCH_STATE_FINISHED))
    assert len(finished.matches) == 0


def test_health_and_reflection(service):
    health = health_pb2_grpc.HealthStub(service.channel)
    for name in ("", "bummerl.v1.MatchService", "bummerl.v1.BotService"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(service.channel)
    replies = list(stub.ServerReflectionInfo(iter(
        [reflection_pb2.ServerReflectionRequest(list_services="")])))
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"bummerl.v1.MatchService", "bummerl.v1.BotService",
            "grpc.health.v1.Health"} <= names
    with pytest.raises(grpc.RpcError):
        health.Check(health_pb2.HealthCheckRequest(service="nope"))
