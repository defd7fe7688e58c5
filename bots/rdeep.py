"""`rdeep`: for each legal action, sample deals of the unseen cards consistent with the
observation (`engine.determinize`), play the hand out with a simple random policy, and pick the
action with the best average result (the signed game points of the hand for this seat).

The playout policy claims when the claim is correct and otherwise plays a random legal card (it
never closes, exchanges or declares): cheap, and much less noisy than uniformly random actions.
Samples are spread round-robin over the actions, so a deadline cuts every action's estimate
fairly. Ties go to the first action in the engine's order (deterministic for a given rng).
"""

from __future__ import annotations

import random
import time

from bots.base import Bot
from engine import Action, ActionKind, Hand, Observation, determinize
from engine.rules import WINNING_POINTS


def playout(hand: Hand, me: int, rng: random.Random) -> int:
    """Play `hand` to its end with the playout policy; the game points for `me` (signed)."""
    while True:
        seat = hand.to_act
        if seat is None:
            break
        legal = hand.legal_actions()
        if legal[-1].kind is ActionKind.CLAIM and hand.points(seat) >= WINNING_POINTS:
            hand.apply(seat, legal[-1])
            continue
        cards = [a for a in legal if a.kind is ActionKind.PLAY]
        hand.apply(seat, rng.choice(cards or legal))
    result = hand.result
    assert result is not None
    return result.game_points if result.winner == me else -result.game_points


class RdeepBot(Bot):
    name = "rdeep"

    def __init__(self, samples: int = 12):
        self.samples = samples  # playouts per legal action

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        me = observation.seat
        totals = [0] * len(actions)
        counts = [0] * len(actions)
        for _ in range(self.samples):
            for i, action in enumerate(actions):
                hand = determinize(observation, rng)
                hand.apply(me, action)
                totals[i] += playout(hand, me, rng)
                counts[i] += 1
            if deadline is not None and time.monotonic() >= deadline:
                break
        best = max(range(len(actions)), key=lambda i: totals[i] / counts[i])
        return actions[best]
