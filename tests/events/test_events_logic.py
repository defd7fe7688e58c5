"""The pure logic of events: the formats' schedules, a duplicate pair's score, the standings
with their tie-breaks, and the crosstable."""

from __future__ import annotations

from collections import Counter

import pytest

from events import formats
from events.scoring import Leg, forfeit_result, game_points, pair_result
from events.standings import PairScore, crosstable, standings


@pytest.mark.parametrize("n", range(2, 18))
def test_a_round_robin_meets_every_pair_once_one_pair_per_bot_per_round(n):
    bots = list(range(10, 10 + n))
    schedule = formats.schedule(formats.ROUND_ROBIN, bots)
    assert len(schedule) == n * (n - 1) // 2
    assert {frozenset((p.a, p.b)) for p in schedule} == {
        frozenset((x, y)) for i, x in enumerate(bots) for y in bots[i + 1:]}
    per_round = Counter((p.round, bot) for p in schedule for bot in (p.a, p.b))
    assert max(per_round.values()) == 1
    assert max(p.round for p in schedule) == formats.total_rounds(formats.ROUND_ROBIN, n)
    boards = Counter(p.round for p in schedule)
    assert all(boards[r] == n // 2 for r in boards)


def test_a_double_round_robin_plays_each_pairing_twice_roles_swapped():
    bots = [1, 2, 3, 4]
    schedule = formats.schedule(formats.DOUBLE_ROUND_ROBIN, bots)
    assert len(schedule) == 12 and max(p.round for p in schedule) == 6
    firsts, seconds = schedule[:6], schedule[6:]
    assert [(p.b, p.a) for p in firsts] == [(p.a, p.b) for p in seconds]
    seeds = {formats.pair_seed(99, p.round, p.board) for p in schedule}
    assert len(seeds) == 12  # new deals for every pair


def test_a_gauntlet_is_the_first_bot_against_each_of_the_rest():
    schedule = formats.schedule(formats.GAUNTLET, [7, 1, 2, 3])
    assert [(p.round, {p.a, p.b}) for p in schedule] == [(1, {7, 1}), (2, {7, 2}), (3, {7, 3})]
    assert Counter(p.a for p in schedule)[7] == 2  # bot a alternates


@pytest.mark.parametrize("format,bots,rounds,words", [
    ("knockout", [1, 2], None, "unknown format"),
    (formats.SWISS, [1, 2, 3], None, "needs its number of rounds"),
    (formats.SWISS, [1, 2, 3, 4], 4, "1 to 3 rounds"),
    (formats.ROUND_ROBIN, [1, 2, 3], 2, "--rounds is for Swiss"),
    (formats.ROUND_ROBIN, [1], None, "2 to 64 bots"),
    (formats.GAUNTLET, [1, 2, 1], None, "named twice"),
])
def test_bad_events_are_refused_with_what_is_wrong(format, bots, rounds, words):
    with pytest.raises(ValueError, match=words):
        formats.check(format, bots, rounds)


def test_pair_seeds_are_stable_and_fit_the_matches_seed():
    assert formats.pair_seed(1, 1, 1) == formats.pair_seed(1, 1, 1)
    assert formats.pair_seed(1, 1, 1) != formats.pair_seed(1, 1, 2)
    assert 0 <= formats.pair_seed(2**62, 64, 32) < 2**62


def test_a_pair_is_scored_by_matches_won_and_game_points():
    # Leg 0: bot a (seat 0) wins 7 : loser at counter 3 (scored 4). Leg 1: bot b (seat 0)
    # wins, bot a (seat 1) had scored 6 (counter 1).
    result = pair_result(Leg(0, (0, 3)), Leg(0, (-2, 1)))
    assert result == (1, 1, 7 + 6, 4 + 7, None)
    assert pair_result(Leg(0, (0, 7)), Leg(1, (5, 0))).points_a == 2
    assert pair_result(Leg(1, (7, 0)), Leg(0, (0, 7)))[:2] == (0, 2)
    # A forfeit on time mid-match: the winner counts 7, the loser what it had scored.
    assert game_points(Leg(1, (2, 6))) == (5, 7)
    assert forfeit_result("a") == (0, 2, 0, 0, "a")
    assert forfeit_result("both") == (0, 0, 0, 0, "both")
    with pytest.raises(ValueError):
        forfeit_result("c")
    with pytest.raises(ValueError):
        pair_result(Leg(2, (0, 0)), Leg(0, (0, 0)))


def pair(a: int, b: int, pa: int, gpa: int, gpb: int, round_: int = 1, board: int = 1,
         state: str = "done", forfeit: str | None = None) -> PairScore:
    return PairScore(round_, board, a, b, state, pa, 2 - pa if forfeit != "both" else 0, gpa,
                     gpb, forfeit)


def test_standings_order_by_points_then_difference_then_sonneborn_berger():
    pairs = [pair(1, 2, 2, 14, 6, 1), pair(1, 3, 1, 12, 12, 2), pair(2, 3, 2, 14, 0, 3),
             pair(2, 4, 1, 10, 10, 1, 2), pair(3, 4, 2, 14, 3, 2, 2),
             pair(1, 4, 0, 0, 0, 3, 2, state="void")]
    table = standings([1, 2, 3, 4], pairs, formats.ROUND_ROBIN)
    assert [(r.bot, r.rank, r.points, r.difference) for r in table] == [
        (1, 1, 3, 8), (2, 2, 3, 6), (3, 3, 3, -3), (4, 4, 1, -11)]
    by_bot = {row.bot: row for row in table}
    assert by_bot[1].pairs == 2  # the void pair counts for neither
    assert by_bot[3].sonneborn_berger == 3 * 0.5 + 1 * 1.0  # split with 1, beat 4
    # Equal points and difference: Sonneborn-Berger decides. 1 beat 3 (the leader) and lost
    # to 4, 2 beat 4 and lost to 3; they split.
    pairs = [pair(1, 3, 2, 14, 7, 1), pair(2, 4, 2, 14, 7, 1, 2), pair(1, 4, 0, 7, 14, 2),
             pair(2, 3, 0, 7, 14, 2, 2), pair(1, 2, 1, 7, 7, 3), pair(3, 4, 2, 14, 7, 3, 2)]
    table = standings([2, 1, 3, 4], pairs, formats.ROUND_ROBIN)  # 2 is seeded above 1
    by_bot = {row.bot: row for row in table}
    assert [(r.bot, r.points, r.difference) for r in table] == [
        (3, 4, 7), (1, 3, 0), (2, 3, 0), (4, 2, -7)]
    assert (by_bot[1].sonneborn_berger, by_bot[2].sonneborn_berger) == (4 + 1.5, 1.5 + 2)
    assert [r.rank for r in table] == [1, 2, 3, 4]


def test_ties_share_a_rank_and_swiss_uses_buchholz():
    pairs = [pair(1, 2, 1, 7, 7), pair(3, 4, 1, 7, 7, board=2)]
    table = standings([1, 2, 3, 4], pairs, formats.SWISS)
    assert [row.rank for row in table] == [1, 1, 1, 1]
    assert [row.bot for row in table] == [1, 2, 3, 4]  # then by seed
    pairs.append(pair(1, 3, 2, 14, 0, round_=2))
    pairs.append(pair(2, 4, 2, 14, 0, round_=2, board=2))
    table = standings([1, 2, 3, 4], pairs, formats.SWISS, byes={})
    by_bot = {row.bot: row for row in table}
    assert by_bot[1].buchholz == by_bot[2].points + by_bot[3].points
    assert table[0].tiebreak == table[0].buchholz


def test_forfeits_byes_and_withdrawals_in_the_standings():
    pairs = [pair(1, 2, 2, 0, 0, forfeit="b", state="forfeited"),
             pair(3, 4, 0, 0, 0, forfeit="both", state="forfeited", board=2)]
    table = standings([1, 2, 3, 4, 5], pairs, formats.SWISS, byes={5: 1}, withdrawn=[2])
    by_bot = {row.bot: row for row in table}
    assert (by_bot[1].points, by_bot[1].scored, by_bot[1].forfeits) == (2, 0, 0)
    assert (by_bot[2].points, by_bot[2].forfeits, by_bot[2].withdrawn) == (0, 1, True)
    assert by_bot[3].points == by_bot[4].points == 0 and by_bot[3].forfeits == 1
    assert (by_bot[5].points, by_bot[5].byes, by_bot[5].pairs) == (2, 1, 0)


def test_the_crosstable_holds_each_pairing_both_ways():
    pairs = [pair(1, 2, 2, 14, 3, 1), pair(2, 1, 1, 9, 9, 4)]
    table = crosstable([1, 2, 3], pairs)
    assert [p.round for p in table[(1, 2)]] == [1, 4] == [p.round for p in table[(2, 1)]]
    assert (1, 3) not in table


def test_swiss_seats_stay_balanced_within_a_score_group():
    """Eight bots, every pair split (one score group): after each round every bot was bot a
    and bot b as often, give or take one (the seats term of the matching, not only the tie of
    who is bot a: without it a bot that was bot b in round 1 can meet another such bot and be
    bot b again)."""
    from events.swiss import pair_round

    field = list(range(1, 9))
    points = dict.fromkeys(field, 0)
    played: set[frozenset[int]] = set()
    balance = dict.fromkeys(field, 0)
    for _ in range(5):
        result = pair_round(field, points, played, set(), balance)
        for a, b in result.pairs:
            assert frozenset((a, b)) not in played
            played.add(frozenset((a, b)))
            balance[a] += 1
            balance[b] -= 1
            points[a] += 1
            points[b] += 1
        assert all(abs(v) <= 1 for v in balance.values()), balance
