"""A hosted bot whose process exits at its first turn: its validation fails with the code."""

import os

from bummerl_kit import Bot, engine


class Exiting(Bot):
    def act(self, observation: engine.Observation) -> engine.Action:
        print("exiting at my first turn", flush=True)
        os._exit(3)
