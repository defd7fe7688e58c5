"""The legs of a duplicate pair through the real service's CreateMatch (pair_id, pair_leg): made
from the pair's row, mirrored (same decks, same first dealer seat, seats swapped), idempotent,
refused for a pair not being played, and named on the bots' turns (Turn.event)."""

from __future__ import annotations

import grpc
import pytest
from bummerl.v1 import match_pb2
from servicekit import OPERATOR, auth, fresh_database, running_service
from serviceprocs import PlayStream
from sqlalchemy import func, select

import engine
from db.models import ORIGIN_TOURNAMENT, Match
from db.pairs import PLAYING, VOID, WAITING, DuplicatePair
from services.core import matches as plain


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def add_pair(service, a: int, b: int, state: str = PLAYING, seed: int = 4242,
             owner_id: int = 7, round_: int = 3, board: int = 1) -> int:
    with service.sessions.begin() as s:
        pair = DuplicatePair(owner="tournament", owner_id=owner_id, round=round_, board=board,
                             seed=seed, bot_a_id=a, bot_b_id=b, profile="soft", move_ms=4000,
                             bank_ms=9000, rated=False, state=state)
        s.add(pair)
        s.flush()
        return pair.id


def create_leg(service, pair_id: int, leg: int, **fields) -> match_pb2.Match:
    return service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        pair_id=pair_id, pair_leg=leg, **fields), metadata=auth(OPERATOR)).match


def test_both_legs_come_from_the_pair_and_mirror_each_other(service):
    a, _ = service.register("alpha")
    b, _ = service.register("beta")
    pair_id = add_pair(service, a, b)
    first = create_leg(service, pair_id, 0)
    second = create_leg(service, pair_id, 1)
    assert list(first.bot_ids) == [a, b] and list(second.bot_ids) == [b, a]
    for leg, m in enumerate((first, second)):
        assert (m.event.kind, m.event.event_id, m.event.round, m.event.pair_id,
                m.event.pair_leg) == (match_pb2.EVENT_KIND_TOURNAMENT, 7, 3, pair_id, leg)
        assert (m.time_control.move_ms, m.time_control.bank_ms) == (4000, 9000)
    with service.sessions() as s:
        pair = s.get(DuplicatePair, pair_id)
        assert (pair.match_a_id, pair.match_b_id) == (first.match_id, second.match_id)
        rows = [s.get(Match, m.match_id) for m in (first, second)]
        assert [(r.seed, r.origin, r.rated) for r in rows] == [(4242, ORIGIN_TOURNAMENT,
                                                                False)] * 2
    # What is mirrored: the same deck of hand 0 and the same first dealer *seat*, so the cards
    # bot a holds in leg 0 are the ones bot b holds in leg 1, each with the same role.
    views = [plain.get_observation(m.match_id, 0, sessions=service.sessions)[0]
             for m in (first, second)]
    assert views[0].hand == views[1].hand and views[0].dealer == views[1].dealer
    assert views[0].trump_card == views[1].trump_card
    other = [plain.get_observation(m.match_id, 1, sessions=service.sessions)[0]
             for m in (first, second)]
    assert other[0].hand == other[1].hand and set(other[0].hand).isdisjoint(views[0].hand)
    assert engine.deal.first_dealer_for(4242) == views[0].dealer


def test_a_leg_asked_for_again_is_the_same_match(service):
    a, _ = service.register("alpha")
    b, _ = service.register("beta")
    pair_id = add_pair(service, a, b)
    first = create_leg(service, pair_id, 0)
    again = create_leg(service, pair_id, 0, bot_ids=[a, b])  # agreeing fields are fine
    assert again.match_id == first.match_id
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 1


@pytest.mark.parametrize("state", [WAITING, VOID, "forfeited", "done"])
def test_a_pair_not_being_played_gets_no_match(service, state):
    a, _ = service.register("alpha")
    b, _ = service.register("beta")
    pair_id = add_pair(service, a, b, state=state)
    with pytest.raises(grpc.RpcError) as caught:
        create_leg(service, pair_id, 1)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"duplicate pair {pair_id} is {state}" in caught.value.details()
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 0
        assert s.get(DuplicatePair, pair_id).match_b_id is None


def test_bad_pair_requests_are_refused_and_change_nothing(service):
    a, a_token = service.register("alpha")
    b, _ = service.register("beta")
    c, _ = service.register("gamma")
    pair_id = add_pair(service, a, b)
    cases = [
        (dict(pair_id=pair_id, pair_leg=2), grpc.StatusCode.INVALID_ARGUMENT, "pair_leg"),
        (dict(pair_id=pair_id + 99, pair_leg=0), grpc.StatusCode.NOT_FOUND, "no duplicate pair"),
        (dict(pair_id=pair_id, pair_leg=0, bot_ids=[a, c]), grpc.StatusCode.INVALID_ARGUMENT,
         "bot_ids"),
        (dict(pair_id=pair_id, pair_leg=1, bot_ids=[a, b]), grpc.StatusCode.INVALID_ARGUMENT,
         "bot_ids"),
        (dict(pair_id=pair_id, pair_leg=0, seed=5), grpc.StatusCode.INVALID_ARGUMENT, "seed"),
        (dict(pair_id=pair_id, pair_leg=0, time_control=match_pb2.TimeControl(move_ms=1)),
         grpc.StatusCode.INVALID_ARGUMENT, "time_control.move_ms"),
        (dict(pair_id=pair_id, pair_leg=0, ladder=True), grpc.StatusCode.INVALID_ARGUMENT,
         "ladder"),
    ]
    for fields, code, words in cases:
        with pytest.raises(grpc.RpcError) as caught:
            service.matches.CreateMatch(match_pb2.CreateMatchRequest(**fields),  # type: ignore[arg-type]
                                        metadata=auth(OPERATOR))
        assert caught.value.code() == code, fields
        assert words in caught.value.details(), (fields, caught.value.details())
        assert "4242" not in caught.value.details()  # the pair's seed is never told
    with pytest.raises(grpc.RpcError) as caught:  # a bot's own token may not make matches
        service.matches.CreateMatch(match_pb2.CreateMatchRequest(pair_id=pair_id, pair_leg=0),
                                    metadata=auth(a_token))
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 0


def test_the_bots_turns_say_which_event_round_and_pair(service):
    a, a_token = service.register("alpha")
    b, b_token = service.register("beta")
    streams = [PlayStream(service.channel, token) for token in (a_token, b_token)]
    try:
        for stream in streams:
            stream.next("welcome")
        pair_id = add_pair(service, a, b, round_=2)
        made = [create_leg(service, pair_id, leg) for leg in (0, 1)]
        # The same seat leads in both legs (the same first dealer seat), so each bot has the
        # first turn of one leg.
        seen = {}
        for stream in streams:
            turn = stream.next("turn").turn
            seen[turn.match_id] = turn.event
        assert set(seen) == {m.match_id for m in made}
        for m in made:
            event = seen[m.match_id]
            assert (event.kind, event.event_id, event.round, event.pair_id, event.pair_leg) == (
                match_pb2.EVENT_KIND_TOURNAMENT, 7, 2, pair_id, m.event.pair_leg)
        # A match of no event says none.
        plain_match = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=[a, b]), metadata=auth(OPERATOR)).match
        assert not plain_match.HasField("event")
    finally:
        for stream in streams:
            stream.close()


def test_racing_requests_for_one_leg_make_one_match(service):
    """Schedulers racing (two workers, or a retry overtaking a slow first call): the unique
    (pair_id, pair_leg) key lets one insert win; the others get the winner's match."""
    from concurrent.futures import ThreadPoolExecutor

    from services.core.pairs import create_pair_match

    a, _ = service.register("alpha")
    b, _ = service.register("beta")
    pair_id = add_pair(service, a, b)
    with ThreadPoolExecutor(6) as pool:
        made = list(pool.map(lambda _: create_pair_match(pair_id, 0, sessions=service.sessions),
                             range(6)))
    assert len({m.id for m in made}) == 1
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 1
        assert s.get(DuplicatePair, pair_id).match_a_id == made[0].id
