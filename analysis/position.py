"""A live position valued for a person (issue 31, "hints and exercises"): pure computation
over the seat's observation only, as every analysis here (docs/analysis.md).

- `hint(obs)`: each legal action's value for the seat to act (game points of the hand, exact or
  estimated with its standard error), and the best one. It is `decision.analyse` of the
  position (the same deals, seeds and budget), so a hint is the analysis the match would get
  afterwards, and it is the same for every deal consistent with the observation.
- `only_right(obs)`: for an exercise, the one action that is best against every hand the
  opponent could hold, each solved exactly, when there is exactly one such action (every other
  action then loses against at least one hand, so on average); None otherwise. Only where all
  consistent deals can be solved: the stock closed or exhausted, or the last trick before it
  runs out, with at most `ENUMERATE` deals.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from analysis.deals import Deals, is_strict, seed_of
from analysis.decision import ENUMERATE, SAMPLES, analyse
from analysis.values import joint_values
from engine import Action, Observation


def hint(obs: Observation, samples: int = SAMPLES) -> dict[str, Any]:
    """The values of the legal actions of the seat to act in `obs`; ValueError when the seat
    has no decision to make (not its turn, or one legal action)."""
    legal = obs.legal_actions
    if obs.to_act != obs.seat or not legal:
        raise ValueError("it is not this seat's turn: nothing to hint")
    if len(legal) == 1:
        return {"method": "exact", "basis": "the only legal action", "deals": 0,
                "best": str(legal[0]),
                "actions": [{"action": str(legal[0]), "value": None, "se": None,
                             "exact": True, "loss": 0.0}]}
    found = analyse(obs, legal[0], samples)
    assert found is not None
    best = found["best"]
    top = next(a["value"] for a in found["actions"] if a["action"] == best)
    actions = [{"action": a["action"], "value": a["value"], "se": a["se"],
                "exact": a["se"] is None, "loss": round(top - a["value"], 4)}
               for a in found["actions"]]
    exact = all(a["exact"] for a in actions)
    return {"method": "exact" if exact else "estimate",
            "basis": found["basis"] if exact or found["method"] == "estimate"
            else f"{found['deals']} deals sampled",
            "deals": found["deals"], "best": best, "actions": actions}


@dataclass(frozen=True)
class OnlyRight:
    """An exercise's verdict: `answer` is best against each of `deals` deals, and every other
    action loses on average `losses[action]` game points (each > 0)."""

    answer: Action
    values: dict[Action, float]  # the mean exact value of each legal action
    losses: dict[Action, float]  # of the others: how much worse than the answer, on average
    deals: int


def only_right(obs: Observation, enumerate_limit: int = ENUMERATE) -> OnlyRight | None:
    """The one action best against every consistent deal, each solved exactly (see the module
    docstring); None when there is none, or more than one, or the deals cannot all be solved."""
    legal = obs.legal_actions
    if obs.to_act != obs.seat or len(legal) < 2:
        return None
    deals = Deals(obs)
    solvable = is_strict(obs) or obs.stock_size == 2
    if not solvable or deals.count > enumerate_limit:
        return None
    hands, everything = deals.hands(enumerate_limit, 0, random.Random(seed_of(obs)))
    if not everything:
        return None
    per_deal = joint_values(hands)
    dominant = [a for a in legal if all(v[a] == max(v.values()) for v in per_deal)]
    if len(dominant) != 1:
        return None
    answer = dominant[0]
    means = {a: sum(v[a] for v in per_deal) / len(per_deal) for a in legal}
    losses = {a: round(means[answer] - means[a], 4) for a in legal if a != answer}
    if not all(loss > 0 for loss in losses.values()):
        return None
    return OnlyRight(answer, {a: round(m, 4) for a, m in means.items()}, losses, len(hands))
