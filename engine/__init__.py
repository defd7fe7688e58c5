"""The Schnapsen rules engine (RULES.md): pure Python, no I/O, deterministic from a seed.

The public API is listed in docs/engine-api.md; everything a caller needs is imported here.
"""

from engine.actions import Action, ActionKind
from engine.cards import ALL_CARDS, Card, Rank, Suit
from engine.deal import deck_for, first_dealer_for
from engine.errors import IllegalActionError
from engine.hand import Hand, HandResult
from engine.match import Match
from engine.observation import Observation, determinize, observe
from engine.record import Exchange, Marriage, Trick
from engine.rules import Profile, Reason

__all__ = [
    "ALL_CARDS", "Action", "ActionKind", "Card", "Exchange", "Hand", "HandResult",
    "IllegalActionError", "Marriage", "Match", "Observation", "Profile", "Rank", "Reason",
    "Suit", "Trick", "deck_for", "determinize", "first_dealer_for", "observe",
]
