"""Who the ladder may pair now, and, when it can pair nobody, why and when it can again.

Read from the database alone, so the ladder's tick (`workers.ladder`), the dashboard's
standings and the terminal of `bummerl up` all say the same:

- *free* bots: every house bot (the workers play as many of its matches as asked), and each
  remote bot that is connected and takes pairings (`db.presence.takes_pairings`), has no ladder
  match running in the profile and plays for no event now; never a suspended bot.
- *idle*: the profile is under its target (`BUMMERL_LADDER_MATCHES`) but no two free bots can
  meet: fewer than two are free, or those free already play each other. The day's pair cap
  never makes it idle (it bites only when a bot has another opponent: `workers.ladder_pairing`).
  `reason` says which, naming the bots; `next_match` when the next match can come: when a
  running ladder match ends (the earliest of their deadlines is the latest a turn can take), or
  when another bot connects.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import combinations

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.orm import Session

from db.base import aware
from db.models import HOUSE, REMOTE, RUNNING, Bot, Match
from db.pairs import bots_in_play
from db.presence import STALE_BEATS, is_connected, takes_pairings
from db.standings import running_ladder, running_ladder_counts

DEFAULT_TARGET = 2


def target_matches() -> int:
    """Ladder matches kept going per profile (`BUMMERL_LADDER_MATCHES`, default 2)."""
    return int(os.environ.get("BUMMERL_LADDER_MATCHES", str(DEFAULT_TARGET)))


def in_events(s: Session) -> set[int]:
    """The bots playing for an event now: in a running match of a tournament or a version
    test (`matches.event_id` set), or in a duplicate pair being started (`db.pairs`)."""
    running = s.execute(select(Match.bot0_id, Match.bot1_id)
                        .where(Match.state == RUNNING, Match.event_id.is_not(None)))
    return {i for row in running for i in row} | bots_in_play(s)


def free_bots(s: Session, profile: str, heartbeat_s: float,
              moment: datetime | None = None) -> list[Bot]:
    """House bots, and connected remote bots that take pairings, with no ladder match
    running in `profile` and no event match running (a tournament's or a version test's);
    never a suspended bot. By id."""
    moment = moment or datetime.now(UTC)
    busy = running_ladder_counts(s, profile)
    playing_events = in_events(s)

    def available(bot: Bot) -> bool:
        return busy.get(bot.id, 0) == 0 and bot.id not in playing_events and \
            takes_pairings(bot, heartbeat_s, moment)

    return [bot for bot in s.scalars(select(Bot).where(Bot.suspended_at.is_(None),
                                                       or_(Bot.kind == HOUSE, _beating(
                                                           heartbeat_s, moment)))
                                     .order_by(Bot.id))
            if bot.kind == HOUSE or available(bot)]


def _beating(heartbeat_s: float, moment: datetime) -> ColumnElement[bool]:
    """The rows `db.presence.is_connected` can say yes to (read by the index of the table,
    not bot by bot: a site of thousands of offline bots)."""
    since = moment - timedelta(seconds=STALE_BEATS * heartbeat_s)
    return and_(Bot.kind == REMOTE, Bot.connected_since.is_not(None),
                Bot.last_seen_at >= since)


@dataclass(frozen=True)
class LadderState:
    """What the ladder of one profile is doing (see the module's docstring)."""

    profile: str
    running: int  # ladder matches running now
    target: int  # BUMMERL_LADDER_MATCHES
    free: tuple[str, ...]  # names of the bots free for a ladder match
    idle: bool  # under the target, and no pairing possible
    reason: str  # one line: what it does, or why it is idle
    next_match: str | None  # when it is idle: when the next match can come


def _names(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _house_note(free: list[Bot]) -> str:
    """Why a bot already in a ladder match is counted among those the ladder pairs: house
    bots are never busy (the workers play as many of their matches as asked)."""
    if any(bot.kind == HOUSE for bot in free):
        return " (a house bot may play several matches at once)"
    return ""


def ladder_state(s: Session, profile: str, heartbeat_s: float, target: int | None = None,
                 moment: datetime | None = None) -> LadderState:
    """The ladder of `profile` now (`target`: `target_matches()` unless given)."""
    moment = moment or datetime.now(UTC)
    target = target_matches() if target is None else target
    running = running_ladder(s, profile)
    free = free_bots(s, profile, heartbeat_s, moment)
    names = tuple(bot.name for bot in free)
    if target <= 0:
        return LadderState(profile, len(running), target, names, False,
                           "off: BUMMERL_LADDER_MATCHES is 0", None)
    if len(running) >= target:
        return LadderState(profile, len(running), target, names, False,
                           f"{len(running)} of {target} matches running", None)
    playing = {frozenset((m.bot0_id, m.bot1_id)) for m in running}
    if any(frozenset((a.id, b.id)) not in playing for a, b in combinations(free, 2)):
        return LadderState(profile, len(running), target, names, False,
                           f"{len(running)} of {target} matches running; pairing among "
                           f"{len(free)} bots{_house_note(free)}", None)
    if len(free) < 2:
        remote = s.scalar(select(func.count()).select_from(Bot).where(
            Bot.suspended_at.is_(None), Bot.kind == REMOTE)) or 0
        connected = [b for b in s.scalars(select(Bot).where(
            Bot.suspended_at.is_(None), _beating(heartbeat_s, moment)).order_by(Bot.id))
            if is_connected(b, heartbeat_s, moment)]
        other = [b.name for b in connected if b.name not in names
                 and not takes_pairings(b, heartbeat_s, moment)]
        busy = running_ladder_counts(s, profile)
        events = in_events(s)
        parts = [f"{len(connected)} of {remote} remote bots connected"]
        laddered = [b.name for b in connected if busy.get(b.id) and b.name not in other]
        if laddered:
            parts.append(f"{_names(laddered)} in a ladder match")
        in_event = [b.name for b in connected if b.id in events and not busy.get(b.id)
                    and b.name not in other]
        if in_event:
            parts.append(f"{_names(in_event)} playing for an event")
        if other:
            parts.append(f"{_names(other)} for challenges only or finishing up")
        why = (f"only {_names(list(names))} is free for a ladder match" if names
               else "no bot is free for a ladder match")
        why += f" ({'; '.join(parts)})"
    else:
        why = f"the free bots ({_names(list(names))}) already play each other"
    if running:
        deadlines = [aware(m.deadline_at) for m in running if m.deadline_at is not None]
        soonest = min(deadlines) if deadlines else None
        when = f"when one of the {len(running)} running ladder matches ends" + (
            f" (the next turn's deadline: {soonest:%H:%M:%S} UTC)" if soonest else "")
        if len(free) < 2:
            when += ", or when another bot connects"
    else:
        when = "when another bot connects (bummerl bot run) or is reinstated"
    return LadderState(profile, len(running), target, names, True, f"idle: {why}", when)
