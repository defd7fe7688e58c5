"""The one encoding of a seat's observation and of actions (docs/kit.md, "The encoding").

Every environment of the kit (PettingZoo, OpenSpiel) and the training rows of
`bummerl_kit.records` use it, so a policy trained on one reads the others.

Actions have fixed indices, the same in both profiles (R9.3 changes when an action is legal,
never which actions exist):

    0..19   play the card with that index (`Card.index`: suit C D H S, rank A T K Q J)
    20      exchange the trump jack (R4.1)
    21      close the stock (R6.1)
    22..25  declare the marriage of C, D, H, S (R5.1)
    26      claim 66 (R7.1)

The observation tensor is a flat list of `OBSERVATION_SIZE` floats built from an
`engine.Observation` only, so it holds what the seat may know (R10.1) and nothing it may not
(R10.2): seat-relative ("own" and "opponent", never seat numbers), with the layout of `LAYOUT`
(name, offset, size, meaning). Pure Python.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from engine.actions import CLAIM, CLOSE, DECLARE_ACTIONS, EXCHANGE, PLAY_ACTIONS, Action
from engine.cards import SUITS, Card
from engine.observation import Observation
from engine.rules import MATCH_POINTS, WINNING_POINTS, Profile

# --- actions -------------------------------------------------------------------------------
EXCHANGE_INDEX = 20
CLOSE_INDEX = 21
DECLARE_INDEX = 22  # + the suit's place in SUITS (C D H S)
CLAIM_INDEX = 26
NUM_ACTIONS = 27

ACTIONS: tuple[Action, ...] = (*PLAY_ACTIONS, EXCHANGE, CLOSE, *DECLARE_ACTIONS, CLAIM)
_INDEX: dict[Action, int] = {action: i for i, action in enumerate(ACTIONS)}
assert len(ACTIONS) == NUM_ACTIONS and ACTIONS[DECLARE_INDEX] is DECLARE_ACTIONS[0]


def action_index(action: Action | str) -> int:
    """The fixed index of `action` (or of its text, `"play TH"`)."""
    if isinstance(action, str):
        action = Action.from_text(action)
    return _INDEX[action]


def action_of(index: int) -> Action:
    """The action with this fixed index (0..26, an int or a NumPy integer); raises
    ValueError otherwise."""
    try:
        number = operator.index(index)
    except TypeError:
        number = -1
    if isinstance(index, bool) or not 0 <= number < NUM_ACTIONS:
        raise ValueError(f"not an action index: {index!r} (0..{NUM_ACTIONS - 1})")
    return ACTIONS[number]


def mask_of(actions: Iterable[Action]) -> list[int]:
    """A 0/1 list of NUM_ACTIONS, 1 at the index of each of `actions`."""
    mask = [0] * NUM_ACTIONS
    for action in actions:
        mask[_INDEX[action]] = 1
    return mask


def legal_mask(observation: Observation) -> list[int]:
    """1 at the index of each of the seat's legal actions, else 0 (all 0 when it is not the
    seat's turn)."""
    return mask_of(observation.legal_actions)


# --- the observation tensor ---------------------------------------------------------------
class Field(NamedTuple):
    """One part of the observation tensor."""

    name: str
    offset: int
    size: int
    meaning: str


_PARTS: tuple[tuple[str, int, str], ...] = (
    ("hand", 20, "own cards, 1 per card index"),
    ("trump_suit", 4, "trump suit, one-hot C D H S"),
    ("trump_card", 20, "the trump card, one-hot (face up, or the one last seen)"),
    ("trump_card_face_up", 1, "1 while the trump card lies face up (stock open)"),
    ("lead_card", 20, "the card led in the trick under way, one-hot (all 0 if none)"),
    ("won_own", 20, "cards in the tricks the seat won"),
    ("won_opponent", 20, "cards in the tricks the opponent won"),
    ("known_opponent", 20, "cards shown to be in the opponent's hand (R10.2: exchange, "
                           "marriage partner, last draw)"),
    ("ruled_out", 20, "unseen cards strict play shows the opponent cannot hold (R3.4)"),
    ("unseen", 20, "cards whose place the seat cannot see (opponent's hand, face-down stock)"),
    ("declared_own", 4, "marriages the seat declared, by suit C D H S"),
    ("declared_opponent", 4, "marriages the opponent declared, by suit C D H S"),
    ("must_lead_marriage", 4, "the suit just declared whose K or Q must be led now (R5.1)"),
    ("exchanged", 2, "own exchange done, opponent's exchange done (R4.1)"),
    ("stock_size", 1, "cards in the stock, trump card included, / 10"),
    ("stock_exhausted", 1, "1 when the stock ran out (R3.3)"),
    ("closed", 2, "closed by the seat, closed by the opponent (R6.1)"),
    ("closed_after", 1, "tricks finished when the stock was closed / 10 (0 if not closed)"),
    ("points", 2, "own points, opponent's points (R5.5, from the public record) / 66"),
    ("pending_points", 2, "own, opponent's pending marriage points (R5.3) / 66"),
    ("tricks_won", 2, "own, opponent's tricks won / 10"),
    ("hand_sizes", 2, "own, opponent's cards in hand / 5"),
    ("counters", 2, "own, opponent's match counter (R9.1) / 7"),
    ("profile", 2, "one-hot soft, sharp (R9)"),
    ("to_act", 2, "1 if the seat acts now, 1 if the opponent does (both 0: hand over)"),
    ("leader", 1, "1 if the seat leads the trick under way (or the next)"),
    ("dealer", 1, "1 if the seat dealt this hand"),
)


def _layout() -> tuple[Field, ...]:
    fields, offset = [], 0
    for name, size, meaning in _PARTS:
        fields.append(Field(name, offset, size, meaning))
        offset += size
    return tuple(fields)


LAYOUT: tuple[Field, ...] = _layout()
FIELDS: dict[str, Field] = {f.name: f for f in LAYOUT}
OBSERVATION_SIZE = LAYOUT[-1].offset + LAYOUT[-1].size
# The bounds of each value (for a Box space): 0..1 but where a field says otherwise.
_BOUNDS = {
    "points": (0.0, 4.0),  # 120 card points and 100 of marriages at most: 220 / 66 < 4
    "pending_points": (0.0, 2.0),  # 100 of marriages at most
    "counters": (-0.5, 1.0),  # a counter ends at -2 at the lowest (1 - 3, R9.1)
}
LOW: tuple[float, ...] = tuple(_BOUNDS.get(f.name, (0.0, 1.0))[0]
                               for f in LAYOUT for _ in range(f.size))
HIGH: tuple[float, ...] = tuple(_BOUNDS.get(f.name, (0.0, 1.0))[1]
                                for f in LAYOUT for _ in range(f.size))


def _cards(out: list[float], at: int, cards: Iterable[Card]) -> None:
    for card in cards:
        out[at + card.index] = 1.0


def opponent_points(observation: Observation) -> tuple[int, int]:
    """The opponent's points (R5.5) and pending marriage points (R5.3), from the public
    record: the card points of the tricks it won, its marriages effective once it won one."""
    opponent = 1 - observation.seat
    cards = sum(t.lead.points + t.follow.points for t in observation.tricks
                if t.winner == opponent)
    marriages = sum(40 if m.suit == observation.trump_suit else 20
                    for m in observation.marriages if m.seat == opponent)
    if observation.opponent_tricks_won:
        return cards + marriages, 0
    return cards, marriages


def must_lead_marriage(observation: Observation) -> int | None:
    """The suit index (in SUITS) declared on the lead under way, whose K or Q must be led next
    (R5.1), or None."""
    if observation.lead_card is not None or not observation.marriages:
        return None
    last = observation.marriages[-1]
    if last.trick != len(observation.tricks) or last.seat != observation.leader:
        return None
    if observation.to_act is None:
        return None
    return SUITS.index(last.suit)


def observation_tensor(observation: Observation) -> list[float]:
    """The seat's observation as OBSERVATION_SIZE floats (the layout: `LAYOUT`)."""
    obs = observation
    seat, opponent = obs.seat, 1 - obs.seat
    out = [0.0] * OBSERVATION_SIZE
    f = FIELDS
    _cards(out, f["hand"].offset, obs.hand)
    out[f["trump_suit"].offset + SUITS.index(obs.trump_suit)] = 1.0
    out[f["trump_card"].offset + obs.trump_card.index] = 1.0
    out[f["trump_card_face_up"].offset] = float(obs.trump_card_face_up)
    if obs.lead_card is not None:
        out[f["lead_card"].offset + obs.lead_card.index] = 1.0
    for trick in obs.tricks:
        at = f["won_own"].offset if trick.winner == seat else f["won_opponent"].offset
        _cards(out, at, (trick.lead, trick.follow))
    _cards(out, f["known_opponent"].offset, obs.known_opponent_cards())
    _cards(out, f["ruled_out"].offset, obs.ruled_out_cards())
    _cards(out, f["unseen"].offset, obs.unseen_cards())
    for m in obs.marriages:
        at = f["declared_own"].offset if m.seat == seat else f["declared_opponent"].offset
        out[at + SUITS.index(m.suit)] = 1.0
    declared = must_lead_marriage(obs)
    if declared is not None:
        out[f["must_lead_marriage"].offset + declared] = 1.0
    at = f["exchanged"].offset
    for ex in obs.exchanges:
        out[at + (0 if ex.seat == seat else 1)] = 1.0
    out[f["stock_size"].offset] = obs.stock_size / 10
    out[f["stock_exhausted"].offset] = float(obs.stock_size == 0 and obs.closed_by is None)
    if obs.closed_by is not None:
        out[f["closed"].offset + (0 if obs.closed_by == seat else 1)] = 1.0
        out[f["closed_after"].offset] = (obs.closed_after or 0) / 10
    opp_points, opp_pending = opponent_points(obs)
    at = f["points"].offset
    out[at], out[at + 1] = obs.points / WINNING_POINTS, opp_points / WINNING_POINTS
    at = f["pending_points"].offset
    out[at] = obs.pending_points / WINNING_POINTS
    out[at + 1] = opp_pending / WINNING_POINTS
    at = f["tricks_won"].offset
    out[at], out[at + 1] = obs.tricks_won / 10, obs.opponent_tricks_won / 10
    at = f["hand_sizes"].offset
    out[at], out[at + 1] = len(obs.hand) / 5, obs.opponent_hand_size / 5
    at = f["counters"].offset
    out[at] = obs.counters[seat] / MATCH_POINTS
    out[at + 1] = obs.counters[opponent] / MATCH_POINTS
    out[f["profile"].offset + (0 if obs.profile is Profile.SOFT else 1)] = 1.0
    if obs.to_act is not None:
        out[f["to_act"].offset + (0 if obs.to_act == seat else 1)] = 1.0
    out[f["leader"].offset] = float(obs.leader == seat)
    out[f["dealer"].offset] = float(obs.dealer == seat)
    return out


def describe(tensor: Sequence[float]) -> dict[str, list[float]]:
    """The tensor split by field name (for reading and debugging)."""
    if len(tensor) != OBSERVATION_SIZE:
        raise ValueError(f"an observation tensor has {OBSERVATION_SIZE} values, "
                         f"not {len(tensor)}")
    return {f.name: list(tensor[f.offset:f.offset + f.size]) for f in LAYOUT}


__all__ = [
    "ACTIONS", "CLAIM_INDEX", "CLOSE_INDEX", "DECLARE_INDEX", "EXCHANGE_INDEX", "FIELDS",
    "HIGH", "LAYOUT", "LOW", "NUM_ACTIONS", "OBSERVATION_SIZE", "Field", "action_index",
    "action_of", "describe", "legal_mask", "mask_of", "must_lead_marriage", "observation_tensor",
    "opponent_points",
]
