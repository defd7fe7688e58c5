"""The simplest bot: a random legal action. Run: bummerl-kit examples/random_bot.py:RandomBot"""

from __future__ import annotations

import random

from bummerl_kit import Bot, engine


class RandomBot(Bot):
    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: engine.Observation) -> engine.Action:
        return self.rng.choice(observation.legal_actions)
