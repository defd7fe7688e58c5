"""Conduct on the ladder: suspending bots that keep forfeiting, and not rating quick illegal
forfeits.

- A remote bot whose last `suspend_after()` ladder matches (default 3,
  `BUMMERL_SUSPEND_AFTER_FORFEITS`; 0 switches it off) all ended with it forfeiting (time-out or
  illegal actions) is suspended, with the reason recorded in `bots.suspended_reason` (the
  dashboard shows it). Only matches that finished after the bot was last reinstated count.
  Suspended bots get no ladder matches (`workers.ladder.eligible_bots`) and their Play streams
  are refused by the service (`services.ops.admin`).
- A match forfeited by illegal actions within `unrated_illegal_s()` seconds of its start
  (default 10, `BUMMERL_UNRATED_ILLEGAL_S`) is not rated: `matches.rated` is set false (a broken
  bot that cannot make a legal move says nothing about its opponent's strength).
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta

from sqlalchemy import or_, select, union, update
from sqlalchemy.orm import Session, sessionmaker

from db.base import aware, utcnow
from db.models import FINISHED, FORFEIT_ILLEGAL, FORFEIT_TIMEOUT, REMOTE, Bot, Match
from db.ratings import LadderMatch

log = logging.getLogger(__name__)

FORFEITS = (FORFEIT_TIMEOUT, FORFEIT_ILLEGAL)
# Bots whose last ladder forfeit is older than this are not looked at again (a streak is
# checked at the tick after its last forfeit; this only bounds the work of each tick).
RECENT = timedelta(days=1)


def suspend_after() -> int:
    return int(os.environ.get("BUMMERL_SUSPEND_AFTER_FORFEITS", "3"))


def unrated_illegal_s() -> float:
    return float(os.environ.get("BUMMERL_UNRATED_ILLEGAL_S", "10"))


def counts_for_rating(m: Match, grace_s: float | None = None) -> bool:
    """Whether finished match `m` may be rated: not marked unrated, and not forfeited by
    illegal actions within the first `grace_s` seconds."""
    if not m.rated:
        return False
    grace_s = unrated_illegal_s() if grace_s is None else grace_s
    if m.end_reason == FORFEIT_ILLEGAL and m.finished_at is not None:
        lasted = aware(m.finished_at) - aware(m.created_at)
        return lasted >= timedelta(seconds=grace_s)
    return True


def mark_unrated(s: Session, m: Match) -> None:
    """Record that `m` is not rated (in the caller's transaction)."""
    s.execute(update(Match).where(Match.id == m.id).values(rated=False),
              execution_options={"synchronize_session": False})


def forfeit_streak(s: Session, bot: Bot, k: int) -> list[Match]:
    """The bot's last `k` finished ladder matches (since its reinstatement), newest first, if
    it forfeited every one of them; else []. A remote bot plays one ladder match at a time
    (`workers.ladder.eligible_bots`), so its ladder matches finish in the order of their ids:
    the newest are a walk down the (bot, id) indexes, however long its history."""
    seats = []
    for column in (Match.bot0_id, Match.bot1_id):
        query = (select(Match.id).join(LadderMatch, LadderMatch.match_id == Match.id)
                 .where(column == bot.id, Match.state == FINISHED))
        if bot.reinstated_at is not None:
            query = query.where(Match.finished_at > bot.reinstated_at)
        seats.append(query.order_by(Match.id.desc()).limit(k).subquery().select())
    newest = union(*seats).subquery()
    last = list(s.scalars(select(Match).where(Match.id.in_(select(newest.c.id)))
                          .order_by(Match.finished_at.desc(), Match.id.desc()).limit(k))
                .unique())
    if len(last) < k:
        return []
    if all(m.end_reason in FORFEITS and m.forfeit_seat == m.seat_of(bot.id) for m in last):
        return last
    return []


def suspend_forfeiters(sessions: sessionmaker[Session], k: int | None = None) -> list[int]:
    """Suspend every unsuspended remote bot with `k` ladder forfeits in a row; their ids."""
    k = suspend_after() if k is None else k
    if k <= 0:
        return []
    suspended = []
    with sessions() as s:
        # Only bots that forfeited a ladder match lately are candidates.
        forfeited = select(Match.id).join(LadderMatch, LadderMatch.match_id == Match.id).where(
            Match.state == FINISHED, Match.end_reason.in_(FORFEITS),
            Match.finished_at > utcnow() - RECENT)
        candidates = list(s.scalars(select(Bot).where(
            Bot.kind == REMOTE, Bot.suspended_at.is_(None),
            or_(Bot.id.in_(select(Match.bot0_id).where(Match.id.in_(forfeited),
                                                       Match.forfeit_seat == 0)),
                Bot.id.in_(select(Match.bot1_id).where(Match.id.in_(forfeited),
                                                       Match.forfeit_seat == 1))))))
        for bot in candidates:
            streak = forfeit_streak(s, bot, k)
            if not streak:
                continue
            reasons = ", ".join(f"match {m.id} ({m.end_reason})" for m in reversed(streak))
            done = s.execute(update(Bot).where(Bot.id == bot.id, Bot.suspended_at.is_(None))
                             .values(suspended_at=utcnow(), suspended_reason=(
                                 f"automatic: forfeited {k} ladder matches in a row "
                                 f"(policy: BUMMERL_SUSPEND_AFTER_FORFEITS={k}): {reasons}")),
                             execution_options={"synchronize_session": False})
            s.commit()
            if getattr(done, "rowcount", 0):
                log.warning("suspended bot %d (%s): %d ladder forfeits in a row", bot.id,
                            bot.name, k)
                suspended.append(bot.id)
    return suspended
