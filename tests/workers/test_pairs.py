"""The duplicate-pair scheduler (`workers.pairs`) against a real engine service (in this process,
over gRPC with the house token), on SQLite and PostgreSQL: due pairs start within the owner's
limit and one pair per bot, leg 1 only once leg 0 has ended (never both at once), a lost answer
or a crash between the claim and the legs makes nothing twice, an absent bot forfeits after its
grace period, finished pairs are scored from their match rows (an aborted leg voids the pair),
rated pairs are rated once."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from housekit import HOUSE_CONFIG, HOUSE_TOKEN
from servicekit import fresh_database, running_service
from sqlalchemy import func, select, update

from client import Runner
from db.base import aware, utcnow
from db.models import HOUSE, RUNNING, Match
from db.pairs import DONE, FORFEITED, PLAYING, VOID, WAITING, DuplicatePair
from db.presence import CHALLENGE
from db.ratings import Rating, RatingHistory
from events.scoring import Leg, pair_result
from examples.random_bot import RandomBot
from services.core import actions
from services.ops import bots
from workers import pairs
from workers.service import Service
from workers.testing import wait_until

OWNER = dict(owner="tournament", owner_id=1)


@pytest.fixture(params=["sqlite", "postgres"])
def site(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, HOUSE_CONFIG) as svc:
        client = Service(svc.server.address, HOUSE_TOKEN)
        yield svc, client
        client.channel.close()


def add_pair(sessions, a: int, b: int, board: int, *, round_: int = 1, seed: int | None = None,
             rated: bool = False, due_in_s: float = 0) -> int:
    with sessions.begin() as s:
        pair = DuplicatePair(**OWNER, round=round_, board=board, seed=seed or 1000 + board,
                             bot_a_id=a, bot_b_id=b, profile="soft", move_ms=3000,
                             bank_ms=5000, rated=rated, state=WAITING,
                             due_at=utcnow() + timedelta(seconds=due_in_s))
        s.add(pair)
        s.flush()
        return pair.id


def pair_row(sessions, pair_id: int) -> DuplicatePair:
    with sessions() as s:
        pair = s.get(DuplicatePair, pair_id)
        assert pair is not None
        s.expunge(pair)
        return pair


def match_count(sessions) -> int:
    with sessions() as s:
        return s.scalar(select(func.count()).select_from(Match)) or 0


def play(service, tokens: list[str]) -> list[Runner]:
    runners = [Runner(RandomBot(i), service.server.address, token)
               for i, token in enumerate(tokens)]
    for runner in runners:
        threading.Thread(target=runner.run, daemon=True).start()
    wait_until(lambda: all(r.stats.connections for r in runners), 30, what="bots connected")
    return runners


def advance(service, client, settled: list[int], **limits) -> None:
    """One scheduler step: settle what ended, start what is due (leg 1 once leg 0 ended)."""
    settled.extend(pairs.settle(service.sessions, **OWNER))
    pairs.start_due(service.sessions, client, **OWNER, **limits)


def test_leg_one_starts_after_leg_zero_and_pairs_are_scored_from_their_matches(site):
    service, client = site
    ids, tokens = zip(*(service.register(f"bot{i}") for i in range(4)), strict=True)
    runners = play(service, list(tokens))
    try:
        first = add_pair(service.sessions, ids[0], ids[1], 1, rated=True)
        second = add_pair(service.sessions, ids[2], ids[3], 2)
        later = add_pair(service.sessions, ids[0], ids[2], 3, due_in_s=3600)  # not due yet
        started = pairs.start_due(service.sessions, client, **OWNER, limit=2)
        assert started == [first, second]  # a playing pair counts one match of the limit
        assert pairs.start_due(service.sessions, client, **OWNER, limit=2) == []  # running
        for pair_id in (first, second):
            pair = pair_row(service.sessions, pair_id)
            # Only leg 0: leg 1 mirrors its cards, so it waits until leg 0 has ended.
            assert pair.state == PLAYING and pair.match_a_id and pair.match_b_id is None
        assert pair_row(service.sessions, later).state == WAITING
        assert match_count(service.sessions) == 2

        settled: list[int] = []
        wait_until(lambda: advance(service, client, settled, limit=2) or len(settled) == 2,
                   120, every=0.2, what="both pairs played out")
        assert sorted(settled) == [first, second]
        assert pairs.settle(service.sessions, **OWNER) == []  # once
    finally:
        for runner in runners:
            runner.stop()
    with service.sessions() as s:
        for pair_id in (first, second):
            pair = s.get(DuplicatePair, pair_id)
            legs = [s.get(Match, pair.match_a_id), s.get(Match, pair.match_b_id)]
            expected = pair_result(*(Leg(m.winner, (m.counter0, m.counter1)) for m in legs))
            assert pair.state == DONE
            assert (pair.points_a, pair.points_b, pair.game_points_a, pair.game_points_b) == \
                expected[:4]
            assert pair.points_a + pair.points_b == 2 and pair.forfeit is None
            assert legs[0].seed == legs[1].seed == pair.seed
            assert (legs[0].bot0_id, legs[1].bot0_id) == (pair.bot_a_id, pair.bot_b_id)
            # Never both legs at once: leg 1 was made after leg 0 had ended.
            assert aware(legs[1].created_at) >= aware(legs[0].finished_at)
    # The rated pair's two matches are rated, once.
    assert pairs.rate_done(service.sessions, **OWNER) == 1
    assert pairs.rate_done(service.sessions, **OWNER) == 0
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(RatingHistory)) == 4
        assert sorted(r.matches for r in s.scalars(select(Rating))) == [2, 2]


def test_the_limit_and_one_pair_per_bot(site):
    service, client = site
    house = [bots.register_bot(f"house{i}", kind=HOUSE, house_strategy="random",
                               sessions=service.sessions)[0].id for i in range(4)]
    with_first = [add_pair(service.sessions, house[0], house[i], i) for i in (1, 2)]
    apart = add_pair(service.sessions, house[2], house[3], 3)
    # house0 is in two pairs: only its first starts; the third pair is apart, but the limit of
    # one running match is taken (a playing pair counts one: its legs are played in turn).
    assert pairs.start_due(service.sessions, client, **OWNER, limit=1) == [with_first[0]]
    assert pairs.start_due(service.sessions, client, **OWNER, limit=2) == [apart]
    assert pairs.start_due(service.sessions, client, **OWNER, limit=8) == []
    assert pairs.start_due(service.sessions, client, **OWNER, limit=8, per_bot=None) == [
        with_first[1]]
    assert match_count(service.sessions) == 3  # leg 0 of each


class Lossy:
    """A client whose answers are lost: each CreateMatch reaches the service, then the call
    fails as a time-out would."""

    def __init__(self, inner: Service) -> None:
        self.inner = inner
        self.calls = 0

    def create_pair_match(self, pair_id: int, leg: int) -> int:
        self.calls += 1
        self.inner.create_pair_match(pair_id, leg)
        raise TimeoutError("the answer was lost")


class Down:
    """A client whose calls never reach the service."""

    def create_pair_match(self, pair_id: int, leg: int) -> int:
        raise ConnectionError("the service is down")


def test_lost_answers_and_a_crash_after_the_claim_make_nothing_twice(site):
    service, client = site
    ids, tokens = zip(*(service.register(f"bot{i}") for i in range(2)), strict=True)
    c, d = (bots.register_bot(f"house{i}", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id for i in range(2))
    runners = play(service, list(tokens))
    try:
        lost = add_pair(service.sessions, ids[0], ids[1], 1)
        lossy = Lossy(client)
        assert pairs.start_due(service.sessions, lossy, **OWNER, limit=8) == [lost]
        # The service recorded leg 0 although the scheduler never heard of it; while it runs,
        # nothing more is asked for.
        assert lossy.calls == 1
        assert pair_row(service.sessions, lost).match_a_id is not None
        pairs.start_due(service.sessions, lossy, **OWNER, limit=8)
        assert lossy.calls == 1 and match_count(service.sessions) == 1
        # Leg 0 ends: leg 1 is asked for (its answer lost too), then found, never made twice.
        wait_until(lambda: pairs.start_due(service.sessions, lossy, **OWNER, limit=8) == [] and
                   lossy.calls == 2, 60, every=0.2, what="leg 0 to end and leg 1 to be asked")
        pairs.start_due(service.sessions, client, **OWNER, limit=8)
        pair = pair_row(service.sessions, lost)
        assert pair.match_a_id and pair.match_b_id and match_count(service.sessions) == 2
    finally:
        for runner in runners:
            runner.stop()
    # Claimed, then the scheduler died before any leg: the next one makes leg 0, once.
    crashed = add_pair(service.sessions, c, d, 2)
    assert pairs.start_due(service.sessions, Down(), **OWNER, limit=8) == [crashed]
    assert pair_row(service.sessions, crashed).state == PLAYING
    assert match_count(service.sessions) == 2
    pairs.start_due(service.sessions, client, **OWNER, limit=8)
    pairs.start_due(service.sessions, client, **OWNER, limit=8)
    pair = pair_row(service.sessions, crashed)
    assert pair.match_a_id and pair.match_b_id is None and match_count(service.sessions) == 3
    # The service's own key: a leg asked for directly again is the same match.
    assert client.create_pair_match(crashed, 0) == pair.match_a_id
    assert match_count(service.sessions) == 3


def test_an_absent_bot_forfeits_after_its_grace_period(site):
    service, client = site
    house = bots.register_bot("house", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id
    remote, token = service.register("remote")
    pair_id = add_pair(service.sessions, house, remote, 1)
    t0 = utcnow()
    assert pairs.start_due(service.sessions, client, **OWNER, limit=2, grace_s=30,
                           now=t0) == []
    pair = pair_row(service.sessions, pair_id)
    assert pair.state == WAITING and pair.grace_until is not None
    assert abs((aware(pair.grace_until) - t0).total_seconds() - 30) < 1
    # Within the grace period it waits; past it, the absent bot forfeits the pair.
    pairs.start_due(service.sessions, client, **OWNER, limit=2, grace_s=30,
                    now=t0 + timedelta(seconds=29))
    assert pair_row(service.sessions, pair_id).state == WAITING
    pairs.start_due(service.sessions, client, **OWNER, limit=2, grace_s=30,
                    now=t0 + timedelta(seconds=31))
    pair = pair_row(service.sessions, pair_id)
    assert (pair.state, pair.forfeit, pair.points_a, pair.points_b) == (FORFEITED, "b", 2, 0)
    assert (pair.game_points_a, pair.game_points_b) == (0, 0)
    assert "remote could not play" in (pair.detail or "")
    assert match_count(service.sessions) == 0
    # A bot that comes back within its grace period plays: the grace period is cleared.
    again = add_pair(service.sessions, house, remote, 2)
    pairs.start_due(service.sessions, client, **OWNER, limit=2, grace_s=30)
    assert pair_row(service.sessions, again).grace_until is not None
    runners = play(service, [token])
    try:
        assert pairs.start_due(service.sessions, client, **OWNER, limit=2) == [again]
        pair = pair_row(service.sessions, again)
        assert pair.state == PLAYING and pair.grace_until is None
    finally:
        runners[0].stop()


def test_a_pair_whose_leg_zero_is_aborted_is_void_and_never_gets_leg_one(site):
    service, client = site
    a, b = (bots.register_bot(f"house{i}", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id for i in range(2))
    pair_id = add_pair(service.sessions, a, b, 1)
    pairs.start_due(service.sessions, client, **OWNER, limit=2)
    pair = pair_row(service.sessions, pair_id)
    actions.abort_match(pair.match_a_id, "testing", sessions=service.sessions)
    pairs.start_due(service.sessions, client, **OWNER, limit=2)  # no leg 1 after an abort
    assert match_count(service.sessions) == 1
    assert pairs.settle(service.sessions, **OWNER) == [pair_id]
    pair = pair_row(service.sessions, pair_id)
    assert pair.state == VOID and pair.points_a is None and pair.match_b_id is None
    assert f"match {pair.match_a_id} was aborted" in (pair.detail or "")
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)
                        .where(Match.state == RUNNING)) == 0


def test_a_bot_connected_for_challenges_only_is_absent_for_a_pair(site):
    service, client = site
    house = bots.register_bot("house", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id
    remote, token = service.register("picky")
    runner = Runner(RandomBot(0), service.server.address, token, challenges_only=True)
    threading.Thread(target=runner.run, daemon=True).start()
    try:
        wait_until(lambda: runner.stats.connections, 30, what="the bot connected")
        pair_id = add_pair(service.sessions, house, remote, 1)
        t0 = utcnow()
        assert pairs.start_due(service.sessions, client, **OWNER, limit=2, grace_s=5,
                               now=t0) == []
        assert pair_row(service.sessions, pair_id).grace_until is not None
        pairs.start_due(service.sessions, client, **OWNER, limit=2, grace_s=5,
                        now=t0 + timedelta(seconds=6))
        pair = pair_row(service.sessions, pair_id)
        assert (pair.state, pair.forfeit) == (FORFEITED, "b")
        assert match_count(service.sessions) == 0
    finally:
        runner.stop()


def test_a_bot_connected_for_challenges_only_plays_a_version_tests_pair(site):
    """A version test's pairs are taken as challenges are (docs/version-tests.md: both sides
    run --challenges-only): the pair starts at once, with no grace period."""
    service, client = site
    house = bots.register_bot("house", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id
    remote, token = service.register("picky")
    runner = Runner(RandomBot(0), service.server.address, token, challenges_only=True)
    threading.Thread(target=runner.run, daemon=True).start()
    test_owner = dict(owner="test", owner_id=1)
    try:
        wait_until(lambda: runner.stats.connections, 30, what="the bot connected")
        with service.sessions.begin() as s:
            pair = DuplicatePair(**test_owner, round=None, board=1, seed=7, bot_a_id=remote,
                                 bot_b_id=house, profile="soft", move_ms=3000, bank_ms=5000,
                                 rated=False, state=WAITING, due_at=utcnow())
            s.add(pair)
            s.flush()
            pair_id = pair.id
        assert pairs.start_due(service.sessions, client, **test_owner, limit=2,
                               kind=CHALLENGE) == [pair_id]
        pair = pair_row(service.sessions, pair_id)
        assert pair.state == PLAYING and pair.grace_until is None and pair.match_a_id
        # a tournament's pair (a pairing) is still refused to it
        other = add_pair(service.sessions, house, remote, 2)
        assert pairs.start_due(service.sessions, client, **OWNER, limit=2) == []
        assert pair_row(service.sessions, other).grace_until is not None
    finally:
        runner.stop()


def test_open_pairs_of_an_event_that_ended_are_voided_by_the_periodic_check(site):
    """`void_orphans` (each tick): the open pairs of an owner's event not among the open ones
    become void, with why; the open event's pairs and the decided pairs stay as they are."""
    service, _client = site
    a, b = (bots.register_bot(f"house{i}", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id for i in range(2))
    orphan = add_pair(service.sessions, a, b, 1)  # owner_id 1: its event has ended
    decided = add_pair(service.sessions, a, b, 2)
    with service.sessions.begin() as s:
        s.execute(update(DuplicatePair).where(DuplicatePair.id == decided).values(state=DONE))
        kept = DuplicatePair(owner="tournament", owner_id=2, round=1, board=1, seed=3,
                             bot_a_id=a, bot_b_id=b, profile="soft", move_ms=3000,
                             bank_ms=5000, rated=False, state=PLAYING, due_at=utcnow())
        s.add(kept)
        s.flush()
        kept_id = kept.id
    still_open = select(DuplicatePair.owner_id).where(DuplicatePair.owner_id == 2)
    assert pairs.void_orphans(service.sessions, owner="tournament", open_ids=still_open,
                              why="the event had ended") == [orphan]
    row = pair_row(service.sessions, orphan)
    assert (row.state, row.detail) == (VOID, "the event had ended") and row.finished_at
    assert pair_row(service.sessions, kept_id).state == PLAYING
    assert pair_row(service.sessions, decided).state == DONE
    assert pairs.void_orphans(service.sessions, owner="tournament", open_ids=still_open,
                              why="again") == []  # done once
