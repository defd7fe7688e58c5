"""The simplest bot: a random legal action. Run: python -m client examples.random_bot:RandomBot"""

from __future__ import annotations

import random

import engine
from client import Bot


class RandomBot(Bot):
    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: engine.Observation) -> engine.Action:
        return self.rng.choice(observation.legal_actions)
