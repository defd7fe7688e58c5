"""The analysis of one decision: given only the deciding seat's observation, the value of each
legal action, the best one, the loss of the action taken, and whether that is exact.

- **exact**: every deal the seat cannot tell apart was solved exactly (`values.joint_values`:
  after an exchange or a declaration the follow-up is the one best on average over the deals,
  as the seat must choose it without knowing the deal) and one action is best in each of
  them: the seat knew where every card was (the stock exhausted: one deal), or the verdict
  holds against every hand the opponent could hold (the stock closed, or the last trick before
  it runs out, with at most `ENUMERATE` deals). A correct claim while the stock is open is
  exact too: no later action can score more (the opponent's points and tricks only grow), so
  its loss is exactly 0; so is a closing that wins 3 game points against each hand the
  opponent could hold (at most `CLOSE_ENUMERATE`, each solved). Where such a sure action was
  not taken, it is the best one and the loss of what was taken is an estimate.
- **estimate** otherwise: the mean over `SAMPLES` deals drawn with the observation's seed (or
  over all of them, when few), with its standard error; while the stock is open each deal is
  valued by `values.joint_playout_values`.

Values are the hand's game points for the deciding seat, and (`bummerl`) those points capped by
the match counters (R9.1): a win counts at most the points the seat still needs, a loss at most
the points the opponent still needs. Means over deals weigh every consistent deal alike.
"""

from __future__ import annotations

import math
import random
from typing import Any

from analysis.deals import Deals, is_strict, seed_of
from analysis.values import joint_playout_values, joint_values, solved
from engine import Action, ActionKind, Observation
from engine.actions import CLOSE
from engine.rules import WINNING_POINTS

ENUMERATE = 64  # solve every consistent deal exactly when there are at most this many
SAMPLES = 32  # otherwise: deals drawn per decision
CLOSE_ENUMERATE = 300  # a sure closing is checked against every hand when at most this many
BEST = 3  # the most game points a hand gives (R8)
KINDS = ("missed claim", "false claim", "claim", "closing", "exchange", "marriage", "strict play",
         "open play")


def cap(value: float, counters: tuple[int, int], me: int) -> float:
    """Game points that count toward the Bummerl: no more than either counter still needs."""
    return min(value, counters[me]) if value > 0 else max(value, -counters[1 - me])


def kind_of(obs: Observation, taken: Action, best: Action) -> str:
    """What the decision was about, for the tally of losses."""
    kinds = {taken.kind, best.kind}
    if taken.kind is ActionKind.CLAIM and obs.points < WINNING_POINTS:
        return "false claim"
    if taken.kind is ActionKind.CLAIM:
        return "claim"
    if best.kind is ActionKind.CLAIM:
        return "missed claim"
    if ActionKind.CLOSE in kinds:
        return "closing"
    if ActionKind.EXCHANGE in kinds:
        return "exchange"
    if ActionKind.DECLARE in kinds:
        return "marriage"
    return "strict play" if is_strict(obs) else "open play"


def _mean_se(xs: list[float], exhaustive: bool) -> tuple[float, float]:
    n = len(xs)
    mean = sum(xs) / n
    if exhaustive or n < 2:
        return mean, 0.0
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, math.sqrt(var / n)


def sure_action(obs: Observation, deals: Deals,
                per_deal: list[dict[Action, int]]) -> Action | None:
    """While the stock is open, an action best against every hand the opponent could hold:
    a correct claim (R7.2: the opponent's points and tricks only grow, so nothing later scores
    more), or a closing that wins 3 game points (the most a hand gives, R8.3) against each
    hand, each solved exactly (after a close nobody draws: the stock's order does not count)."""
    legal = obs.legal_actions
    if legal[-1].kind is ActionKind.CLAIM and obs.points >= WINNING_POINTS:
        return legal[-1]
    if CLOSE not in legal or deals.hands_count > CLOSE_ENUMERATE:
        return None
    if any(v[CLOSE] != BEST for v in per_deal):
        return None
    for hand in deals.one_per_opponent_hand():
        hand.apply(obs.seat, CLOSE)
        if solved(hand, obs.seat) != BEST:
            return None
    return CLOSE


def analyse(obs: Observation, taken: Action, samples: int = SAMPLES,
            enumerate_limit: int = ENUMERATE) -> dict[str, Any] | None:
    """The analysis of `taken` by the seat of `obs` (its observation before acting); None when
    it had one legal action (no decision). Reads nothing but `obs`."""
    legal = obs.legal_actions
    if taken not in legal:
        raise ValueError(f"'{taken}' is not legal for seat {obs.seat} here")
    if len(legal) < 2:
        return None
    me = obs.seat
    rng = random.Random(seed_of(obs))
    deals = Deals(obs)
    strict = is_strict(obs)
    hands, everything = deals.hands(enumerate_limit, samples, rng)
    solvable = strict or (everything and obs.stock_size == 2)
    per_deal = joint_values(hands) if solvable else joint_playout_values(
        hands, [rng.getrandbits(64) for _ in hands])
    exhaustive = everything and solvable  # every deal, each solved exactly: nothing sampled
    dominant = [a for a in legal
                if all(v[a] == max(v.values()) for v in per_deal)] if exhaustive else []
    sure = None if solvable else sure_action(obs, deals, per_deal)
    exact = bool(dominant) or (sure is not None and sure is taken)
    means = {a: _mean_se([v[a] for v in per_deal], exhaustive) for a in legal}
    if dominant:
        best = taken if taken in dominant else dominant[0]
    elif sure is not None:
        best = sure
    else:
        top = max(m for m, _ in means.values())
        best = taken if means[taken][0] == top else next(
            a for a in legal if means[a][0] == top)
    loss, loss_se = _mean_se([v[best] - v[taken] for v in per_deal], exhaustive or exact)
    counters = obs.counters
    capped_loss = sum(cap(v[best], counters, me) - cap(v[taken], counters, me)
                      for v in per_deal) / len(per_deal)
    if exact:
        basis = ("every card known" if deals.count == 1 and strict
                 else "a correct claim" if sure is not None and sure.kind is ActionKind.CLAIM
                 else f"a closing that wins 3 against each of {deals.hands_count} hands"
                 if sure is not None
                 else f"best against each of {len(hands)} deals")
    else:
        basis = (f"all {len(hands)} deals, no action best in each" if exhaustive
                 else f"{len(hands)} deals sampled"
                 + ("" if solvable else ", played out to the closed stock"))
    actions = []
    for a in legal:
        mean, se = means[a]
        value_exact = bool(dominant) or a is sure
        actions.append({
            "action": str(a), "value": round(mean, 4),
            "se": None if value_exact else round(se, 4),
            "bummerl": round(sum(cap(v[a], counters, me) for v in per_deal) / len(per_deal), 4),
        })
    return {
        "seat": me, "phase": ("exhausted" if obs.stock_size == 0 and obs.closed_by is None
                              else "closed" if obs.closed_by is not None else "open"),
        "taken": str(taken), "best": str(best),
        "method": "exact" if exact else "estimate", "basis": basis, "deals": len(hands),
        "loss": round(loss, 4), "loss_se": None if exact else round(loss_se, 4),
        "bummerl_loss": round(capped_loss, 4), "kind": kind_of(obs, taken, best),
        "actions": actions,
    }
