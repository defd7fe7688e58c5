"""The public record of a hand: its finished tricks, declared marriages and trump exchanges.

Both seats see all of it (R10.1). Named tuples: immutable, and cheap to build for the bots that
read an observation per move.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.cards import Card, Suit


class Trick(NamedTuple):
    """A finished trick: who led, the two cards, who won it."""

    leader: int
    lead: Card
    follow: Card
    winner: int


class Marriage(NamedTuple):
    """A declared marriage (R5.1); `trick` is how many tricks were finished when declared."""

    seat: int
    suit: Suit
    trick: int


class Exchange(NamedTuple):
    """A trump-jack exchange (R4.1): `seat` took the face-up card `taken`."""

    seat: int
    taken: Card
