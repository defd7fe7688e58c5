"""A person's hint and the exercises (issue 31): a hint reads only the seat's observation (the
same hint for every deal consistent with it, the deal in the test's hand included), and an
exercise's one right action is checked by a plain minimax over the engine against every hand
the opponent could hold."""

from __future__ import annotations

import random

from endgame_helpers import brute_force_actions
from recordkit import play_record
from test_analysis_values import random_position

from analysis import analyse_record
from analysis.deals import Deals, is_strict
from analysis.exercises import cut, difficulty
from analysis.position import hint, only_right
from engine import ActionKind, Observation, observe


def test_a_hint_is_the_same_for_every_deal_consistent_with_the_observation():
    rng = random.Random(17)
    phases = set()
    for _ in range(8):
        hand = random_position(rng)
        seat = hand.to_act
        obs = observe(hand, seat, (4, 6), 1)
        first = hint(obs, samples=4)
        phases.add("strict" if is_strict(obs) else "open")
        assert first["best"] in [str(a) for a in obs.legal_actions]
        assert [a["action"] for a in first["actions"]] == [str(a) for a in obs.legal_actions]
        for other in Deals(obs).sample(3, random.Random(rng.random())):
            # another deal the seat cannot tell apart: its cards differ from the true deal's...
            seen = observe(other, seat, (4, 6), 1)
            assert seen == obs
            # ...and the hint is the same: nothing in it rests on a card the seat cannot know
            assert hint(seen, samples=4) == first
    assert phases == {"strict", "open"}


def test_a_hint_is_refused_when_it_is_not_the_seats_turn():
    rng = random.Random(2)
    hand = random_position(rng)
    other = observe(hand, 1 - hand.to_act)
    try:
        hint(other)
    except ValueError as e:
        assert "not this seat's turn" in str(e)
    else:
        raise AssertionError("a hint for a seat not to act")


def verify_by_minimax(obs: Observation, answer: str) -> None:
    """`answer` is best against every deal consistent with `obs` (every hand the opponent could
    hold; with the stock still open, every order of it too), by a plain minimax over the
    engine on each, and every other action but an exchange or a declaration (after which the
    minimax would let the seat know the deal) is worse against at least one."""
    deals = Deals(obs)
    hands = list(deals.all()) if not is_strict(obs) else list(deals.one_per_opponent_hand())
    assert len(hands) == deals.hands_count * (1 if is_strict(obs) else len(hands)
                                              // deals.hands_count)
    worse: set[str] = set()
    for hand in hands:
        assert observe(hand, obs.seat, obs.counters, obs.hand_number) == obs
        truth = {str(a): v for a, v in brute_force_actions(hand).items()}
        assert truth[answer] == max(truth.values()), (answer, truth)
        worse |= {a for a, v in truth.items() if v < truth[answer]}
    others = {str(a) for a in obs.legal_actions if str(a) != answer
              and a.kind not in (ActionKind.EXCHANGE, ActionKind.DECLARE)}
    assert others <= worse, others - worse


def test_an_exercises_one_right_answer_holds_against_every_hand_the_opponent_could_hold():
    kinds = set()
    checked = 0
    for seed in (1, 2):
        record, _ = play_record(seed, ("bully", "bully"), match_id=seed)
        exercises = cut(record, analyse_record(record, samples=2))
        for e in exercises:
            obs = Observation.from_dict(e["observation"])
            verify_by_minimax(obs, e["answer"])
            assert e["answer"] not in e["losses"] and all(v > 0 for v in e["losses"].values())
            assert 1 <= e["difficulty"] <= 5
            kinds.add(e["kind"])
            checked += 1
    assert checked >= 8
    assert {"closing", "stock gone"} <= kinds, kinds


def test_only_right_leaves_out_positions_with_two_right_actions():
    rng = random.Random(23)
    ties = 0
    for _ in range(30):
        hand = random_position(rng)
        obs = observe(hand, hand.to_act)
        if not is_strict(obs) or Deals(obs).count > 64:
            continue
        verdict = only_right(obs)
        truths = [brute_force_actions(h) for h in Deals(obs).one_per_opponent_hand()]
        best_every = [a for a in obs.legal_actions
                      if all(t[a] == max(t.values()) for t in truths)]
        if verdict is None:
            ties += len(best_every) != 1
        else:
            assert best_every == [verdict.answer]
            assert difficulty(obs, verdict) >= 1
    assert ties >= 1
