"""Conversions between the engine's values and the bummerl.v1 protobuf messages.

Used by the service (engine → wire) and by the client kit (wire → engine), so both sides agree.
It lives beside the contracts (`from bummerl import wire`), below both of them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from bummerl.v1 import common_pb2 as pb
from bummerl.v1 import match_pb2
from google.protobuf.timestamp_pb2 import Timestamp

import engine

KINDS = {
    engine.ActionKind.PLAY: pb.ACTION_KIND_PLAY,
    engine.ActionKind.EXCHANGE: pb.ACTION_KIND_EXCHANGE,
    engine.ActionKind.CLOSE: pb.ACTION_KIND_CLOSE,
    engine.ActionKind.DECLARE: pb.ACTION_KIND_DECLARE,
    engine.ActionKind.CLAIM: pb.ACTION_KIND_CLAIM,
}
KIND_NAMES = {v: k for k, v in KINDS.items()}
PROFILES = {engine.Profile.SOFT: pb.PROFILE_SOFT, engine.Profile.SHARP: pb.PROFILE_SHARP}
PROFILE_NAMES = {v: k for k, v in PROFILES.items()}


def action_to_pb(action: engine.Action) -> pb.Action:
    return pb.Action(
        kind=KINDS[action.kind],
        card="" if action.card is None else str(action.card),
        suit="" if action.suit is None else action.suit.value,
    )


def action_from_pb(message: pb.Action) -> engine.Action:
    """The engine action; raises ValueError naming what is wrong."""
    kind = KIND_NAMES.get(message.kind)
    if kind is None:
        raise ValueError("action.kind is not set: use ACTION_KIND_PLAY, _EXCHANGE, _CLOSE, ...")
    data: dict[str, str] = {"do": kind.value}
    if message.card:
        data["card"] = message.card
    if message.suit:
        data["suit"] = message.suit
    return engine.Action.from_dict(data)


def _seat(value: int | None) -> int:
    return -1 if value is None else value


def observation_to_pb(obs: engine.Observation) -> pb.Observation:
    return fill_observation(pb.Observation(), obs)


def _trick_pb(t: engine.Trick) -> pb.Trick:
    return pb.Trick(leader=t.leader, lead=str(t.lead), follow=str(t.follow), winner=t.winner)


def _marriage_pb(m: engine.Marriage) -> pb.Marriage:
    return pb.Marriage(seat=m.seat, suit=m.suit.value, trick=m.trick)


def _exchange_pb(e: engine.Exchange) -> pb.Exchange:
    return pb.Exchange(seat=e.seat, taken=str(e.taken))


# The repeated fields of an observation are written as their encodings: an item of a repeated
# field is encoded on its own (its tag, and for a message its length and fields), and a
# message's encoding may hold a field's items in any number of pieces, which parsing appends in
# order. So each distinct item (a card in the hand, a legal action, a trick, a marriage, an
# exchange: a few hundred values in all) is encoded once, and an observation takes the
# concatenation of its items in one `MergeFromString`: `extend` with messages copied each one
# field by field, and took 60 % of a turn's observation.
V = TypeVar("V")


def _items(field: str, build: Callable[[V], Any]) -> Callable[[V], bytes]:
    """The encoding of one item of the repeated field `field` of an Observation, by value,
    made once per distinct value."""
    encoded: dict[V, bytes] = {}

    def item(value: V) -> bytes:
        data = encoded.get(value)
        if data is None:
            message = pb.Observation()
            getattr(message, field).extend([build(value)])
            data = encoded[value] = message.SerializeToString()
        return data

    return item


_hand_card = _items("hand", str)
_legal_action = _items("legal_actions", action_to_pb)
_trick = _items("tricks", _trick_pb)
_marriage = _items("marriages", _marriage_pb)
_exchange = _items("exchanges", _exchange_pb)


def fill_observation(target: pb.Observation, obs: engine.Observation) -> pb.Observation:
    """Write `obs` into the empty message `target` (e.g. a Turn's own observation: no copy of
    a whole observation) and return it."""
    target.seat = obs.seat
    target.profile = PROFILES[obs.profile]
    target.hand_number = obs.hand_number
    target.dealer = obs.dealer
    target.to_act = _seat(obs.to_act)
    target.trump_suit = obs.trump_suit.value
    target.trump_card = str(obs.trump_card)
    target.trump_card_face_up = obs.trump_card_face_up
    target.stock_size = obs.stock_size
    target.closed_by = _seat(obs.closed_by)
    target.leader = obs.leader
    if obs.lead_card is not None:
        target.lead_card = str(obs.lead_card)
    target.points = obs.points
    target.pending_points = obs.pending_points
    target.tricks_won = obs.tricks_won
    target.opponent_tricks_won = obs.opponent_tricks_won
    target.counters.extend(obs.counters)
    target.opponent_hand_size = obs.opponent_hand_size
    target.closed_after = _seat(obs.closed_after)
    target.MergeFromString(b"".join([
        *map(_hand_card, obs.hand), *map(_trick, obs.tricks), *map(_marriage, obs.marriages),
        *map(_exchange, obs.exchanges), *map(_legal_action, obs.legal_actions)]))
    return target


def _none(value: int) -> int | None:
    return None if value < 0 else value


def observation_from_pb(message: pb.Observation) -> engine.Observation:
    d: dict[str, Any] = {
        "seat": message.seat,
        "profile": PROFILE_NAMES.get(message.profile, engine.Profile.SOFT).value,
        "hand_number": message.hand_number,
        "dealer": message.dealer,
        "to_act": _none(message.to_act),
        "hand": list(message.hand),
        "opponent_hand_size": message.opponent_hand_size,
        "trump_suit": message.trump_suit,
        "trump_card": message.trump_card,
        "trump_card_face_up": message.trump_card_face_up,
        "stock_size": message.stock_size,
        "closed_by": _none(message.closed_by),
        "closed_after": _none(message.closed_after),
        "leader": message.leader,
        "lead_card": message.lead_card or None,
        "tricks": [{"leader": t.leader, "lead": t.lead, "follow": t.follow, "winner": t.winner}
                   for t in message.tricks],
        "marriages": [{"seat": m.seat, "suit": m.suit, "trick": m.trick}
                      for m in message.marriages],
        "exchanges": [{"seat": e.seat, "taken": e.taken} for e in message.exchanges],
        "points": message.points,
        "pending_points": message.pending_points,
        "tricks_won": message.tricks_won,
        "opponent_tricks_won": message.opponent_tricks_won,
        "counters": list(message.counters),
        "legal_actions": [str(action_from_pb(a)) for a in message.legal_actions],
    }
    return engine.Observation.from_dict(d)


def hand_result_to_pb(result: engine.HandResult) -> pb.HandResult:
    return pb.HandResult(
        winner=result.winner,
        game_points=result.game_points,
        reason=result.reason.value,
        points=list(result.points),
        tricks=list(result.tricks),
    )


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # what protobuf timestamps count from


def timestamp(moment: datetime | None) -> Timestamp | None:
    """`moment` as a protobuf Timestamp (a naive datetime is taken as UTC); None for None."""
    if moment is None:
        return None
    return fill_timestamp(Timestamp(), moment)


def moment(message: Timestamp) -> datetime:
    """A protobuf Timestamp as an aware UTC datetime."""
    return message.ToDatetime(tzinfo=UTC)


def fill_timestamp(target: Timestamp, moment: datetime) -> Timestamp:
    """Write `moment` into `target` (e.g. a Turn's own deadline: no copy) and return it."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    since = moment - EPOCH  # (Timestamp.FromDatetime does the same, slower)
    target.seconds = since.days * 86400 + since.seconds
    target.nanos = since.microseconds * 1000
    return target


def observation_response(obs: engine.Observation, seq: int,
                         deadline: datetime | None) -> match_pb2.GetObservationResponse:
    """What GetObservation answers: the seat's observation at `seq` and, if the seat is to act,
    its deadline (None otherwise). House turns' task messages carry the same message."""
    return match_pb2.GetObservationResponse(observation=observation_to_pb(obs), seq=seq,
                                            deadline=timestamp(deadline))
