"""What the opponent's leads say about its hand: a player on lead nearly always exchanges the
trump jack when it may (R4.1) and mostly declares a marriage it holds (R5.1), so a deal in which
the opponent held the jack or a marriage at one of its leads and did not use it is less likely.

`lead_weight(obs, held, rng)` is the likelihood of the opponent's leads if it holds `held` now,
up to a constant: `DECLARE_SKIP` for each open-stock lead at which it would have held an
undeclared marriage and declared none, `EXCHANGE_SKIP` for each lead at which it would have held
the trump jack with the exchange legal and did not exchange. What it held at an earlier lead
depends on when it drew each card, which no seat sees: one order of its draws is drawn at random
among those that agree with when it played and showed each card (`draw_times`), so that
accepting a deal with probability `lead_weight` weighs it by the likelihood averaged over the
draws. Uses only the observation and `held`, the sampled hand of the opponent.
"""

from __future__ import annotations

import random

from engine import Observation, Profile
from engine.cards import Card, Rank

# In self-play (40 duplicate deals, 30 ms a move) the champion left a marriage it held
# undeclared at about 30 % of its open-stock leads, and the trump jack unexchanged at 1 of 76.
DECLARE_SKIP = 0.3
EXCHANGE_SKIP = 0.05
DEALT = 5  # cards each seat is dealt (R2)
LAST_DRAW = 4  # the trick after which the stock's last two cards are drawn (R3.3)
NEVER = 99  # a deadline for a card never played nor shown


def played_by(obs: Observation, seat: int) -> dict[Card, int]:
    """The cards `seat` has played, each with the trick it was played in (the one under way
    included)."""
    played = {trick.lead if trick.leader == seat else trick.follow: t
              for t, trick in enumerate(obs.tricks)}
    if obs.lead_card is not None and obs.leader == seat:
        played[obs.lead_card] = len(obs.tricks)
    return played


def draw_times(obs: Observation, held: set[Card], rng: random.Random) -> dict[Card, int] | None:
    """For each card the opponent has held this hand and whose arrival is unknown, a random
    time it came into its hand (0: dealt; t: drawn after trick t - 1, so held from trick t on),
    uniform among those that agree with when it played and showed each card; None when the
    record cannot be modelled (it then weighs nothing)."""
    opponent = 1 - obs.seat
    deadline: dict[Card, int] = {c: NEVER for c in held} | played_by(obs, opponent)
    for m in obs.marriages:
        if m.seat == opponent:
            for rank in (Rank.KING, Rank.QUEEN):
                card = Card.from_text(rank.value + m.suit.value)
                deadline[card] = min(deadline.get(card, NEVER), m.trick)
    draws = min(len(obs.tricks), DEALT if obs.closed_after is None else obs.closed_after)
    slots = list(range(1, draws + 1))
    if draws > LAST_DRAW and obs.tricks[LAST_DRAW].winner != opponent:
        slots.pop()  # it took the face-up trump card on the last draw: a card it was shown
        deadline.pop(obs.trump_card, None)
    for ex in obs.exchanges:  # (after the last draw: the jack it gave may be the one it took)
        if ex.seat == opponent:  # the jack left its hand, the taken card came from the stock
            deadline.pop(ex.taken, None)
            deadline[Card.from_text("J" + obs.trump_suit.value)] = NEVER
    if len(deadline) != DEALT + len(slots):
        return None
    times: dict[Card, int] = {}
    pool = sorted(deadline)
    for slot in reversed(slots):  # latest first: then a uniform choice per slot is uniform
        able = [c for c in pool if deadline[c] >= slot]
        if not able:
            return None
        card = rng.choice(able)
        times[card] = slot
        pool.remove(card)
    for card in pool:
        times[card] = 0
    return times


def lead_weight(obs: Observation, held: set[Card], rng: random.Random) -> float:
    """The likelihood (up to a constant) of the opponent's leads if it holds `held` now."""
    opponent = 1 - obs.seat
    leads = [t for t, trick in enumerate(obs.tricks) if trick.leader == opponent]
    if obs.lead_card is not None and obs.leader == opponent:
        leads.append(len(obs.tricks))
    if not leads:
        return 1.0
    times = draw_times(obs, held, rng)
    if times is None:
        return 1.0
    gone = played_by(obs, opponent)
    open_until = DEALT if obs.closed_after is None else obs.closed_after
    taken = {ex.taken for ex in obs.exchanges}
    jack = Card.from_text("J" + obs.trump_suit.value)
    weight = 1.0
    for t in leads:
        if t >= open_until:
            break
        if t == 0 and obs.profile is Profile.SHARP:
            continue  # neither is allowed before winning a trick (R9.3); later leads won one
        hand = {c for c, came in times.items() if came <= t and gone.get(c, NEVER) >= t}
        declared = {m.suit for m in obs.marriages if m.seat == opponent and m.trick <= t}
        if not any(m.seat == opponent and m.trick == t for m in obs.marriages):
            for suit in {c.suit for c in hand} - declared:
                pair = {Card.from_text("K" + suit.value), Card.from_text("Q" + suit.value)}
                if pair <= hand and not pair & taken:
                    weight *= DECLARE_SKIP
                    break
        if not obs.exchanges and t <= LAST_DRAW and jack in hand:  # stock >= 2 (R4.1)
            weight *= EXCHANGE_SKIP
    return weight
