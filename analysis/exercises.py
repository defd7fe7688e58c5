"""Exercises cut from an analysed match (issue 31; docs/analysis.md, "Hints and exercises for
people"): the decisions where exactly one action is right against every hand the opponent could
hold, each solved exactly (`position.only_right`), with what they are about and how hard they
are.

Pure: a match record and its analysis in, exercises (JSON-ready dicts) out.

- Candidates are the analysis's exact decisions; each is checked again from the deciding seat's
  observation alone by solving every consistent deal (`only_right`), so an exercise never rests
  on a card the seat could not know.
- A position whose only choice is one card or a false claim is left out unless the player of
  the match made that false claim (then it is a "false claim avoided").
- `difficulty` from 1 (easy) to 5: one point to start, one for 3 or more cards in hand, one for
  5, one when the second-best action loses less than 1 game point, one when less than 0.5.
"""

from __future__ import annotations

from typing import Any

from analysis.position import OnlyRight, only_right
from engine import Action, ActionKind, Card, Match, Observation
from engine.rules import WINNING_POINTS


def kind_of(obs: Observation, verdict: OnlyRight, taken: Action) -> str:
    """What the exercise is about."""
    answer = verdict.answer
    if answer.kind is ActionKind.CLAIM:
        return "claim"
    if taken.kind is ActionKind.CLAIM and obs.points < WINNING_POINTS:
        return "false claim avoided"
    if answer.kind is ActionKind.CLOSE:
        return "closing"
    if answer.kind is ActionKind.EXCHANGE:
        return "exchange"
    if answer.kind is ActionKind.DECLARE:
        return "marriage"
    if obs.closed_by is not None:
        return "closed stock"
    if obs.stock_size == 0:
        return "stock gone"
    return "last trick before the stock runs out"


def difficulty(obs: Observation, verdict: OnlyRight) -> int:
    """1 (easy) .. 5 (hard): see the module docstring."""
    second = min(verdict.losses.values())
    cards = len(obs.hand)
    return 1 + (cards >= 3) + (cards >= 5) + (second < 1) + (second < 0.5)


def trivial(obs: Observation, taken: Action) -> bool:
    """Only one action besides a false claim, and the player did not make that claim."""
    choices = [a for a in obs.legal_actions
               if not (a.kind is ActionKind.CLAIM and obs.points < WINNING_POINTS)]
    return len(choices) < 2 and not (taken.kind is ActionKind.CLAIM
                                     and obs.points < WINNING_POINTS)


def exercise_of(obs: Observation, taken: Action) -> dict[str, Any] | None:
    """The exercise at this observation, or None when it has not exactly one right action."""
    if trivial(obs, taken):
        return None
    verdict = only_right(obs)
    if verdict is None:
        return None
    return {
        "seat": obs.seat, "observation": obs.to_dict(), "answer": str(verdict.answer),
        "values": {str(a): value for a, value in verdict.values.items()},
        "losses": {str(a): loss for a, loss in verdict.losses.items()},
        "taken": str(taken), "kind": kind_of(obs, verdict, taken),
        "difficulty": difficulty(obs, verdict), "cards_left": len(obs.hand),
        "deals": verdict.deals,
    }


def cut(record: dict[str, Any], analysis: dict[str, Any]) -> list[dict[str, Any]]:
    """The exercises of a finished match record, at its analysis's exact decisions (each dict
    also has the decision's `seq`)."""
    exact = {d["seq"] for d in analysis.get("decisions", []) if d.get("method") == "exact"}
    if not exact:
        return []
    decks = [[Card.from_text(t) for t in h["deck"]] for h in record["hands"]]
    match = Match(profile=record["profile"], first_dealer=record["first_dealer"], decks=decks)
    found = []
    for hand in record["hands"]:
        for entry in hand["actions"]:
            seat, action = entry["seat"], Action.from_dict(entry)
            if entry["seq"] in exact:
                exercise = exercise_of(match.observe(seat), action)
                if exercise is not None:
                    found.append({"seq": entry["seq"], **exercise})
            match.apply(seat, action)
    return found
