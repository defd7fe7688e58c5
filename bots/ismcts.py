"""`ismcts`: the champion with single-observer information-set MCTS instead of flat Monte Carlo
while the stock is open; the issue asked which of the two is stronger, and this is the other one.

While the stock is open each iteration draws a deal consistent with the seat's observation (the
champion's `sample_hand`), walks one tree of action sequences from the current position (both
seats' actions are edges; a child is chosen by UCB among the actions legal in that deal, with
the number of deals in which it was legal in place of the parent's visits), adds one node, plays
out to the strict phase with the champion's policy and values the rest exactly with the solver.
The move is the root action visited most. Once the stock is closed or exhausted it plays exactly
as the champion (exact solves of sampled deals).

`bench/strength.py --opponents ismcts` plays the two against each other (duplicate deals, the same
budget per move, `--clock cpu` on a shared machine); `docs/house-bots.md` has the figures: no
difference measurable over 300 deals, so the champion stays flat Monte Carlo.
"""

from __future__ import annotations

import math
import random

from bots.champion import ChampionBot, playout_value, sample_hand, solved_value
from bots.endgame import SearchTimeout
from engine import Action, Observation

EXPLORATION = 0.7  # UCB constant, on values scaled to [-1, 1] (game points / 3)


class Node:
    """Statistics of the action that leads to this node, from the view of the seat taking it."""

    __slots__ = ("children", "visits", "total", "avail")

    def __init__(self) -> None:
        self.children: dict[Action, Node] = {}
        self.visits = 0  # iterations through this node
        self.total = 0.0  # sum of values for the seat whose action led here
        self.avail = 0  # iterations in which the action was legal at the parent

    def score(self) -> float:
        if not self.visits:
            return math.inf
        mean = self.total / self.visits / 3
        return mean + EXPLORATION * math.sqrt(math.log(self.avail) / self.visits)


class IsmctsBot(ChampionBot):
    name = "ismcts"

    def _open(self, obs: Observation, rng: random.Random, stop: float | None,
              hard: float | None) -> Action:
        me = obs.seat
        root = Node()
        self._rounds(self.samples or 10**9, stop,
                     lambda: self._iterate(root, sample_hand(obs, rng), me, rng, hard))
        visited = [(root.children[a].visits, i, a) for i, a in enumerate(obs.legal_actions)
                   if a in root.children]
        return max(visited)[2]

    def _iterate(self, root: Node, hand, me: int, rng: random.Random,  # type: ignore[no-untyped-def]
                 hard: float | None) -> None:
        """One iteration on the deal `hand`: select, expand, play out, back up."""
        node, path = root, []
        while True:
            if hand.to_act is None or hand.is_strict:
                value = solved_value(hand, me, hard, self.clock)
                break
            if hard is not None and self.clock() >= hard:
                raise SearchTimeout
            seat = hand.to_act
            legal = hand.legal_actions()
            for action in legal:
                child = node.children.get(action)
                if child is None:
                    child = node.children[action] = Node()
                child.avail += 1
            fresh = [a for a in legal if not node.children[a].visits]
            action = rng.choice(fresh) if fresh else max(
                legal, key=lambda a: node.children[a].score())
            node = node.children[action]
            hand.apply(seat, action)
            path.append((node, seat))
            if fresh:
                value = playout_value(hand, me, rng, self.epsilon, hard, self.clock)
                break
        for visited, seat in path:
            visited.visits += 1
            visited.total += value if seat == me else -value
