"""The deal from a seed (R2): who deals first, and each hand's shuffled and cut deck.

Every random choice of a match comes from its seed, so a match is re-played from its seed and
its action list. Python's `random.Random` seeded with a string is stable across versions.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.cards import ALL_CARDS, Card


def first_dealer_for(seed: int | str) -> int:
    """The seat that deals the first hand of the match with this seed (R2.1)."""
    return random.Random(f"bummerl:{seed}:first-dealer").randrange(2)


def deck_for(seed: int | str, hand_number: int) -> list[Card]:
    """The deck of hand `hand_number` (0-based): the dealer shuffles, the non-dealer cuts (R2.2).

    Top card first, as `Hand` deals it.
    """
    rng = random.Random(f"bummerl:{seed}:hand:{hand_number}")
    deck = list(ALL_CARDS)
    rng.shuffle(deck)
    cut = rng.randrange(1, len(deck))
    return deck[cut:] + deck[:cut]


def check_deck(deck: Sequence[Card]) -> None:
    """Raise ValueError unless `deck` holds each of the 20 cards exactly once."""
    if len(deck) != 20 or len({c.index for c in deck}) != 20:
        raise ValueError("a deck must hold each of the 20 cards exactly once")
