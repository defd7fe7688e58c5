"""bummerl_kit.envs.encoding (issue 45): fixed action indices, the legal mask is the engine's
legal actions, the observation tensor has its documented layout and holds only what the seat
may know (R10): two deals the seat cannot tell apart give it the same tensor."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from envkit import twins

from bummerl_kit.envs import encoding
from bummerl_kit.envs.encoding import (
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    action_index,
    action_of,
    legal_mask,
    observation_tensor,
)
from engine import ALL_CARDS, Action, Match, Profile, observe

ROOT = Path(__file__).resolve().parents[2]


def test_actions_have_fixed_indices_that_round_trip():
    texts = [f"play {c}" for c in ALL_CARDS] + ["exchange", "close"]
    texts += [f"declare {s}" for s in "CDHS"] + ["claim"]
    assert [str(action_of(i)) for i in range(NUM_ACTIONS)] == texts
    for i in range(NUM_ACTIONS):
        assert action_index(action_of(i)) == i
        assert action_index(str(action_of(i))) == i
    assert action_index(Action.play("TH")) == ALL_CARDS.index(Action.play("TH").card)
    for bad in (-1, NUM_ACTIONS, True, 1.0):
        with pytest.raises(ValueError):
            action_of(bad)  # type: ignore[arg-type]


def test_layout_is_contiguous_and_documented():
    offset = 0
    for field in encoding.LAYOUT:
        assert field.offset == offset
        offset += field.size
    assert offset == OBSERVATION_SIZE
    text = (ROOT / "docs" / "kit-envs.md").read_text()
    rows = re.findall(r"^\| (\d+)(?:[–-](\d+))? \| `(\w+)` \|", text, re.M)
    documented = [(int(a), int(b or a), name) for a, b, name in rows]
    expected = [(f.offset, f.offset + f.size - 1, f.name) for f in encoding.LAYOUT]
    assert documented == expected
    assert f"{OBSERVATION_SIZE} floats" in text


def random_matches(count: int, seed: int = 1):
    """(match, every observation of the seat to act, with its seat) over random matches."""
    rng = random.Random(seed)
    for n in range(count):
        profile = Profile.SOFT if n % 2 == 0 else Profile.SHARP
        match = Match(seed=rng.randrange(10**9), profile=profile)
        while not match.is_over:
            seat = match.to_act
            assert seat is not None
            yield match, seat
            match.apply(seat, rng.choice(match.legal_actions()))


def test_mask_is_the_engines_legal_actions_in_both_profiles():
    seen = [0] * NUM_ACTIONS
    for match, seat in random_matches(40):
        obs = match.observe(seat)
        mask = legal_mask(obs)
        assert [action_of(i) for i in range(NUM_ACTIONS) if mask[i]] == sorted(
            match.legal_actions(), key=action_index)
        assert legal_mask(match.observe(1 - seat)) == [0] * NUM_ACTIONS
        tensor = observation_tensor(obs)
        assert len(tensor) == OBSERVATION_SIZE
        assert all(isinstance(x, float) for x in tensor)
        seen = [a + b for a, b in zip(seen, mask, strict=True)]
    assert all(seen), "every action was legal somewhere in 40 random matches"


def test_fields_read_the_observation():
    match = Match(seed=5)
    seat = match.to_act
    assert seat is not None
    obs = match.observe(seat)
    parts = encoding.describe(observation_tensor(obs))
    assert [i for i, x in enumerate(parts["hand"]) if x] == [c.index for c in obs.hand]
    assert parts["trump_card"][obs.trump_card.index] == 1.0
    assert parts["stock_size"] == [1.0]
    assert parts["to_act"] == [1.0, 0.0]
    assert parts["counters"] == [1.0, 1.0]
    assert parts["profile"] == [1.0, 0.0]
    assert sum(parts["unseen"]) == 20 - 5 - 1  # own cards and the face-up trump card


def test_a_seat_cannot_tell_apart_deals_that_differ_only_where_it_cannot_see():
    compared = 0
    for hand, twin, seat in twins(300, seed=45):
        mine = observe(hand, seat, (5, 3), 2)
        theirs = observe(twin, seat, (5, 3), 2)
        assert observation_tensor(mine) == observation_tensor(theirs)
        assert legal_mask(mine) == legal_mask(theirs)
        compared += 1
    assert compared > 200


def test_the_comparison_would_see_a_leak():
    """Twins differ where the seat cannot see: a tensor that read the opponent's hand or the
    stock (here: the opponent's own tensor, or the stock's order) would differ between them."""
    differed = 0
    for hand, twin, seat in twins(100, seed=7):
        theirs = observation_tensor(observe(hand, 1 - seat))
        assert (theirs != observation_tensor(observe(twin, 1 - seat))
                or hand.stock_cards() != twin.stock_cards())
        differed += theirs != observation_tensor(observe(twin, 1 - seat))
    assert differed > 20
