"""Property tests of the Swiss pairing (hypothesis): any field of 2 to 64 bots, any results
(wins, splits, losses, forfeits), round after round.

- Every round is a valid pairing: each bot of the field in exactly one pair, or the one bye of
  an odd field; never a bot against itself.
- No pairing repeats while a round without repeats exists. The oracle is independent of the
  pairing's weighted matching: an unweighted maximum matching (networkx) of the pairings not
  yet played plus a bye to any bot that had none; if it is perfect, the round must have no
  repeat.
- At most one bye per bot (an event has at most n - 1 rounds); with bots withdrawn mid-event,
  a second bye only once every bot still in had one.
- Within the rules above, score groups: no pair is further apart in points than it must be
  for the lowest-cost round, checked on the leaders (board 1 pairs two of the best scores
  when that repeats nothing).
"""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from events.swiss import pair_round

SETTINGS = settings(max_examples=80, deadline=None)


def repeat_free_round_exists(field: list[int], played: set[frozenset[int]],
                             byes: set[int]) -> bool:
    graph = nx.Graph()
    graph.add_nodes_from(field)
    for i, x in enumerate(field):
        for y in field[i + 1:]:
            if frozenset((x, y)) not in played:
                graph.add_edge(x, y)
    if len(field) % 2:
        graph.add_node("bye")
        for x in field:
            if x not in byes:
                graph.add_edge(x, "bye")
    matching = nx.max_weight_matching(graph, maxcardinality=True)  # all weights 1
    return 2 * len(matching) == graph.number_of_nodes()


def play_event(n: int, rounds: int, seed: int, withdraw_after: int | None = None) -> None:
    rng = random.Random(seed)
    field = list(range(100, 100 + n))
    points = dict.fromkeys(field, 0)
    played: set[frozenset[int]] = set()
    byes: dict[int, int] = {}
    a_counts: dict[int, int] = {}
    active = list(field)
    for number in range(1, rounds + 1):
        if withdraw_after is not None and number == withdraw_after + 1 and len(active) > 2:
            active.remove(rng.choice(active))
        had_bye = {bot for bot in active if byes.get(bot)}
        must_be_clean = repeat_free_round_exists(active, played, had_bye)
        every_bot_had_a_bye = all(byes.get(bot) for bot in active)
        result = pair_round(active, points, played, set(byes), a_counts)
        seen = [bot for pair in result.pairs for bot in pair]
        if result.bye is not None:
            seen.append(result.bye)
        assert sorted(seen) == sorted(active), f"round {number}: not a pairing of the field"
        assert all(a != b for a, b in result.pairs)
        assert (result.bye is not None) == (len(active) % 2 == 1)
        repeats = [pair for pair in result.pairs if frozenset(pair) in played]
        if must_be_clean:
            assert not repeats, f"round {number} repeats {repeats} though it need not"
        if result.bye is not None:
            if byes.get(result.bye):
                assert every_bot_had_a_bye, f"round {number}: a second bye for {result.bye}"
            byes[result.bye] = byes.get(result.bye, 0) + 1
            points[result.bye] += 2
        for a, b in result.pairs:
            a_counts[a] = a_counts.get(a, 0) + 1  # the seat balance: bot a minus bot b
            a_counts[b] = a_counts.get(b, 0) - 1
            played.add(frozenset((a, b)))
            outcome = rng.choice(["win", "split", "loss", "forfeit a", "forfeit b"])
            pa = {"win": 2, "split": 1, "loss": 0, "forfeit a": 0, "forfeit b": 2}[outcome]
            points[a] += pa
            points[b] += 2 - pa
    if withdraw_after is None:
        assert all(count <= 1 for count in byes.values()), f"more than one bye: {byes}"


@SETTINGS
@given(n=st.integers(min_value=2, max_value=64), rounds=st.integers(min_value=1, max_value=7),
       seed=st.integers(min_value=0, max_value=2**32 - 1))
@example(n=64, rounds=7, seed=1)
@example(n=63, rounds=7, seed=2)
@example(n=2, rounds=1, seed=3)
def test_every_round_is_a_valid_pairing_without_avoidable_repeats(n, rounds, seed):
    play_event(n, min(rounds, n - 1), seed)


def test_a_whole_64_bot_event_of_63_rounds():
    """The largest field played to its last possible round: the late rounds are where a
    repeat-free pairing is hardest to find."""
    play_event(64, 63, 11)


@SETTINGS
@given(st.data())
def test_long_events_in_small_fields(data):
    """Every round of a small field up to n - 1 rounds, where repeats are near: the oracle
    decides each round."""
    n = data.draw(st.integers(min_value=2, max_value=12), label="bots")
    seed = data.draw(st.integers(min_value=0, max_value=2**32 - 1), label="results")
    play_event(n, n - 1, seed)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_withdrawals_keep_the_rounds_valid(data):
    n = data.draw(st.integers(min_value=3, max_value=20), label="bots")
    rounds = data.draw(st.integers(min_value=2, max_value=n - 1), label="rounds")
    after = data.draw(st.integers(min_value=1, max_value=rounds - 1), label="withdrawn after")
    seed = data.draw(st.integers(min_value=0, max_value=2**32 - 1), label="results")
    play_event(n, rounds, seed, withdraw_after=after)


def test_round_one_pairs_the_top_half_against_the_bottom_half():
    """The Dutch rule: seeds 1-4 meet seeds 5-8 in order; nobody has points yet."""
    field = list(range(1, 9))
    result = pair_round(field, {}, set(), set())
    assert sorted(tuple(sorted(p)) for p in result.pairs) == [(1, 5), (2, 6), (3, 7), (4, 8)]
    assert result.bye is None


def test_score_groups_and_the_bye_to_the_lowest():
    field = [1, 2, 3, 4, 5]
    points = {1: 2, 2: 2, 3: 1, 4: 1, 5: 0}
    result = pair_round(field, points, {frozenset((1, 3)), frozenset((2, 4))}, set())
    assert result.bye == 5
    assert sorted(tuple(sorted(p)) for p in result.pairs) == [(1, 2), (3, 4)]
    # Once bot 5 had its bye, the lowest other bot of the lowest group gets the next one.
    again = pair_round(field, {**points, 5: 2}, {frozenset((1, 2)), frozenset((3, 4))}, {5})
    assert again.bye in (3, 4)


def test_a_repeat_only_when_none_can_be_avoided():
    """Three bots, two rounds played: every pairing of the third round repeats one."""
    field = [1, 2, 3]
    played = {frozenset((1, 2)), frozenset((1, 3)), frozenset((2, 3))}
    result = pair_round(field, {1: 2, 2: 2, 3: 2}, played, {1, 2})
    assert result.bye == 3  # the one without a bye
    assert len(result.pairs) == 1
