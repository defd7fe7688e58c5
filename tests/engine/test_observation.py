"""Observations (R10) and determinization: a full hand rebuilt from one seat's view must look
exactly like that view, and only ever place hidden cards where the seat cannot see them."""

from __future__ import annotations

import random

import pytest

from engine import ALL_CARDS, Match, Observation, Profile, determinize, observe


def _states(seed: int, profile: Profile) -> list[Match]:
    """Snapshots of a random match after each action (copies of its current hand)."""
    rng = random.Random(seed)
    match = Match(seed=seed, profile=profile)
    snapshots = []
    while not match.is_over and len(snapshots) < 120:
        seat = match.to_act
        assert seat is not None
        match.apply(seat, rng.choice(match.legal_actions()))
        snapshots.append(match.hand.copy())
    return snapshots


@pytest.mark.parametrize("profile", list(Profile))
@pytest.mark.parametrize("seed", range(12))
def test_determinized_hand_shows_the_same_observation(seed: int, profile: Profile) -> None:
    rng = random.Random(seed)
    for hand in _states(seed, profile):
        if hand.is_over:
            continue
        for seat in (0, 1):
            obs = observe(hand, seat)
            sampled = determinize(obs, rng)
            assert observe(sampled, seat) == obs
            other = 1 - seat
            # The opponent's cards and the stock are placed only among the unseen cards ...
            hidden = set(sampled.holding(other)) | set(sampled.stock_cards()[:-1])
            assert hidden == obs.unseen_cards()
            # ... and every card is somewhere exactly once.
            placed = [*sampled.holding(0), *sampled.holding(1), *sampled.stock_cards(),
                      *obs.played_cards()]
            assert sorted(placed) == sorted(ALL_CARDS)
            # What the seat was shown of the opponent's hand is really there.
            assert obs.known_opponent_cards() <= set(hand.holding(other))
            # The sampled hand plays on to a result.
            while sampled.to_act is not None:
                sampled.apply(sampled.to_act, rng.choice(sampled.legal_actions()))
            assert sampled.result is not None


def test_cards_ruled_out_by_strict_play_are_never_held() -> None:
    """R3.4: what `ruled_out_cards` says the opponent cannot hold, it does not hold, and the
    rule does tell something once strict play has shown a failed or a lower follow."""
    told = 0
    for hand in (h for seed in range(12) for h in _states(seed, Profile.SOFT)):
        for seat in (0, 1):
            obs = observe(hand, seat)
            out = obs.ruled_out_cards()
            assert out <= obs.unseen_cards()
            assert not out & set(hand.holding(1 - seat)), (out, hand.holding(1 - seat))
            told += bool(out)
            if obs.closed_by is None and obs.stock_size:
                assert out == set()  # while the stock is open any answer is legal
    assert told


def test_observation_never_holds_the_opponents_hand_or_the_stock() -> None:
    """R10.2: no field of the observation, nor its dict form, names a hidden card."""
    for hand in _states(3, Profile.SOFT):
        for seat in (0, 1):
            obs = observe(hand, seat)
            shown = set(obs.known_opponent_cards())
            if obs.stock_size:
                shown.add(hand.trump_card)
            hidden = (set(hand.holding(1 - seat)) | set(hand.stock_cards())) - shown
            text = str(obs.to_dict())
            public = {str(c) for c in obs.played_cards()} | {str(c) for c in obs.hand}
            for card in hidden:
                if str(card) not in public and card not in shown:
                    assert f"'{card}'" not in text, (card, text)


def test_observation_round_trips_through_a_dict() -> None:
    for hand in _states(5, Profile.SHARP)[::7]:
        obs = observe(hand, 0, (5, 3), 2)
        assert Observation.from_dict(obs.to_dict()) == obs
