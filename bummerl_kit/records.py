"""The site's games as training data (docs/kit-envs.md, "Training data"): exported match
records in, one row per decision out.

    from bummerl_kit import records

    for row in records.rows_of_files(["games.jsonl"], bot="mybot"):
        row.observation   # the deciding seat's observation tensor (bummerl_kit.envs.encoding)
        row.mask          # its legal mask
        row.action        # the index of the action it took
        row.values        # the analyst's value of each legal action, where the record has one

A record (docs/match-record.md: `bummerl games export`, JSON lines) is replayed through the
engine (its decks and actions), and each applied action gives a row built from what its seat
observed then (`engine.Match.observe`), encoded as the environments encode it. With `--view`
the record carries its bot's turns as the service sent them: those observations are used, and
must be the ones the replay gives. With its `analysis` (docs/analysis.md) a decision's row
carries the value of each legal action, in game points from the deciding seat's observation
(moves with one legal action have none). Pure Python: no NumPy needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from bummerl_kit.envs.encoding import (
    NUM_ACTIONS,
    action_index,
    legal_mask,
    observation_tensor,
)
from engine.actions import Action
from engine.cards import Card
from engine.errors import IllegalActionError
from engine.match import Match
from engine.matchrecord import RECORD_VERSION, InvalidRecordError, is_record
from engine.observation import Observation


class Row(NamedTuple):
    """One decision of one seat in a recorded match."""

    match_id: int | None
    hand: int  # the hand's number in the match, from 0
    seq: int  # the action's sequence number in the match
    seat: int
    bot: str | None  # the deciding seat's bot name
    observation: list[float]  # observation_tensor of the seat's observation then
    mask: list[int]  # legal_mask of it
    action: int  # the index of the action taken (bummerl_kit.envs.encoding)
    values: list[float | None] | None  # per action index: the analyst's value; None: no analysis
    method: str | None  # the analysis's "exact" or "estimate" for this decision
    best: int | None  # the index of the analyst's best action
    hand_points: int | None  # the hand's game points for this seat: +won, -lost, None: unfinished
    match_won: bool | None  # whether this seat won the match; None: no winner recorded

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The match records of a file: JSON lines (`bummerl games export`) or one document."""
    text = Path(path).read_text()
    stripped = text.strip()
    if not stripped:
        return
    try:
        documents: list[Any] = [json.loads(stripped)]
    except json.JSONDecodeError:
        documents = [json.loads(line) for line in text.splitlines() if line.strip()]
    for document in documents:
        if not is_record(document):
            raise InvalidRecordError(f"{path}: not a match record (no record_version)")
        yield document


def _seats(record: Mapping[str, Any], seats: Iterable[int] | None, bot: str | None
           ) -> set[int]:
    chosen = {0, 1} if seats is None else set(seats)
    if bot is not None:
        chosen &= {i for i, b in enumerate(record.get("bots") or []) if b.get("name") == bot}
    view = record.get("view")
    if view is not None and seats is None and bot is None:
        chosen = {view["seat"]}
    return chosen


def _values(decision: Mapping[str, Any]) -> tuple[list[float | None], str | None, int | None]:
    values: list[float | None] = [None] * NUM_ACTIONS
    for valued in decision.get("actions", []):
        values[action_index(valued["action"])] = float(valued["value"])
    best = decision.get("best")
    return values, decision.get("method"), None if best is None else action_index(best)


def rows(record: Mapping[str, Any], seats: Iterable[int] | None = None,
         bot: str | None = None) -> Iterator[Row]:
    """One row per action applied in `record`, for the deciding seats chosen: `seats` (both
    by default; a record with a `view`: the view's seat), and only the seats of the bot named
    `bot` if given. Raises InvalidRecordError when the record is not one of a known version or
    the engine refuses one of its actions."""
    if not is_record(record) or record["record_version"] != RECORD_VERSION:
        raise InvalidRecordError(
            f"not a match record of version {RECORD_VERSION}: "
            f"{record.get('record_version') if isinstance(record, Mapping) else record!r}")
    chosen = _seats(record, seats, bot)
    match_id = record.get("match_id")
    names = [b.get("name") for b in record.get("bots") or [{}, {}]]
    view = record.get("view")
    seen: dict[int, dict[str, Any]] = {}
    if view is not None:
        seen = {turn["seq"]: turn["observation"] for turn in view.get("turns", [])
                if turn.get("answer") is not None}
    analysed: dict[int, Mapping[str, Any]] = {
        d["seq"]: d for d in (record.get("analysis") or {}).get("decisions", [])}
    result = record.get("result") or {}
    winner = result.get("winner")
    decks = [[Card.from_text(t) for t in hand["deck"]] for hand in record["hands"]]
    match = Match(profile=record["profile"], first_dealer=record["first_dealer"], decks=decks)
    for number, hand in enumerate(record["hands"]):
        outcome = hand.get("result")
        for entry in hand["actions"]:
            seat, seq = entry["seat"], entry["seq"]
            action = Action.from_dict(entry)
            if seat in chosen:
                observation = match.observe(seat)
                if view is not None and seat == view["seat"] and seq in seen:
                    sent = Observation.from_dict(seen[seq])
                    if sent != observation:
                        raise InvalidRecordError(f"match {match_id}, seq {seq}: the view's "
                                                 "observation is not the replay's")
                    observation = sent
                decision = analysed.get(seq)
                values, method, best = (None, None, None) if decision is None else \
                    _values(decision)
                points = None
                if outcome is not None:
                    gained = outcome["game_points"]
                    points = gained if outcome["winner"] == seat else -gained
                yield Row(match_id, number, seq, seat, names[seat] if seat < len(names) else None,
                          observation_tensor(observation), legal_mask(observation),
                          action_index(action), values, method, best, points,
                          None if winner is None else winner == seat)
            try:
                match.apply(seat, action)
            except IllegalActionError as error:
                raise InvalidRecordError(f"match {match_id}, seq {seq}: the engine refuses "
                                         f"'{action}' by seat {seat}: {error}") from None


def rows_of_files(paths: Iterable[str | Path], seats: Iterable[int] | None = None,
                  bot: str | None = None) -> Iterator[Row]:
    """The rows of every record in the files (`rows`)."""
    chosen = None if seats is None else tuple(seats)
    for path in paths:
        for record in read_records(path):
            yield from rows(record, chosen, bot)


__all__ = ["Row", "read_records", "rows", "rows_of_files"]
