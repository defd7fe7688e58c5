"""The summary and clocks of a match: its counters and result, the turn clock, the time banks,
forfeits, and announcing a committed change (streams and hooks).

The time and conduct policy these carry out is in `services.actions`.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import engine
from db.base import aware
from db.models import FINISHED, HOUSE, PLAYED, RUNNING, Match
from services import dispatch, hooks, metrics, notify
from services.config import Settings

if TYPE_CHECKING:
    from services.matches import MatchState

log = logging.getLogger(__name__)


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
        m.end_detail = (
            f"seat {game.winner} ({m.bot(game.winner or 0).name}) won the match "
            f"{game.counters[0]}:{game.counters[1]}"
            + (" (Schneider-Bummerl, R9.1)" if game.schneider else "")
            + f"; seat {loser} lost"
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


def charge_time(m: Match, seat: int, now: datetime) -> None:
    """Take the time the seat used over `move_ms` from its bank."""
    started = aware(m.turn_started_at)
    if started is None or m.bot(seat).kind == HOUSE:
        return
    used = int((now - started).total_seconds() * 1000)
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


def house_turn(site: str, m: Match) -> hooks.HouseTurn:
    """The house bot's turn in `m` (committed, house seat to act) with the seat's observation
    of the cached game, if this process holds it at `m.seq` and nobody is changing it now: the
    worker then needs no GetObservation round trip. Only the observation is built here, on the
    committing thread (a named tuple); its encoding waits for the dispatcher's thread."""
    from services.games import bind_key, observe_cached

    seat = m.to_act
    assert seat is not None
    obs = None
    try:
        for bind in notify.binds_of(site):
            obs = observe_cached(bind_key(bind, m.id), m.seq, seat)
            if obs is not None:
                break
    except Exception:  # noqa: BLE001  (never fail the committed change: the worker asks)
        log.exception("the observation of house turn %s/%s was not at hand", m.id, m.seq)
    return hooks.HouseTurn(m.bot(seat).house_strategy or "", m.seq, obs, aware(m.deadline_at))


def after_commit(site: str, m: Match, everyone: bool = True,
                 action: tuple[int, str] | None = None) -> None:
    """Announce a committed change of `m` on database `site`: push it to the streams of the
    match and of its bots (only the bot to act unless `everyone`), here and on the change bus,
    and hand the hooks to the dispatcher (never run on this thread). `action` (seat, action)
    is the action appended at `m.seq - 1`, if the change is one (other processes apply it to
    their cached game)."""
    announce(site, m, everyone, action)
    hand_over(site, m)


def announce(site: str, m: Match, everyone: bool = True,
             action: tuple[int, str] | None = None) -> None:
    """`after_commit`'s first half: push the change to the streams, here and on the bus."""
    from services.matches import MatchState

    notify.publish(notify.Change(site, MatchState.of(m), everyone, action))


def hand_over(site: str, m: Match) -> None:
    """`after_commit`'s second half: hand the hooks to the dispatcher (a house bot's turn, a
    match's end) and count a match's end."""
    if m.state == RUNNING and m.to_act is not None and m.bot(m.to_act).kind == HOUSE:
        dispatch.on_turn(m.id, m.to_act, m.seq, house_turn(site, m))
    if m.state != RUNNING:
        metrics.match_ended(m.end_reason)
    if m.state == FINISHED:
        dispatch.on_match_end(m.id)
