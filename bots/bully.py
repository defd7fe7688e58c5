"""`bully`: plays a trump if it can, else follows the suit led, else its highest card.

It claims when the claim is correct and otherwise only plays cards (no marriages, no closing).
Among several trumps or several cards of the suit led it plays the highest.
"""

from __future__ import annotations

import random

from bots.base import Bot, correct_claim, plays
from engine import Action, Observation

# Rank order high → low (R1.1), as a sort key: the card points say it (A 11 … J 2).


def _highest(actions: list[Action]) -> Action:
    return max(actions, key=lambda a: (a.card.points, a.card.index))  # type: ignore[union-attr]


class BullyBot(Bot):
    name = "bully"

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        claim = correct_claim(observation)
        if claim is not None:
            return claim
        cards = plays(observation)
        if not cards:  # cannot happen (a lead or a follow always allows a play), but be safe
            return observation.legal_actions[0]
        trumps = [a for a in cards if a.card.suit == observation.trump_suit]  # type: ignore[union-attr]
        if trumps:
            return _highest(trumps)
        lead = observation.lead_card
        if lead is not None:
            follow = [a for a in cards if a.card.suit == lead.suit]  # type: ignore[union-attr]
            if follow:
                return _highest(follow)
        return _highest(cards)
