"""Database rows → bummerl.v1 messages (public information only)."""

from __future__ import annotations

from bummerl import wire
from bummerl.v1 import bot_pb2, common_pb2, match_pb2

import engine
from db.models import (
    ABORTED,
    ABORTED_BY_OPERATOR,
    FINISHED,
    FORFEIT_ILLEGAL,
    FORFEIT_TIMEOUT,
    HOUSE,
    ORIGIN_TEST,
    ORIGIN_TOURNAMENT,
    PERSON,
    PLAYED,
    RESIGNED,
    RUNNING,
    ActionLog,
    Bot,
    Hand,
    Match,
)
from services.core.values import MatchState

STATES = {RUNNING: match_pb2.MATCH_STATE_RUNNING, FINISHED: match_pb2.MATCH_STATE_FINISHED,
          ABORTED: match_pb2.MATCH_STATE_ABORTED}
STATE_NAMES = {v: k for k, v in STATES.items()}
BOT_KINDS = {HOUSE: bot_pb2.BOT_KIND_HOUSE, PERSON: bot_pb2.BOT_KIND_PERSON}
END_REASONS = {
    PLAYED: match_pb2.END_REASON_PLAYED,
    FORFEIT_TIMEOUT: match_pb2.END_REASON_FORFEIT_TIMEOUT,
    FORFEIT_ILLEGAL: match_pb2.END_REASON_FORFEIT_ILLEGAL,
    ABORTED_BY_OPERATOR: match_pb2.END_REASON_ABORTED,
    RESIGNED: match_pb2.END_REASON_RESIGNED,
}


EVENT_KINDS = {ORIGIN_TOURNAMENT: match_pb2.EVENT_KIND_TOURNAMENT,
               ORIGIN_TEST: match_pb2.EVENT_KIND_TEST}


def fill_event(event: match_pb2.EventRef, m: Match | MatchState) -> bool:
    """Fill `event` with the event, round and pair of `m`; False (left unset) for a match of
    no event."""
    if m.pair_id is None:
        return False
    event.kind = EVENT_KINDS.get(m.origin or "", match_pb2.EVENT_KIND_UNSPECIFIED)
    event.event_id = m.event_id or 0
    event.round = m.event_round or 0
    event.pair_id = m.pair_id
    event.pair_leg = m.pair_leg or 0
    return True


def _seat(value: int | None) -> int:
    return -1 if value is None else value


def bot_to_pb(bot: Bot) -> bot_pb2.Bot:
    return bot_pb2.Bot(
        bot_id=bot.id,
        name=bot.name,
        kind=BOT_KINDS.get(bot.kind, bot_pb2.BOT_KIND_REMOTE),
        house_strategy=bot.house_strategy or "",
        created_at=wire.timestamp(bot.created_at),
    )


def match_to_pb(m: Match) -> match_pb2.Match:
    message = _match_to_pb(m)
    fill_event(message.event, m)
    return message


def _match_to_pb(m: Match) -> match_pb2.Match:
    return match_pb2.Match(
        match_id=m.id,
        bot_ids=[m.bot0_id, m.bot1_id],
        bot_names=[m.bot0.name, m.bot1.name],
        profile=wire.PROFILES[engine.Profile(m.profile)],
        state=STATES[m.state],
        seq=m.seq,
        to_act=_seat(m.to_act) if m.state == RUNNING else -1,
        hand_number=m.hand_number,
        counters=[m.counter0, m.counter1],
        winner=_seat(m.winner),
        schneider=m.schneider,
        end_reason=END_REASONS.get(m.end_reason or "", match_pb2.END_REASON_UNSPECIFIED),
        end_detail=m.end_detail or "",
        forfeit_seat=_seat(m.forfeit_seat),
        time_control=match_pb2.TimeControl(
            move_ms=m.move_ms, bank_ms=m.bank_ms, max_illegal=m.max_illegal),
        bank_left_ms=[m.bank0_ms, m.bank1_ms],
        deadline=wire.timestamp(m.deadline_at),
        # A leg of a duplicate pair never carries it here: its seed is the other leg's, so
        # it would give the decks the other leg plays (leg 1 starts once leg 0 has ended, and
        # its bots are sent this very message); exports give it once the pair is released.
        seed=m.seed if m.state == FINISHED and m.pair_id is None else 0,
        created_at=wire.timestamp(m.created_at),
        finished_at=wire.timestamp(m.finished_at),
        bot_versions=[m.version0 or "", m.version1 or ""],
    )


def logged_action_to_pb(row: ActionLog) -> match_pb2.LoggedAction:
    return match_pb2.LoggedAction(
        seq=row.seq,
        seat=row.seat,
        action=wire.action_to_pb(engine.Action.from_text(row.action)),
        applied_at=wire.timestamp(row.created_at),
        think_ms=row.think_ms,
    )


def hand_result_to_pb(hand: Hand) -> common_pb2.HandResult | None:
    if hand.winner is None:
        return None
    return common_pb2.HandResult(
        winner=hand.winner,
        game_points=hand.game_points or 0,
        reason=hand.reason or "",
        points=[hand.points0 or 0, hand.points1 or 0],
        tricks=[hand.tricks0 or 0, hand.tricks1 or 0],
    )


def hand_summaries(hands: list[Hand], actions: list[ActionLog]) -> list[match_pb2.HandSummary]:
    out = []
    for hand in hands:
        last = hand.last_seq if hand.last_seq is not None else float("inf")
        out.append(match_pb2.HandSummary(
            number=hand.number,
            dealer=hand.dealer,
            result=hand_result_to_pb(hand),
            actions=[logged_action_to_pb(a) for a in actions if hand.first_seq <= a.seq <= last],
        ))
    return out


def counters_after(hands: list[Hand], number: int) -> list[int]:
    """Both match counters after hand `number` (R9.1), from the finished hands."""
    counters = [7, 7]
    for hand in hands:
        if hand.number <= number and hand.winner is not None:
            counters[hand.winner] -= hand.game_points or 0
    return counters


def hand_ended_to_pb(match_id: int, hand: Hand, hands: list[Hand]) -> match_pb2.HandEnded:
    return match_pb2.HandEnded(
        match_id=match_id,
        hand_number=hand.number,
        result=hand_result_to_pb(hand),
        counters=counters_after(hands, hand.number),
    )
