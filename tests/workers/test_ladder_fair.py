"""The ladder's fair pairing (issue 23) on a real database (SQLite and PostgreSQL), matches
created by the service's plain function in-process: a starving bot is paired within the bound
even when the target is met, the day's cap stops a third match of a pair while another pair
is free and never leaves a small site idle, uncertain ratings go first and near ratings are
preferred, and a bot playing an event match is left out."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from housekit import create_in_process
from servicekit import fresh_database
from sqlalchemy import select, update

from db.models import FINISHED, HOUSE, ORIGIN_TOURNAMENT, PLAYED, RUNNING, Bot, Match
from db.pairs import OWNER_TOURNAMENT, PLAYING, DuplicatePair
from db.ratings import Rating
from services.core import hooks
from services.ops import bots
from workers import ladder
from workers import ladder_pairing as pairing

MAX_WAIT = 600.0


@pytest.fixture(params=["sqlite", "postgres"])
def sessions(request, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no queue here: matches are ended by hand
    monkeypatch.setattr(hooks, "on_match_end", [])
    with fresh_database(request.param, request, tmp_path) as db:
        db.create_tables()
        factory = db.sessions()
        create_in_process(monkeypatch, factory)
        yield factory
        factory.kw["bind"].dispose()


def house(sessions, name: str) -> int:
    bot, _ = bots.register_bot(name, kind=HOUSE, house_strategy="random", sessions=sessions)
    return bot.id


def remote(sessions, name: str, waited_s: float = 0.0) -> int:
    """A remote bot connected `waited_s` ago (registered before that), heartbeat fresh."""
    bot, _ = bots.register_bot(name, sessions=sessions)
    moment = datetime.now(UTC)
    since = moment - timedelta(seconds=waited_s)
    with sessions.begin() as s:
        s.execute(update(Bot).where(Bot.id == bot.id).values(
            created_at=since - timedelta(hours=1), connected_since=since, last_seen_at=moment))
    return bot.id


def rate(sessions, bot_id: int, mu: float, sigma: float) -> None:
    with sessions.begin() as s:
        s.add(Rating(bot_id=bot_id, profile="soft", mu=mu, sigma=sigma, matches=20, wins=10))


def end(sessions, match_id: int) -> None:
    with sessions.begin() as s:
        s.execute(update(Match).where(Match.id == match_id).values(
            state=FINISHED, winner=0, to_act=None, end_reason=PLAYED,
            finished_at=datetime.now(UTC)))


def seats(sessions, match_id: int) -> set[int]:
    with sessions() as s:
        m = s.get(Match, match_id)
        return {m.bot0_id, m.bot1_id}


def start(sessions, target: int, seed: int = 1, **kw) -> list[int]:
    kw.setdefault("max_wait_s", MAX_WAIT)
    kw.setdefault("pair_cap", 20)
    return ladder.start_matches("soft", target, sessions, random.Random(seed), **kw)


def test_a_starving_bot_is_paired_within_the_bound_even_at_the_target(sessions):
    h1, h2 = house(sessions, "h1"), house(sessions, "h2")
    waiting = remote(sessions, "waiting", waited_s=MAX_WAIT - 30)
    busy = ladder.create_match((h1, h2), "soft")  # the target of 1 is met
    assert start(sessions, 1) == []  # under the bound: it waits for room
    with sessions.begin() as s:  # 31 s later: past the bound
        s.execute(update(Bot).where(Bot.id == waiting).values(
            connected_since=datetime.now(UTC) - timedelta(seconds=MAX_WAIT + 1)))
    [extra] = start(sessions, 1)  # the next tick pairs it, on top of the target
    assert waiting in seats(sessions, extra)
    with sessions() as s:
        running = s.scalars(select(Match.id).where(Match.state == RUNNING)).all()
    assert sorted(running) == sorted([busy, extra])
    assert start(sessions, 1) == []  # now playing: nothing more
    end(sessions, extra)  # its match ended just now: it waits afresh
    assert start(sessions, 1) == []


def test_the_longest_waiting_bot_is_paired_first(sessions):
    first = remote(sessions, "first", waited_s=900)
    remote(sessions, "second", waited_s=700)
    remote(sessions, "third", waited_s=650)
    for seed in range(6):
        [made] = start(sessions, 0, seed=seed)  # target 0: only the starving are paired
        assert first in seats(sessions, made)  # and its opponent is no longer free
        with sessions.begin() as s:  # undo: the same waits for the next draw
            s.execute(update(Match).where(Match.id == made).values(
                state="aborted", finished_at=datetime.now(UTC) - timedelta(hours=2)))


def test_the_day_cap_stops_a_third_match_of_a_pair_while_another_is_free(sessions):
    a, b = house(sessions, "a"), house(sessions, "b")
    for _ in range(2):
        [m] = start(sessions, 1, pair_cap=2)
        assert seats(sessions, m) == {a, b}
        end(sessions, m)
    c = house(sessions, "c")  # now a-c and b-c are under the cap: a-b waits for them
    pairs = Counter()
    for seed in range(4):
        [m] = start(sessions, 1, seed=seed, pair_cap=2)
        pairs[frozenset(seats(sessions, m))] += 1
        end(sessions, m)
    assert pairs == {frozenset((a, c)): 2, frozenset((b, c)): 2}  # each pair to the cap
    # every pair at the cap: the cap no longer bites; the next matches go to the pairs met
    # fewest times (each pair once more before any pair a fourth time)
    for seed in range(3):
        [m] = start(sessions, 1, seed=seed, pair_cap=2)
        pairs[frozenset(seats(sessions, m))] += 1
        end(sessions, m)
    assert sorted(pairs.values()) == [1, 3, 3] and pairs[frozenset((a, b))] == 1


def test_a_small_site_keeps_playing_past_the_cap(sessions):
    """4 house and 2 remote bots (15 pairs), a cap of 2 a pair a day: the ladder reached 30
    matches and then, under a hard cap, went quiet; now it goes on, every pair still within
    one match of the others, and its state never says idle."""
    from db.ladder_state import ladder_state

    houses = [house(sessions, f"h{i}") for i in range(4)]
    remotes = [remote(sessions, f"r{i}") for i in range(2)]
    met = Counter()
    for round_ in range(40):  # 40 matches, 3 at a time: past the 30 the cap allows
        made = start(sessions, 3, seed=round_, pair_cap=2)
        assert made, f"round {round_}: the ladder paired nobody"
        for m in made:
            met[frozenset(seats(sessions, m))] += 1
            end(sessions, m)
        with sessions.begin() as s:  # the remote bots' heartbeats stay fresh
            s.execute(update(Bot).where(Bot.id.in_(remotes)).values(
                last_seen_at=datetime.now(UTC)))
        with sessions() as s:
            assert not ladder_state(s, "soft", heartbeat_s=60, target=3).idle
    assert sum(met.values()) > 30
    assert len(met) == 15  # every pair of the 6 bots played
    assert max(met.values()) - min(met.values()) <= 2, met
    assert set(houses) | set(remotes) == {i for pair in met for i in pair}


def test_uncertain_bots_are_paired_first_with_a_near_opponent(sessions):
    known_near, known_far = house(sessions, "known-near"), house(sessions, "known-far")
    known_mid = house(sessions, "known-mid")
    new = house(sessions, "new")
    rate(sessions, known_near, 26.0, 1.0)
    rate(sessions, known_mid, 33.0, 1.0)
    rate(sessions, known_far, 45.0, 1.0)
    rate(sessions, new, 25.0, 8.0)
    opponents = Counter()
    for seed in range(20):
        [m] = start(sessions, 1, seed=seed, pair_cap=0)
        pair = seats(sessions, m)
        assert new in pair, f"seed {seed}: {pair}"  # the uncertain one plays first
        opponents.update(pair - {new})
        end(sessions, m)
    assert opponents[known_near] > opponents[known_mid] > opponents.get(known_far, 0)


def test_a_bot_in_an_event_match_is_not_paired(sessions):
    h1, h2 = house(sessions, "h1"), house(sessions, "h2")
    player = remote(sessions, "player", waited_s=MAX_WAIT * 2)  # starving, even
    with sessions.begin() as s:  # a tournament match of it, running
        event = Match(bot0_id=player, bot1_id=h2, profile="soft", seed=5, state=RUNNING,
                      move_ms=5000, bank_ms=30000, max_illegal=3, bank0_ms=30000,
                      bank1_ms=30000, to_act=0, origin=ORIGIN_TOURNAMENT, event_id=1,
                      event_round=1, pair_id=1, pair_leg=0)
        s.add(event)
        s.flush()
        event_id = event.id
    with sessions() as s:
        assert player not in {b.id for b in ladder.eligible_bots(s, "soft")}
    made = start(sessions, 3)
    assert made and all(player not in seats(sessions, m) for m in made)
    assert seats(sessions, made[0]) == {h1, h2}
    # its event match ends, but a pair of it is being started: still not
    end(sessions, made[0])
    end(sessions, event_id)
    with sessions.begin() as s:
        s.add(DuplicatePair(owner=OWNER_TOURNAMENT, owner_id=1, round=2, board=1, seed=6,
                            bot_a_id=h1, bot_b_id=player, move_ms=5000, bank_ms=30000,
                            state=PLAYING))
    assert all(player not in seats(sessions, m) for m in start(sessions, 3))
    with sessions.begin() as s:  # the pair is decided, its event match ended long ago
        s.execute(update(DuplicatePair).values(state="done"))
        s.execute(update(Match).where(Match.state == RUNNING).values(state=FINISHED))
        s.execute(update(Match).where(Match.id == event_id).values(
            finished_at=datetime.now(UTC) - timedelta(seconds=MAX_WAIT + 1)))
    with sessions() as s:
        assert player in {b.id for b in ladder.eligible_bots(s, "soft")}
    [made] = start(sessions, 0)  # free again, and starving: paired at once
    assert player in seats(sessions, made)


def test_the_pairing_rules_alone():
    def c(bot_id, mu=25.0, sigma=8.0, wait=0.0, remote=False):
        return pairing.Candidate(bot_id, remote, mu, sigma, wait)

    rng = random.Random(3)
    pool = {x.bot_id: x for x in (c(1, sigma=2), c(2, sigma=6), c(3, sigma=2, wait=599,
                                                                    remote=True))}
    # priority: sigma share + wait share; the starving come first whatever their sigma
    assert [x.bot_id for x in pairing.order(pool.values(), 600)] == [3, 2, 1]
    assert [x.bot_id for x in pairing.order(pool.values(), 500)] == [3, 2, 1]
    pool[3] = c(3, sigma=2, wait=100, remote=True)
    assert [x.bot_id for x in pairing.order(pool.values(), 600)] == [2, 3, 1]
    # no room and nobody starving: no pairing; a pair playing is never drawn, a capped one
    # only when every free pair is capped (then the one met fewest times)
    assert pairing.next_pair(pool, set(), {}, pair_cap=5, max_wait_s=600, room=False,
                             rng=rng) is None
    every = {pairing.key(1, 2), pairing.key(1, 3), pairing.key(2, 3)}
    assert pairing.next_pair(pool, every, {}, pair_cap=5, max_wait_s=600, room=True,
                             rng=rng) is None
    capped = {pairing.key(1, 2): 5, pairing.key(1, 3): 5, pairing.key(2, 3): 4}
    for _ in range(20):
        assert set(pairing.next_pair(pool, set(), capped, pair_cap=5, max_wait_s=600,
                                     room=True, rng=rng)) == {2, 3}
    fewest = dict.fromkeys(every, 7) | {pairing.key(1, 3): 6}
    for _ in range(20):
        assert set(pairing.next_pair(pool, set(), fewest, pair_cap=5, max_wait_s=600,
                                     room=True, rng=rng)) == {1, 3}
    # near mu is preferred
    near = {x.bot_id: x for x in (c(1, mu=25, sigma=8), c(2, mu=26, sigma=1),
                                  c(3, mu=40, sigma=1))}
    picks = Counter(frozenset(pairing.next_pair(near, set(), {}, pair_cap=0, max_wait_s=600,
                                                room=True, rng=rng)) for _ in range(300))
    assert picks[frozenset((1, 2))] > 5 * picks[frozenset((1, 3))]
    assert pairing.closeness(c(1, mu=25), c(2, mu=25)) == 1.0
