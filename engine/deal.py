"""The deal from a seed (R2): who deals first, and each hand's shuffled and cut deck.

Every random choice of a match comes from its seed, so a match is re-played from its seed and
its action list. The randomness is a BLAKE2b digest of the seed and the hand number, read as a
256-bit number that drives a Fisher-Yates shuffle and the cut: stable across Python versions and
machines, independent for every hand, and cheap (batch simulations deal millions of hands). The
bias of reducing 256 bits modulo 20! * 19 is below 2**-190.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from engine.cards import ALL_CARDS, Card


def _number(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=32).digest(), "big")


def first_dealer_for(seed: int | str) -> int:
    """The seat that deals the first hand of the match with this seed (R2.1)."""
    return _number(f"bummerl:{seed}:first-dealer") % 2


def deck_for(seed: int | str, hand_number: int) -> list[Card]:
    """The deck of hand `hand_number` (0-based): the dealer shuffles, the non-dealer cuts (R2.2).

    Top card first, as `Hand` deals it.
    """
    n = _number(f"bummerl:{seed}:hand:{hand_number}")
    deck = list(ALL_CARDS)
    for k in range(19, 0, -1):  # Fisher-Yates
        n, j = divmod(n, k + 1)
        deck[k], deck[j] = deck[j], deck[k]
    cut = 1 + n % 19  # the non-dealer cuts between two cards
    return deck[cut:] + deck[:cut]


def check_deck(deck: Sequence[Card]) -> None:
    """Raise ValueError unless `deck` holds each of the 20 cards exactly once."""
    if len(deck) != 20 or len({c.index for c in deck}) != 20:
        raise ValueError("a deck must hold each of the 20 cards exactly once")
