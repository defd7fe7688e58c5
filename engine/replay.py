"""Replaying a conformance case (the `bummerl replay` contract): a case dict in, the `expect`
object the rules give for it out. Pure: reading files and printing is the command line's job.
"""

from __future__ import annotations

from typing import Any

from engine.actions import Action
from engine.cards import Card
from engine.errors import IllegalActionError
from engine.match import Match
from engine.rules import Profile


class InvalidCaseError(ValueError):
    """The input is not a valid case; the message says why."""


def replay_case(case: Any) -> dict[str, Any]:
    """Apply the case's actions with the engine and return `{"hands", "error", "match"}`."""
    profile, first_dealer, hands = check_case(case)
    decks = [[Card.from_text(t) for t in h["deck"]] for h in hands]
    match = Match(profile=profile, first_dealer=first_dealer, decks=decks)
    for i, hand_case in enumerate(hands):
        if i > len(match.results):
            raise InvalidCaseError(f"hand {i - 1}'s actions end before that hand is over, "
                                   f"but hand {i} follows")
        if match.is_over and i == len(match.results) and not hand_case["actions"]:
            raise InvalidCaseError(f"hand {i} follows the end of the match")
        for j, step in enumerate(hand_case["actions"]):
            error = _apply(match, i, step)
            if error is not None:
                return {"hands": [r.to_dict() for r in match.results],
                        "error": {"hand": i, "action": j, "rule": error.rule}, "match": None}
    finished = [r.to_dict() for r in match.results]
    if len(finished) < len(hands):
        return {"hands": [*finished, None], "error": None, "match": None}
    return {"hands": finished, "error": None,
            "match": {"counters": list(match.counters), "winner": match.winner}}


def _apply(match: Match, hand_index: int, step: dict[str, Any]) -> IllegalActionError | None:
    """Apply one step of hand `hand_index`; the error, checked in the contract's order."""
    seat = step["seat"]
    if match.is_over or len(match.results) > hand_index:
        return IllegalActionError("R8.6", "the hand is over")
    hand = match.hand
    if seat != hand.to_act:
        return IllegalActionError("R3.1", "not this seat's turn")
    try:
        action = Action.from_dict(step)
    except ValueError as exc:
        return IllegalActionError("R11.1", str(exc))
    try:
        match.apply(seat, action)
    except IllegalActionError as exc:
        return exc
    return None


def check_case(case: Any) -> tuple[Profile, int, list[dict[str, Any]]]:
    """The case's profile, first dealer and hands; InvalidCaseError naming what is wrong."""
    if not isinstance(case, dict):
        raise InvalidCaseError("a case is a JSON object")
    try:
        profile = Profile(case.get("profile", "soft"))
    except ValueError:
        raise InvalidCaseError(f"unknown profile {case.get('profile')!r}: soft or sharp") from None
    first_dealer = case.get("first_dealer")
    if first_dealer not in (0, 1) or isinstance(first_dealer, bool):
        raise InvalidCaseError("first_dealer must be 0 or 1")
    hands = case.get("hands")
    if not isinstance(hands, list) or not hands:
        raise InvalidCaseError("hands must be a non-empty list")
    for i, hand in enumerate(hands):
        if not isinstance(hand, dict):
            raise InvalidCaseError(f"hand {i} is not an object")
        deck = hand.get("deck")
        if not isinstance(deck, list) or not all(isinstance(t, str) for t in deck):
            raise InvalidCaseError(f"hand {i}: deck must be a list of 20 card texts")
        try:
            cards = [Card.from_text(t) for t in deck]
        except ValueError as exc:
            raise InvalidCaseError(f"hand {i}: {exc}") from None
        if len(cards) != 20 or len(set(cards)) != 20:
            raise InvalidCaseError(f"hand {i}: deck must hold each of the 20 cards once")
        actions = hand.get("actions")
        if not isinstance(actions, list):
            raise InvalidCaseError(f"hand {i}: actions must be a list")
        for j, step in enumerate(actions):
            if not isinstance(step, dict):
                raise InvalidCaseError(f"hand {i}, action {j}: not an object")
            seat = step.get("seat")
            if seat not in (0, 1) or isinstance(seat, bool):
                raise InvalidCaseError(f"hand {i}, action {j}: seat must be 0 or 1")
    return profile, first_dealer, hands
