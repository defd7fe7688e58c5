"""Presumed payoff: the opponent's next decision taken without sight of our cards.

Perfect-information Monte Carlo (PIMC) solves each sampled deal as if both seats saw every card,
so it presumes the opponent knows our hand in every later state (Wisser, IJCAI 2015, "the
overestimation of opponent's knowledge of hidden information in future states"). Presumed
payoff PIMC lets the opponent choose by what it can know. In Schnapsen that error lives where
cards stay hidden after strict play begins: a closed stock (R6). Once the stock is exhausted
(R3.3) every card's place is known to both seats and the exact solve is right.

`presumed_value(hand, me, ...)` is the value for `me` of a deal in its strict phase, with a
closed stock, when the opponent's next decision is its presumed one:

- while `me` is to act, the best of its actions (as PIMC: `me` sees this deal);
- at the opponent's next decision, it builds the opponent's observation of this deal (`observe`:
  its own cards and the public record) and draws `worlds` deals from it (`sample`: our cards and
  the stock dealt again from what the opponent cannot see, with what strict play told it about
  our hand). The opponent takes the action that is best for it on average over those deals, the
  same action whatever our hand is, since it cannot tell them apart;
- after that action the deal is solved exactly, as PIMC does (later decisions stay clairvoyant:
  one presumed decision per line, so every action of ours is valued the same way). Where all
  its actions are worth the same on this deal, its choice cannot matter and nothing is drawn.

An action the opponent's observation allows is the same in each of its drawn deals (its hand
and the public record are the same), so the average is over the same actions. Pure: the values
depend on `hand`, `me` and `rng` only; `solve` (the exact solver's value for `me`) and `sample`
(a deal consistent with an observation, with the opponent of that observation holding no card
of `excluded`) come from the caller.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine import Action, Hand, Observation, observe

Solve = Callable[[Hand], int]  # the exact value for `me` of a strict (or finished) hand
Sample = Callable[[Observation, random.Random, int], Hand]  # (observation, rng, excluded) -> deal


def hides_cards(hand: Hand) -> bool:
    """Does strict play go on with cards whose place a seat cannot see: a closed stock with
    cards left in it (R6)? With the stock exhausted both seats know every card's place."""
    return hand.result is None and hand.closed_by is not None and hand.stock_size > 0


def presumed_value(hand: Hand, me: int, rng: random.Random, worlds: int, solve: Solve,
                   sample: Sample) -> int:
    """The value for `me` of `hand` (strict phase) with the opponent's next decision presumed:
    taken as best for it on average over `worlds` deals it cannot tell from this one."""
    if not hides_cards(hand) or hand.to_act is None:
        return solve(hand)
    seat = hand.to_act
    legal = hand.legal_actions()
    if seat == me:
        best = None
        for action in legal:
            child = hand.copy()
            child.apply(me, action)
            value = presumed_value(child, me, rng, worlds, solve, sample)
            best = value if best is None else max(best, value)
        assert best is not None  # a seat to act has an action (R10)
        return best
    values = []  # our value after each of the opponent's actions, on this deal
    for action in legal:
        child = hand.copy()
        child.apply(seat, action)
        values.append(solve(child))
    if min(values) == max(values):  # what it chooses does not matter here: no need to presume
        return values[0]
    return values[legal.index(presumed_choice(hand, seat, rng, worlds, solve, sample))]


def presumed_choice(hand: Hand, seat: int, rng: random.Random, worlds: int, solve: Solve,
                    sample: Sample) -> Action:
    """The action `seat` takes at `hand` knowing only its observation: the lowest total of
    `solve` (our value) over `worlds` deals drawn from that observation (ties: the first legal
    action, the engine's order)."""
    view = observe(hand, seat)
    excluded = sum(c.bit for c in view.ruled_out_cards())
    deals = [sample(view, rng, excluded) for _ in range(worlds)]
    totals = []
    for action in view.legal_actions:
        total = 0
        for deal in deals:
            child = deal.copy()
            child.apply(seat, action)
            total += solve(child)
        totals.append(total)
    return view.legal_actions[totals.index(min(totals))]
