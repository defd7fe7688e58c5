"""The interface every house bot obeys: an observation in, an action out.

A house bot gets exactly what an outside bot gets (RULES.md §10): the `Observation` of its own
seat with the legal actions. It never sees the engine's `Hand` or `Match`, so it cannot read the
opponent's cards or the stock order. Its randomness comes from the `rng` it is given, so a
batch simulation is reproducible from its seed.
"""

from __future__ import annotations

import random

from engine import Action, ActionKind, Observation
from engine.rules import WINNING_POINTS


class Bot:
    """Base class: override `choose`."""

    name = "bot"

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        """The action to take. `deadline` is a `time.monotonic()` value the bot should answer
        by (search bots stop early); None means no time limit."""
        raise NotImplementedError


def correct_claim(observation: Observation) -> Action | None:
    """The claim action if it is legal and correct now (own points ≥ 66, R7.2), else None."""
    if observation.points < WINNING_POINTS:
        return None
    for action in observation.legal_actions:
        if action.kind is ActionKind.CLAIM:
            return action
    return None


def plays(observation: Observation) -> list[Action]:
    """The legal card plays."""
    return [a for a in observation.legal_actions if a.kind is ActionKind.PLAY]
