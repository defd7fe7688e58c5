"""Match records (docs/match-record.md): checking one against the rules, and a seat's view of it.

A record is one finished match as a JSON document: its settings, both bots, every hand's deck,
every action (seq, seat, think time), every refused action with its rule, each hand's result
and the match's. It is self-verifying: `verify_record` replays it with the engine and reports
every place where the record and the rules disagree. `seat_view` rebuilds, from the record
alone, each turn of one seat as the service sent it (the observation, the time bank left) with
the seat's answer and think time.

Pure: a dict in, plain data out. A record's hands have the form of a conformance case's hands
(`deck`, `actions` of `{"seat", "do", ...}`), so a record is also a valid case.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from engine.actions import Action
from engine.cards import Card
from engine.deal import deck_for, first_dealer_for
from engine.errors import IllegalActionError
from engine.hand import Hand
from engine.match import Match
from engine.replay import InvalidCaseError, check_case
from engine.rules import MATCH_POINTS

RECORD_VERSION = 1
PLAYED = "played"
FORFEIT_TIMEOUT = "forfeit_timeout"
FORFEIT_ILLEGAL = "forfeit_illegal"
RESIGNED = "resigned"  # a person resigned a casual game: the forfeit_seat resigned
END_REASONS = (PLAYED, FORFEIT_TIMEOUT, FORFEIT_ILLEGAL, RESIGNED)


class InvalidRecordError(ValueError):
    """The input is not a match record of a known version; the message says why."""


def is_record(document: Any) -> bool:
    """Whether `document` says it is a match record (has `record_version`)."""
    return isinstance(document, dict) and "record_version" in document


def dealt(deck: list[Card], dealer: int) -> tuple[list[list[str]], str]:
    """Both seats' five cards and the face-up trump card of a hand dealt from `deck` (R2.2)."""
    hand = Hand(deck, dealer)
    return [[str(c) for c in hand.holding(s)] for s in (0, 1)], str(hand.trump_card)


def hand_deal(seed: int, number: int, dealer: int) -> dict[str, Any]:
    """The deal part of hand `number` of the match with `seed`: its deck, holdings, trump."""
    deck = deck_for(seed, number)
    holdings, trump = dealt(deck, dealer)
    return {"deck": [str(c) for c in deck], "holdings": holdings, "trump_card": trump}


# --- walking a record ------------------------------------------------------------------------
class _Step:
    """One moment of a record's replay: before action `seq` (`action` is None at the end of
    an unfinished last hand), with the refusals recorded at that seq."""

    __slots__ = ("seq", "hand_index", "seat", "action", "entry", "refusals")

    def __init__(self, seq: int, hand_index: int, seat: int | None, action: Action | None,
                 entry: dict[str, Any] | None, refusals: list[dict[str, Any]]) -> None:
        self.seq = seq
        self.hand_index = hand_index
        self.seat = seat
        self.action = action
        self.entry = entry
        self.refusals = refusals


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_structure(record: Any) -> None:
    """Raise InvalidRecordError unless `record` has the shape of a version-1 record."""
    if not isinstance(record, dict):
        raise InvalidRecordError("a match record is a JSON object")
    version = record.get("record_version")
    if version != RECORD_VERSION:
        raise InvalidRecordError(f"unknown record_version {version!r}: this bummerl reads "
                                 f"version {RECORD_VERSION}")
    try:
        check_case(record)
    except InvalidCaseError as e:
        raise InvalidRecordError(str(e)) from None
    for key in ("match_id", "seed"):
        if key in record and record[key] is not None and not _int(record[key]):
            raise InvalidRecordError(f"{key} must be a whole number")
    result = record.get("result")
    if not isinstance(result, dict):
        raise InvalidRecordError("result must be an object")
    bots = record.get("bots", [{}, {}])
    if not (isinstance(bots, list) and len(bots) == 2 and all(isinstance(b, dict) for b in bots)):
        raise InvalidRecordError("bots must be a list of two objects (seat 0's, seat 1's)")
    tc = record.get("time_control", {})
    if not isinstance(tc, dict) or not all(
            v is None or _int(v) for v in (tc.get("move_ms"), tc.get("bank_ms"),
                                           tc.get("max_illegal"))):
        raise InvalidRecordError("time_control must be an object of whole numbers")
    for key in ("winner", "forfeit_seat"):
        if result.get(key) not in (0, 1, None) or isinstance(result.get(key), bool):
            raise InvalidRecordError(f"result.{key} must be 0, 1 or null")
    if result.get("end_reason") not in END_REASONS:
        raise InvalidRecordError(f"result.end_reason must be one of {', '.join(END_REASONS)}")
    for i, hand in enumerate(record["hands"]):
        for j, step in enumerate(hand["actions"]):
            if not _int(step.get("seq")):
                raise InvalidRecordError(f"hand {i}, action {j}: seq must be a whole number")
            think = step.get("think_ms")
            if think is not None and not (_int(think) and think >= 0):
                raise InvalidRecordError(f"hand {i}, action {j}: think_ms must be a whole "
                                         "number of milliseconds, or null")
        refusals = hand.get("refusals", [])
        if not isinstance(refusals, list):
            raise InvalidRecordError(f"hand {i}: refusals must be a list")
        for j, refusal in enumerate(refusals):
            if not (isinstance(refusal, dict) and _int(refusal.get("seq"))
                    and refusal.get("seat") in (0, 1) and isinstance(refusal.get("action"), str)):
                raise InvalidRecordError(f"hand {i}, refusal {j}: needs seq, seat (0 or 1) "
                                         "and action")


def _steps(record: dict[str, Any], problems: list[str]) -> Iterator[tuple[Match, _Step]]:
    """Replay `record` with the engine: before each action (and at the end), the match and
    the step. Disagreements of deals and sequence numbers are added to `problems`; an action
    the engine refuses ends the walk with a problem."""
    decks = [[Card.from_text(t) for t in h["deck"]] for h in record["hands"]]
    match = Match(profile=record["profile"], first_dealer=record["first_dealer"], decks=decks)
    expected = 0
    for i, hand in enumerate(record["hands"]):
        if i > len(match.results):
            problems.append(f"hand {i - 1}'s actions end before that hand is over, but hand "
                            f"{i} follows")
            return
        if match.is_over:
            problems.append(f"hand {i} follows the end of the match")
            return
        if hand.get("dealer", match.hand.dealer) != match.hand.dealer:
            problems.append(f"hand {i}: the record says seat {hand['dealer']} dealt; the rules "
                            f"say seat {match.hand.dealer} (R2.1)")
        holdings, trump = dealt(decks[i], match.hand.dealer)
        if "holdings" in hand and hand["holdings"] != holdings:
            problems.append(f"hand {i}: the holdings are not the ones its deck deals (R2.2)")
        if "trump_card" in hand and hand["trump_card"] != trump:
            problems.append(f"hand {i}: the trump card is not its deck's (R2.2)")
        refusals: dict[int, list[dict[str, Any]]] = {}
        for refusal in hand.get("refusals", []):
            refusals.setdefault(refusal["seq"], []).append(refusal)
        for j, entry in enumerate(hand["actions"]):
            if entry["seq"] != expected:
                problems.append(f"hand {i}, action {j}: seq {entry['seq']}, expected {expected}")
            try:
                action = Action.from_dict(entry)
            except ValueError as e:
                problems.append(f"hand {i}, action {j} (seq {entry['seq']}): {e} (R11.1)")
                return
            yield match, _Step(expected, i, entry["seat"], action, entry,
                               refusals.pop(expected, []))
            try:
                match.apply(entry["seat"], action)
            except IllegalActionError as e:
                problems.append(f"hand {i}, action {j} (seq {entry['seq']}): the engine refuses "
                                f"'{action}' by seat {entry['seat']}: {e}")
                return
            expected += 1
        final = [r for seq, rs in sorted(refusals.items()) if seq == expected for r in rs]
        stray = [seq for seq in refusals if seq != expected]
        if stray:
            problems.append(f"hand {i}: refusals at seq {sorted(stray)} are outside the hand")
        if final or (i == len(record["hands"]) - 1 and not match.is_over):
            yield match, _Step(expected, i, match.to_act, None, None, final)


def _check_refusals(match: Match, step: _Step, problems: list[str]) -> None:
    hand = match.hand
    for refusal in step.refusals:
        where = f"refusal at seq {step.seq} ('{refusal['action']}' by seat {refusal['seat']})"
        if match.is_over or hand.is_over:
            problems.append(f"{where}: the hand is over then")
            continue
        if refusal["seat"] != hand.to_act:
            problems.append(f"{where}: seat {hand.to_act} was to act (R3.1)")
            continue
        try:
            action = Action.from_text(refusal["action"])
        except ValueError:
            continue  # (a text cut to the record's bound: nothing to check against)
        if action in hand.legal_actions():
            problems.append(f"{where}: the rules allow it")
            continue
        rule = hand.why_illegal(refusal["seat"], action).rule
        if refusal.get("rule") not in (None, rule):
            problems.append(f"{where}: the record cites {refusal['rule']}, the rules {rule}")


def verify_record(record: Any) -> dict[str, Any]:
    """Replay a match record with the engine and check every result it states.

    Returns `{"match_id", "verified", "problems", "match"}`: `problems` lists each
    disagreement (an empty list: `verified` true), `match` what the engine makes of the
    match (`counters`, `winner`: the seat, or None while no counter reached 0). Raises
    InvalidRecordError when `record` is not a record of a known version."""
    _check_structure(record)
    problems: list[str] = []
    seed = record.get("seed")
    if seed is not None:
        if record["first_dealer"] != first_dealer_for(seed):
            problems.append(f"first_dealer {record['first_dealer']} is not the one seed {seed} "
                            "gives (R2.1)")
        for i, hand in enumerate(record["hands"]):
            if hand["deck"] != [str(c) for c in deck_for(seed, i)]:
                problems.append(f"hand {i}: the deck is not the one seed {seed} gives (R2.2)")
    match: Match | None = None
    refused = [0, 0]
    for match, step in _steps(record, problems):
        _check_refusals(match, step, problems)
        for refusal in step.refusals:
            refused[refusal["seat"]] += 1
    if match is None:  # (a record with no step: its only hand has no actions)
        match = Match(profile=record["profile"], first_dealer=record["first_dealer"],
                      decks=[[Card.from_text(t) for t in record["hands"][0]["deck"]]])
    _check_results(record, match, refused, problems)
    return {"match_id": record.get("match_id"), "verified": not problems, "problems": problems,
            "match": {"counters": list(match.counters), "winner": match.winner}}


def _check_results(record: dict[str, Any], match: Match, refused: list[int],
                   problems: list[str]) -> None:
    for i, hand in enumerate(record["hands"]):
        engine_result = match.results[i].to_dict() if i < len(match.results) else None
        stated = hand.get("result")
        if stated == engine_result:
            continue
        if stated is None or engine_result is None:
            said = "is over" if stated is not None else "is not over"
            problems.append(f"hand {i}: the record says the hand {said}; the engine "
                            f"{'ends it' if engine_result else 'does not end it'} (R8.6)")
            continue
        if not isinstance(stated, dict):
            problems.append(f"hand {i}: its result is not an object")
            continue
        for key, value in engine_result.items():
            if stated.get(key) != value:
                problems.append(f"hand {i}: {key} is {stated.get(key)!r} in the record, "
                                f"{value!r} by the engine (R8.6)")
    result = record["result"]
    counters, winner = list(match.counters), match.winner
    if result.get("counters") != counters:
        problems.append(f"the record's counters are {result.get('counters')}, the engine's "
                        f"{counters} (R9.1)")
    reason = result["end_reason"]
    forfeit_seat = result.get("forfeit_seat")
    if reason == PLAYED:
        if winner is None:
            problems.append("the record says the match was played out, but no counter reached "
                            "0 (R9.1)")
        elif result.get("winner") != winner:
            problems.append(f"the record says seat {result.get('winner')} won, the engine "
                            f"seat {winner} (R9.1)")
        schneider = winner is not None and counters[1 - winner] == MATCH_POINTS
        if result.get("schneider", schneider) != schneider:
            problems.append(f"schneider is {result.get('schneider')}, the engine {schneider}")
        return
    if match.is_over:
        problems.append(f"the record says {reason}, but the match was played out (R9.1)")
        return
    if forfeit_seat not in (0, 1) or result.get("winner") != 1 - forfeit_seat:
        problems.append(f"a {reason} is won by the other seat than the forfeit_seat, not "
                        f"{result.get('winner')} (forfeit_seat {forfeit_seat})")
        return
    if reason == FORFEIT_TIMEOUT and match.to_act != forfeit_seat:
        problems.append(f"seat {forfeit_seat} forfeited on time, but seat {match.to_act} was to "
                        "act")
    limit = record.get("time_control", {}).get("max_illegal")
    illegal = result.get("illegal")
    if isinstance(illegal, list) and illegal != refused:
        problems.append(f"the record counts {illegal} illegal actions; its refusals are "
                        f"{refused}")
    if reason == FORFEIT_ILLEGAL and limit is not None and refused[forfeit_seat] < limit:
        problems.append(f"seat {forfeit_seat} forfeited for illegal actions after "
                        f"{refused[forfeit_seat]} refusals, fewer than the {limit} of the "
                        "time control")


# --- a seat's view ---------------------------------------------------------------------------
def seat_view(record: Mapping[str, Any], seat: int) -> list[dict[str, Any]]:
    """Each turn of `seat` in the record's match as the service sent it: `seq`, the
    `observation` (engine `Observation.to_dict()` form, the legal actions included) and the
    `bank_left_ms` the turn carried, then what came back: the `refused` answers (action, rule,
    message), the `answer` (`{"do": ...}`, None where the seat never answered: a forfeit) and
    its `think_ms`. InvalidRecordError if the record is not one; a record that does not replay
    ends its view where the engine stops."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    _check_structure(record)
    tc = record.get("time_control", {})
    move_ms, bank = tc.get("move_ms"), tc.get("bank_ms")
    bots = record.get("bots", [{}, {}])
    house = bots[seat].get("kind") == "house"
    turns: list[dict[str, Any]] = []
    problems: list[str] = []
    for match, step in _steps(dict(record), problems):
        if step.seat != seat or match.is_over:
            continue
        think = step.entry.get("think_ms") if step.entry is not None else None
        turns.append({
            "seq": step.seq,
            "observation": match.observe(seat).to_dict(),
            "bank_left_ms": None if house else bank,
            "refused": [{"action": r["action"], "rule": r.get("rule"),
                         "message": r.get("message")} for r in step.refusals],
            "answer": step.action.to_dict() if step.action is not None else None,
            "think_ms": think,
        })
        if house or bank is None or move_ms is None:
            continue
        if step.action is not None:
            bank = None if think is None else max(0, bank - max(0, think - move_ms))
    return turns
