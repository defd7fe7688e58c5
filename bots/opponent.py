"""A learned model of how an opponent plays while the stock is open, and the likelihood of its
recorded play under a sampled deal: what the champion may weigh its deals by
(`ChampionBot(model=...)`, off by default: it measured no better, docs/house-bots.md).

The model (`OpponentModel`) is fitted by `tools/opponent_fit.py` to self-play records of
`tools/opponent_data.py`; the shipped one, `opponent_model.json`, to champion-v1's play. It gives
three probabilities, each from the deciding seat's hand, the trick number and its points:

- **its lead**: which card it leads, a conditional logit over the cards of its hand: a score for
  the card (trump or not, and its rank; by trick number; by points) plus one for each other card
  it holds, by that card's relation to the card led (same suit, trump, another suit) and rank;
- **its answer**: which card it answers a lead with, the same form, each card taken relative to
  the card led;
- **its close**: whether it closes at a lead (a logistic model of its cards, points and trick
  number).

`OpponentModel.log_likelihood(obs, held, rng)` is the log-probability of the opponent's
open-stock leads, answers and closes so far if it holds `held` now. What it held at an earlier
decision depends on when it drew each card, which no seat sees: one order of its draws is drawn
at random among those that agree with the record (`bots.leads.draw_times`), so the
likelihood of a deal is a random draw whose mean over the orders is the likelihood. Uses only
the observation and `held`.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

from bots.leads import DEALT, LAST_DRAW, NEVER, draw_times, played_by
from engine import Observation, Profile
from engine.cards import SUITS, Card

MODEL_FILE = Path(__file__).with_name("opponent_model.json")

# The parameters are one vector of tables indexed by card classes: `tclass(c)`, 10 classes
# (trump or not x rank); `rel(c, ref)`, 15 classes (c in ref's suit, a trump while ref is not,
# another suit x rank); the stage, the trick number 0..4; `points_bucket`, 6 classes.
LEAD_U, LEAD_V = 0, 10  # lead: the card led [tclass]; each other card [tclass led][rel]
LEAD_S = LEAD_V + 10 * 15  # ... the card led at this stage [stage][tclass]
LEAD_P = LEAD_S + 5 * 10  # ... the card led with these points [points][tclass]
FOLLOW_U = LEAD_P + 6 * 10  # answer: [tclass of the lead][rel of the answer to the lead]
FOLLOW_V = FOLLOW_U + 10 * 15  # ... each other card: [rel answer][rel card], both to the lead
FOLLOW_S = FOLLOW_V + 15 * 15  # ... the answer at this stage [stage][rel answer]
FOLLOW_P = FOLLOW_S + 5 * 15  # ... the answer with these points [points][rel answer]
CLOSE_B = FOLLOW_P + 6 * 15  # close: bias
CLOSE_Z = CLOSE_B + 1  # ... each card held [tclass]
CLOSE_P = CLOSE_Z + 10  # ... its points [points]
CLOSE_T = CLOSE_P + 6  # ... the stage
SIZE = CLOSE_T + 5


def tclass(card: int, trump: int) -> int:
    return (0 if card // 5 == trump else 5) + card % 5


def rel(card: int, ref: int, trump: int) -> int:
    suit = card // 5
    group = 0 if suit == ref // 5 else 1 if suit == trump else 2
    return group * 5 + card % 5


def points_bucket(points: int) -> int:
    """0; 1-20; 21-40; 41-55; 56-65; 66 and more."""
    return 0 if points == 0 else 1 if points < 21 else 2 if points < 41 else (
        3 if points < 56 else 4 if points < 66 else 5)


def lead_features(hand: list[int], card: int, trump: int, t: int, points: int) -> list[int]:
    """The parameters that score leading `card` from `hand` at trick `t` with `points`."""
    a = tclass(card, trump)
    base = LEAD_V + a * 15
    return ([LEAD_U + a, LEAD_S + min(t, 4) * 10 + a, LEAD_P + points_bucket(points) * 10 + a]
            + [base + rel(c, card, trump) for c in hand if c != card])


def follow_features(hand: list[int], card: int, lead: int, trump: int, t: int,
                    points: int) -> list[int]:
    """The parameters that score answering `lead` with `card` from `hand`."""
    a = rel(card, lead, trump)
    base = FOLLOW_V + a * 15
    return ([FOLLOW_U + tclass(lead, trump) * 15 + a, FOLLOW_S + min(t, 4) * 15 + a,
             FOLLOW_P + points_bucket(points) * 15 + a]
            + [base + rel(c, lead, trump) for c in hand if c != card])


def close_features(hand: list[int], t: int, points: int, trump: int) -> list[int]:
    """The parameters of the logit of closing at trick `t` with `hand` and `points`."""
    return ([CLOSE_B, CLOSE_P + points_bucket(points), CLOSE_T + min(t, 4)]
            + [CLOSE_Z + tclass(c, trump) for c in hand])


@dataclass
class OpponentModel:
    theta: list[float]  # SIZE parameters
    strength: float = 1.0  # the log-likelihood is multiplied by this (< 1: trusted less)

    @staticmethod
    def load(path: Path = MODEL_FILE, strength: float = 1.0) -> OpponentModel:
        data = json.loads(Path(path).read_text())
        theta = [float(x) for x in data["theta"]]
        if len(theta) != SIZE:
            raise ValueError(f"{path}: {len(theta)} parameters, the model has {SIZE}")
        return OpponentModel(theta, strength)

    def _sum(self, features: list[int]) -> float:
        theta = self.theta
        return sum(theta[i] for i in features)

    def log_choice(self, hand: list[int], card: int, lead: int, trump: int, t: int,
                   points: int) -> float:
        """log P(it plays `card` from `hand`), leading (`lead` < 0) or answering `lead`, at
        trick `t` with `points`."""
        if lead < 0:
            scores = [self._sum(lead_features(hand, c, trump, t, points)) for c in hand]
        else:
            scores = [self._sum(follow_features(hand, c, lead, trump, t, points)) for c in hand]
        top = max(scores)
        return scores[hand.index(card)] - top - math.log(sum(math.exp(s - top) for s in scores))

    def log_close(self, hand: list[int], t: int, points: int, trump: int, closed: bool) -> float:
        """log P(it closes at this lead) if `closed`, else log P(it does not)."""
        z = self._sum(close_features(hand, t, points, trump))
        z = z if closed else -z
        return -math.log1p(math.exp(-z)) if z > -30 else z

    def log_likelihood(self, obs: Observation, held: list[int], rng: random.Random) -> float:
        """`strength` times log P(the opponent's open-stock play so far | it holds `held` now),
        under one order of its draws drawn at random; 0 where the record cannot be modelled
        (the time of the opponent's trump exchange is not in it)."""
        opponent = 1 - obs.seat
        if any(ex.seat == opponent for ex in obs.exchanges):
            return 0.0
        times = draw_times(obs, {Card.from_index(c) for c in held}, rng)
        if times is None:
            return 0.0
        came = {c.index: t for c, t in times.items()}
        gone = {c.index: t for c, t in played_by(obs, opponent).items()}
        trump = SUITS.index(obs.trump_suit)
        tricks = obs.tricks
        open_until = DEALT if obs.closed_after is None else obs.closed_after
        declared = {m.trick: 40 if m.suit == obs.trump_suit else 20
                    for m in obs.marriages if m.seat == opponent}
        last = len(tricks) if obs.lead_card is None else len(tricks) + 1
        total = 0.0
        points = 0  # its card points and declared marriages (as `tools/opponent_data.py`)
        for t in range(min(last, open_until + 1)):
            points += declared.get(t, 0)
            under_way = t == len(tricks)
            hand = [c for c, arrived in came.items()
                    if arrived <= t and gone.get(c, NEVER) >= t]
            if len(hand) != DEALT:
                break
            if (obs.leader if under_way else tricks[t].leader) == opponent:
                closed = t == open_until and obs.closed_by == opponent
                if (t < open_until or closed) and not (
                        obs.profile is Profile.SHARP and t == LAST_DRAW):  # R9.3
                    total += self.log_close(hand, t, points, trump, closed)
                if t < open_until and t not in declared:  # after a marriage: its K or Q
                    lead = obs.lead_card if under_way else tricks[t].lead
                    assert lead is not None
                    total += self.log_choice(hand, lead.index, -1, trump, t, points)
            elif not under_way and t < open_until:
                total += self.log_choice(hand, tricks[t].follow.index, tricks[t].lead.index,
                                         trump, t, points)
            if under_way or t >= open_until:
                break
            if tricks[t].winner == opponent:
                points += tricks[t].lead.points + tricks[t].follow.points
        return self.strength * total
