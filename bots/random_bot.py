"""`random`: a uniformly random legal action (false claims and silly closes included)."""

from __future__ import annotations

import random

from bots.base import Bot
from engine import Action, Observation


class RandomBot(Bot):
    name = "random"

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        return rng.choice(observation.legal_actions)
