"""A match drawn as a card table, from the engine: what a spectator may see of a hand in play,
and, once a hand is over, its whole deal replayed trick by trick.

- `public_table(hand)`: the hand under way as a spectator sees it. It is built from the two
  seats' observations (`engine.observe`, R10), keeping only what both seats see: trump, stock
  size, the trick on the table, finished tricks, marriages, exchanges, points, hand *sizes*.
  No seat's cards, no stock order: a spectator sees less than either seat.
- `replay_steps(hand)`: a finished hand from its deal, one step per trick (plus the deal and the
  end), with both hands and the stock. Only for hands that are over (the caller checks).

Cards are engine texts (`"TH"`); the templates draw them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import engine
from engine.rules import Profile

MARRIAGE_POINTS = {True: 40, False: 20}  # R5.1: in trumps 40, else 20


def deal(seed: int, profile: str, number: int, dealer: int) -> engine.Hand:
    """Hand `number` of a match with `seed`, as dealt (server side only: the seed is secret
    while the match runs)."""
    return engine.Hand(engine.deck_for(seed, number), dealer, Profile(profile))


def play(hand: engine.Hand, actions: Sequence[tuple[int, str]]) -> engine.Hand:
    """`hand` after `actions` (seat, engine text), as logged."""
    for seat, text in actions:
        hand.apply(seat, engine.Action.from_text(text))
    return hand


def _marriages(obs: engine.Observation, seat: int) -> list[dict[str, Any]]:
    return [{"suit": m.suit.value, "points": MARRIAGE_POINTS[m.suit == obs.trump_suit],
             "trick": m.trick} for m in obs.marriages if m.seat == seat]


def _tricks(obs: engine.Observation) -> list[dict[str, Any]]:
    return [{"leader": t.leader, "lead": str(t.lead), "follow": str(t.follow),
             "winner": t.winner} for t in obs.tricks]


def public_table(hand: engine.Hand, counters: tuple[int, int] = (7, 7),
                 hand_number: int = 0) -> dict[str, Any]:
    """What a spectator sees of `hand` now (see the module docstring)."""
    views = [engine.observe(hand, seat, counters, hand_number) for seat in (0, 1)]
    obs = views[0]  # the fields taken from it are the same in both seats' views
    seats = []
    for seat in (0, 1):
        own = views[seat]
        seats.append({
            "hand_size": views[1 - seat].opponent_hand_size,
            "points": own.points,  # from its tricks (face up) and declared marriages
            "pending_points": own.pending_points,
            "tricks_won": own.tricks_won,
            "marriages": _marriages(obs, seat),
            "exchanged": [str(e.taken) for e in obs.exchanges if e.seat == seat],
        })
    tricks = _tricks(obs)
    return {
        "hand_number": hand_number,
        "dealer": obs.dealer,
        "to_act": obs.to_act,
        "trump_suit": obs.trump_suit.value,
        "trump_card": str(obs.trump_card),
        "trump_face_up": obs.trump_card_face_up,
        "stock_size": obs.stock_size,
        "closed_by": obs.closed_by,
        "closed_after": obs.closed_after,
        "leader": obs.leader,
        "lead_card": None if obs.lead_card is None else str(obs.lead_card),
        "tricks": tricks,
        "last_trick": tricks[-1] if tricks else None,
        "seats": seats,
        "counters": list(counters),
    }


def _snapshot(hand: engine.Hand, step: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    """Everything about `hand` now (a finished hand only: both hands and the stock)."""
    table = public_table(hand)
    last = table["last_trick"]
    return {
        "step": step,
        "tricks_done": len(table["tricks"]),
        "events": events,
        "hands": [sorted_cards(hand.holding(seat)) for seat in (0, 1)],
        "stock": [str(c) for c in hand.stock_cards()],  # top first, the trump card last
        "table": table,
        "on_table": ({"leader": table["leader"], "lead": table["lead_card"], "follow": None,
                      "winner": None} if table["lead_card"] else last if events else None),
        "over": hand.is_over,
    }


def sorted_cards(cards: Sequence[engine.Card]) -> list[str]:
    """Cards by suit, then rank high to low (as a player holds them)."""
    return [str(c) for c in sorted(cards, key=lambda c: c.index)]


def replay_steps(hand: engine.Hand, actions: Sequence[tuple[int, str]],
                 names: Sequence[str]) -> list[dict[str, Any]]:
    """A finished hand step by step: the deal, then one step per trick (with what was said
    or done on the way: marriages, exchange, close, claim), then the end if it came mid-trick.
    `hand` is as dealt; `actions` its whole log."""
    from web.transcript import describe

    steps = [_snapshot(hand, 0, [])]
    events: list[dict[str, Any]] = []
    tricks = 0
    for seat, text in actions:
        hand.apply(seat, engine.Action.from_text(text))
        events.append({"seat": seat, "name": names[seat], "action": text,
                       "text": describe(text)})
        done = hand.tricks_won(0) + hand.tricks_won(1)
        if done > tricks or hand.is_over:
            tricks = done
            steps.append(_snapshot(hand, len(steps), events))
            events = []
    if not hand.is_over:
        raise ValueError("replay_steps needs a finished hand")
    return steps
