"""The summary and clocks of a match row: its counters and result, the turn clock, the time
banks, forfeits.

The time and conduct policy these carry out is in `services.core.actions`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import engine
from db.base import aware
from db.models import FINISHED, HOUSE, PLAYED, RUNNING, Match
from db.settings import Settings
from services.core import metrics

if TYPE_CHECKING:
    from services.core.values import MatchState


def summarize(m: Match, game: engine.Match) -> None:
    m.to_act = game.to_act
    m.hand_number = game.hand_number
    m.counter0, m.counter1 = game.counters
    if game.is_over:
        m.state = FINISHED
        m.winner = game.winner
        m.schneider = game.schneider
        m.end_reason = PLAYED
        loser = 1 - (game.winner or 0)
        # what the loser still needed, not the counters ("7:-1" read like a lead)
        needed = max(game.counters[loser], 0)
        m.end_detail = (
            f"seat {game.winner} ({m.seat_name(game.winner or 0)}) won the match; seat "
            f"{loser} ({m.seat_name(loser)}) lost, still needing {needed} game "
            f"point{'s' * (needed != 1)}"
            + (" (Schneider-Bummerl, R9.1)" if game.schneider else "")
        )


def bank_left(m: Match | MatchState, seat: int) -> int:
    return m.bank1_ms if seat else m.bank0_ms


def start_turn(m: Match, now: datetime, config: Settings) -> None:
    """Start the clock of the seat to act (or stop it when the match is over)."""
    if m.state != RUNNING or m.to_act is None:
        m.turn_started_at = None
        m.deadline_at = None
        return
    m.turn_started_at = now
    if m.bot(m.to_act).kind == HOUSE:
        m.deadline_at = now + timedelta(milliseconds=config.house_move_ms)
    else:
        m.deadline_at = now + timedelta(milliseconds=m.move_ms + bank_left(m, m.to_act))


def think_ms(m: Match, now: datetime) -> int | None:
    """How long the seat to act has had its turn at `now`, in ms (None: no turn clock)."""
    started = aware(m.turn_started_at)
    if started is None:
        return None
    return int((now - started).total_seconds() * 1000)


def charge_time(m: Match, seat: int, used: int | None) -> None:
    """Take the time the seat used (`think_ms`) over `move_ms` from its bank."""
    if used is None or m.bot(seat).kind == HOUSE:
        return
    over = max(0, used - m.move_ms)
    if seat:
        m.bank1_ms = max(0, m.bank1_ms - over)
    else:
        m.bank0_ms = max(0, m.bank0_ms - over)


def forfeit(m: Match, seat: int, reason: str, detail: str, now: datetime) -> None:
    metrics.FORFEITS.labels(reason).inc()
    m.state = FINISHED
    m.winner = 1 - seat
    m.forfeit_seat = seat
    m.end_reason = reason
    m.end_detail = detail
    m.to_act = None
    m.turn_started_at = None
    m.deadline_at = None
    m.finished_at = now
