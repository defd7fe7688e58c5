"""The value of an action on one deal, in game points for the deciding seat.

- `exact_values`: every card placed, both seats playing perfectly from here: the endgame solver
  (`bots.endgame`, pure computation) once the stock is closed or exhausted, and a plain
  minimax over the engine before that (used for the last trick before the stock runs out).
- `joint_playout_values`: the estimate while the stock is open: the action, then both seats play a
  fixed greedy policy until the stock is closed or exhausted, then the solver. After an
  exchange or a declaration (the seat acts again) the follow-up best on average over the deals.
"""

from __future__ import annotations

import random

from bots.endgame import BEST, WORST, Position, Solver
from engine import Action, ActionKind, Hand
from engine.rules import WINNING_POINTS


def result_value(hand: Hand, me: int) -> int:
    result = hand.result
    assert result is not None
    return result.game_points if result.winner == me else -result.game_points


def solved(hand: Hand, me: int) -> int:
    """The exact value for `me` of a hand in its strict phase (or over)."""
    if hand.result is not None:
        return result_value(hand, me)
    pos = Position.from_hand(hand)
    solver = Solver.for_position(pos)
    if pos.lead < 0 and pos.declared < 0:
        seat, other = pos.to_act, 1 - pos.to_act
        crel = 0 if pos.closer is None else 1 if pos.closer == seat else 2
        w = pos.tricks_won
        value = solver.lead(pos.hands[seat], pos.hands[other], pos.card_points[seat],
                            pos.card_points[other], pos.marriage_points[seat],
                            pos.marriage_points[other], bool(w[seat]), bool(w[other]), crel,
                            pos.started, WORST, BEST)
    else:
        value = max(solver.action_values(pos).values())
    return value if pos.to_act == me else -value


def minimax(hand: Hand, me: int) -> int:
    """The exact value for `me` with every card known: minimax over the engine while the stock
    is open, the solver after."""
    if hand.result is not None or hand.is_strict:
        return solved(hand, me)
    seat = hand.to_act
    assert seat is not None
    values = []
    for action in hand.legal_actions():
        child = hand.copy()
        child.apply(seat, action)
        values.append(minimax(child, me))
    return max(values) if seat == me else min(values)


def exact_values(hand: Hand) -> dict[Action, int]:
    """The exact value of each legal action for the seat to act, every card known."""
    me = hand.to_act
    assert me is not None
    if hand.is_strict:
        return Solver.for_position(Position.from_hand(hand)).action_values(
            Position.from_hand(hand))
    out = {}
    for action in hand.legal_actions():
        child = hand.copy()
        child.apply(me, action)
        out[action] = minimax(child, me)
    return out


def joint_values(hands: list[Hand]) -> list[dict[Action, int]]:
    """`exact_values` on each of these deals (one information set: the same legal actions),
    except that after an exchange or a declaration (the seat acts again, still not knowing the
    deal) the follow-up is one action for all deals, the best on average, not the best on each
    (which would credit the seat with knowing the deal)."""
    per_deal = [exact_values(h) for h in hands]
    if len(hands) < 2:
        return per_deal
    me = hands[0].to_act
    assert me is not None
    for action in hands[0].legal_actions():
        if action.kind is not ActionKind.EXCHANGE and action.kind is not ActionKind.DECLARE:
            continue
        children = []
        for h in hands:
            child = h.copy()
            child.apply(me, action)
            children.append(child)
        after = joint_values(children)
        follow = max(after[0], key=lambda f: sum(v[f] for v in after))
        for values, values_after in zip(per_deal, after, strict=True):
            values[action] = values_after[follow]
    return per_deal


def policy(hand: Hand, rng: random.Random) -> Action:
    """The playout policy: claim when correct, exchange, declare (trumps first), otherwise
    lead a low side card and answer by winning aces and tens cheaply, else throw low."""
    seat = hand.to_act
    assert seat is not None
    legal = hand.legal_actions()
    if legal[-1].kind is ActionKind.CLAIM and hand.points(seat) >= WINNING_POINTS:
        return legal[-1]
    plays = [a for a in legal if a.kind is ActionKind.PLAY]
    for a in legal:
        if a.kind is ActionKind.EXCHANGE:
            return a
    declares = [a for a in legal if a.kind is ActionKind.DECLARE]
    if declares:
        return max(declares, key=lambda a: a.suit == hand.trump_suit)
    if len(plays) == 1:
        return plays[0]
    trump = hand.trump_suit
    lead = hand.lead_card

    def card_of(a: Action):  # type: ignore[no-untyped-def]
        assert a.card is not None
        return a.card

    if lead is None:
        return min(plays, key=lambda a: (card_of(a).suit == trump, card_of(a).points,
                                         rng.random()))
    higher = [a for a in plays if card_of(a).suit == lead.suit
              and card_of(a).index < lead.index]
    if higher:
        return min(higher, key=lambda a: card_of(a).index)
    if lead.points >= 10 and lead.suit != trump:
        trumps = [a for a in plays if card_of(a).suit == trump]
        if trumps:
            return min(trumps, key=lambda a: card_of(a).points)
    return min(plays, key=lambda a: (card_of(a).suit == trump, card_of(a).points))


def playout(hand: Hand, me: int, rng: random.Random) -> int:
    """Play the open stock out with the policy, then solve: game points for `me`."""
    while hand.to_act is not None and not hand.is_strict:
        seat = hand.to_act
        hand.apply(seat, policy(hand, rng))
    return solved(hand, me)


def joint_playout_values(hands: list[Hand], seeds: list[int]) -> list[dict[Action, int]]:
    """The estimate of each legal action on each deal (the same playout randomness for every
    action of a deal: common random numbers). After an exchange or a declaration the follow-up
    is one action for all deals, the best on average (as in `joint_values`)."""
    me = hands[0].to_act
    assert me is not None
    per_deal: list[dict[Action, int]] = [{} for _ in hands]
    for action in hands[0].legal_actions():
        children = []
        for h in hands:
            child = h.copy()
            child.apply(me, action)
            children.append(child)
        if action.kind is ActionKind.EXCHANGE or action.kind is ActionKind.DECLARE:
            after = joint_playout_values(children, seeds)
            follow = max(after[0], key=lambda f: sum(v[f] for v in after))
            for values, values_after in zip(per_deal, after, strict=True):
                values[action] = values_after[follow]
        else:
            for values, child, seed in zip(per_deal, children, seeds, strict=True):
                values[action] = playout(child, me, random.Random(seed))
    return per_deal
