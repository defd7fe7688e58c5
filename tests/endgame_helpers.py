"""Reference search over the engine itself, and random strict-phase positions, for the solver's
tests and bench/endgame.py."""

from __future__ import annotations

import random

from engine import Action, ActionKind, Hand, Profile, deck_for
from engine.rules import WINNING_POINTS


def brute_force(hand: Hand, me: int) -> int:
    """Plain minimax over every legal engine action (copy + apply): game points for `me`."""
    result = hand.result
    if result is not None:
        return result.game_points if result.winner == me else -result.game_points
    seat = hand.to_act
    assert seat is not None
    values = []
    for action in hand.legal_actions():
        child = hand.copy()
        child.apply(seat, action)
        values.append(brute_force(child, me))
    return max(values) if seat == me else min(values)


def brute_force_actions(hand: Hand) -> dict[Action, int]:
    """The brute-force value of each legal action, for the seat to act."""
    seat = hand.to_act
    assert seat is not None
    out = {}
    for action in hand.legal_actions():
        child = hand.copy()
        child.apply(seat, action)
        out[action] = brute_force(child, seat)
    return out


def random_strict_hand(rng: random.Random, profile: Profile = Profile.SOFT,
                       max_cards: int = 5, close_rate: float = 0.15) -> Hand:
    """A hand played at random (closes, marriages and exchanges included; claims only when
    correct) until the stock is exhausted or closed and each hand holds at most `max_cards`."""
    while True:
        hand = Hand(deck_for(rng.randrange(10**9), 0), rng.randrange(2), profile)
        while hand.to_act is not None:
            seat = hand.to_act
            size = len(hand.holding(seat))
            if (hand.is_strict and size <= max_cards and hand.lead_card is None
                    and (rng.random() < 0.5 or size < max_cards)):
                return hand
            legal = hand.legal_actions()
            claim = [a for a in legal if a.kind is ActionKind.CLAIM]
            if claim and hand.points(seat) >= WINNING_POINTS:
                break  # a hand about to end: deal another
            choices = [a for a in legal if a.kind is not ActionKind.CLAIM
                       and (a.kind is not ActionKind.CLOSE or rng.random() < close_rate)]
            hand.apply(seat, rng.choice(choices or legal))
        # the hand ended before reaching a small strict position; try again


def random_exhausted_hand(rng: random.Random, profile: Profile = Profile.SOFT) -> Hand:
    """A hand played at random (no closing) until the stock is exhausted: five cards each,
    the first trick of the strict phase to lead."""
    while True:
        hand = Hand(deck_for(rng.randrange(10**9), 0), rng.randrange(2), profile)
        while hand.to_act is not None:
            seat = hand.to_act
            if hand.is_strict:
                return hand
            legal = hand.legal_actions()
            if legal[-1].kind is ActionKind.CLAIM and hand.points(seat) >= WINNING_POINTS:
                break
            plays = [a for a in legal if a.kind is ActionKind.PLAY]
            hand.apply(seat, rng.choice(plays))
