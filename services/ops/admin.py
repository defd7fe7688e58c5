"""Operator controls (plain functions over the database): list bots, suspend and reinstate a
bot, rotate a bot's token, abort a match. The gRPC AdminService (`services.api.admin_servicer`)
calls these after checking the operator token.

- A suspended bot (`bots.suspended_at` set, `suspended_reason` says why) gets no ladder
  matches (`workers.ladder` skips it) and its Play streams are refused with
  FAILED_PRECONDITION; an open one is ended within a heartbeat (`services.live.revocation`). Its
  running matches are left alone: they end as usual (or an operator aborts them).
- Rotating a token stores the hash of a new one: the old token fails every new call at once,
  and open Play streams opened with it are ended (PERMISSION_DENIED) within a heartbeat.
- Aborting a match: state 'aborted', end reason 'aborted', no winner, `rated` false; its
  streams are told it ended.
- Asking for a finished match's analysis: a request row (`db.analyses`), then, after the
  commit, the `on_analysis_requested` hooks (the workers enqueue `bummerl.analyse`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from db.base import utcnow
from db.models import REMOTE, RUNNING, Bot, Match
from db.settings import Settings, settings, sha256
from services.core import actions
from services.core.connections import factory_of, writing
from services.core.errors import FailedPrecondition, InvalidArgument, NotFound
from services.live import revocation
from services.live.presence import is_connected

MAX_REASON = 500


@dataclass(frozen=True)
class BotStatus:
    """A bot as the operator sees it."""

    bot: Bot
    connected: bool
    running_matches: int

    @property
    def suspended(self) -> bool:
        return self.bot.suspended_at is not None


def _reason(reason: str, what: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise InvalidArgument(f"{what} needs a reason (for the bot's author and the dashboard)")
    if len(reason) > MAX_REASON:
        raise InvalidArgument(f"the reason is {len(reason)} characters; at most {MAX_REASON}")
    return reason


def _status(session: Session, bot: Bot, config: Settings) -> BotStatus:
    running = session.scalar(select(func.count(Match.id)).where(
        Match.state == RUNNING, or_(Match.bot0_id == bot.id, Match.bot1_id == bot.id))) or 0
    return BotStatus(bot, is_connected(bot, config.heartbeat_s), running)


def _bot(session: Session, bot_id: int) -> Bot:
    bot = session.get(Bot, bot_id)
    if bot is None:
        raise NotFound(f"no bot with id {bot_id}")
    return bot


def list_bots(*, suspended_only: bool = False, sessions: sessionmaker[Session] | None = None,
              config: Settings | None = None) -> list[BotStatus]:
    """Every bot (or only the suspended ones) by id, with presence and running matches."""
    config = config or settings()
    query = select(Bot).order_by(Bot.id)
    if suspended_only:
        query = query.where(Bot.suspended_at.is_not(None))
    with factory_of(sessions)() as session:
        running: dict[int, int] = {}
        for bot0, bot1 in session.execute(
                select(Match.bot0_id, Match.bot1_id).where(Match.state == RUNNING)):
            running[bot0] = running.get(bot0, 0) + 1
            running[bot1] = running.get(bot1, 0) + 1
        moment = utcnow()
        return [BotStatus(bot, is_connected(bot, config.heartbeat_s, moment),
                          running.get(bot.id, 0))
                for bot in session.scalars(query)]


def suspend_bot(bot_id: int, reason: str, *, sessions: sessionmaker[Session] | None = None,
                config: Settings | None = None, now: datetime | None = None) -> BotStatus:
    """Suspend `bot_id` with `reason` (a new reason replaces the old one)."""
    reason = _reason(reason, "suspending a bot")
    with factory_of(sessions)() as session, writing(session), session.begin():
        bot = _bot(session, bot_id)
        bot.suspended_at = bot.suspended_at or now or utcnow()
        bot.suspended_reason = reason
        session.flush()
        status = _status(session, bot, config or settings())
    revocation.check_now()
    return status


def reinstate_bot(bot_id: int, *, sessions: sessionmaker[Session] | None = None,
                  config: Settings | None = None) -> BotStatus:
    """Lift the suspension of `bot_id` (FailedPrecondition if it is not suspended)."""
    with factory_of(sessions)() as session, writing(session), session.begin():
        bot = _bot(session, bot_id)
        if bot.suspended_at is None:
            raise FailedPrecondition(f"bot {bot_id} ({bot.name}) is not suspended")
        bot.suspended_at = None
        bot.suspended_reason = None
        bot.reinstated_at = utcnow()
        session.flush()
        return _status(session, bot, config or settings())


def rotate_token(bot_id: int, *, sessions: sessionmaker[Session] | None = None,
                 config: Settings | None = None) -> tuple[BotStatus, str]:
    """A new token for remote bot `bot_id` (returned once); the old one stops working."""
    token = secrets.token_urlsafe(32)
    with factory_of(sessions)() as session, writing(session), session.begin():
        bot = _bot(session, bot_id)
        if bot.kind != REMOTE:
            raise FailedPrecondition(
                f"bot {bot_id} ({bot.name}) is a {bot.kind} bot: only remote bots have tokens")
        bot.token_hash = sha256(token)
        session.flush()
        status = _status(session, bot, config or settings())
    revocation.check_now()
    return status, token


def abort_match(match_id: int, reason: str, *, sessions: sessionmaker[Session] | None = None
                ) -> Match:
    """Abort running match `match_id` (`services.core.actions.abort_match`) for `reason`:
    state 'aborted', no winner, not rated; its bots' streams and watchers are told.
    FailedPrecondition if it is not running."""
    reason = _reason(reason, "aborting a match")
    return actions.abort_match(match_id, reason, sessions=sessions)


def request_analysis(match_id: int, *, sessions: sessionmaker[Session] | None = None) -> str:
    """Ask for finished match `match_id`'s analysis; its state after (`requested`, `done`,
    `failed`). NotFound for no such match, FailedPrecondition for one not finished."""
    from db import analyses
    from services.core import dispatch

    with factory_of(sessions)() as session, writing(session), session.begin():
        match = session.get(Match, match_id)
        if match is None:
            raise NotFound(f"no match with id {match_id}")
        try:
            state = analyses.request(session, match_id)
        except ValueError as e:
            raise FailedPrecondition(str(e)) from None
    if state == analyses.REQUESTED:
        dispatch.on_analysis_requested(match_id)
    return state


def check_may_play(bot: Bot) -> None:
    """Refuse a suspended bot's Play stream (FailedPrecondition naming the reason)."""
    if bot.suspended_at is not None:
        raise FailedPrecondition(suspended_message(bot))


def suspended_message(bot: Bot) -> str:
    return (f"bot {bot.id} ({bot.name}) is suspended: {bot.suspended_reason or 'no reason given'}"
            "; ask the operator to reinstate it")
