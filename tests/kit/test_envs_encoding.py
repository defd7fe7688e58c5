"""bummerl_kit.envs.encoding (issue 45): fixed action indices, the legal mask is the engine's
legal actions, the observation tensor has its documented layout and holds only what the seat
may know (R10): two deals the seat cannot tell apart give it the same tensor."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from bummerl_kit.envs import encoding
from bummerl_kit.envs.encoding import (
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    action_index,
    action_of,
    legal_mask,
    observation_tensor,
)
from engine import ALL_CARDS, Action, Hand, Match, Profile, deck_for, observe

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


def indistinguishable(hand: Hand, seat: int, rng: random.Random) -> list | None:
    """A deck that deals `seat` the same cards and lets the same actions replay (the same
    public history) with the opponent's hand or the stock order changed, or None. Only cards
    whose place `seat` cannot see and was never shown are moved."""
    obs = observe(hand, seat)
    hidden = obs.unseen_cards() - obs.known_opponent_cards()
    deck = list(hand.deck)
    places = [i for i, card in enumerate(deck) if card in hidden]
    cards = [deck[i] for i in places]
    rng.shuffle(cards)
    other = list(deck)
    for i, card in zip(places, cards, strict=True):
        other[i] = card
    twin = Hand(other, hand.dealer, hand.profile)
    try:
        for actor, action in hand.history:
            twin.apply(actor, action)
    except ValueError:  # IllegalActionError: the moved cards changed what was legal
        return None
    if (twin.holding(1 - seat), twin.stock_cards()) == (hand.holding(1 - seat),
                                                        hand.stock_cards()):
        return None
    return [twin]


def test_a_seat_cannot_tell_apart_deals_that_differ_only_where_it_cannot_see():
    rng = random.Random(45)
    compared = 0
    for n in range(300):
        profile = Profile.SOFT if n % 2 == 0 else Profile.SHARP
        hand = Hand(deck_for(n, 0), dealer=n % 2, profile=profile)
        stop = rng.randrange(1, 20)
        steps = 0
        while not hand.is_over and steps < stop:
            actor = hand.to_act
            assert actor is not None
            hand.apply(actor, rng.choice(hand.legal_actions()))
            steps += 1
        if hand.is_over:
            continue
        for seat in (0, 1):
            found = indistinguishable(hand, seat, rng)
            if found is None:
                continue
            twin = found[0]
            mine = observe(hand, seat, (5, 3), 2)
            theirs = observe(twin, seat, (5, 3), 2)
            assert observation_tensor(mine) == observation_tensor(theirs)
            assert legal_mask(mine) == legal_mask(theirs)
            # The harness would see a leak: the opponent's own view did change.
            assert (observe(hand, 1 - seat).hand != observe(twin, 1 - seat).hand
                    or hand.stock_cards() != twin.stock_cards())
            compared += 1
    assert compared > 200


def test_a_leaky_encoding_would_fail_the_same_comparison():
    """The comparison above catches a tensor that reads hidden cards: encode the opponent's
    hand too and twins differ."""
    rng = random.Random(7)
    differed = 0
    for n in range(50):
        hand = Hand(deck_for(n, 0), dealer=0)
        hand.apply(1, hand.legal_actions()[0])
        found = indistinguishable(hand, 1, rng)
        if found is None:
            continue
        twin = found[0]
        if set(hand.holding(0)) != set(twin.holding(0)):
            differed += 1
    assert differed > 10
