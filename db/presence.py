"""Whether a remote bot is connected, and what it takes, read from its presence in `bots`
(written by the engine service's `services.live.presence`; read by the ladder, the coming
tournaments and the dashboard too).

A bot is *connected* when `connected_since` is set and `last_seen_at` is less than
`STALE_BEATS` heartbeats old: a crashed server clears nothing, but stops beating.

What a connected bot takes (`bots.accepts`): every match (None or ACCEPTS_ALL), challenges
only (ACCEPTS_CHALLENGES: its kit runs with `--challenges-only`), or no new match
(ACCEPTS_NONE: it is finishing its running ones before it disconnects). A pairing (the ladder,
a tournament) needs `takes_pairings`; a challenge needs `takes_challenges`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from db.base import aware
from db.models import ACCEPTS_ALL, ACCEPTS_CHALLENGES, ACCEPTS_NONE, REMOTE, Bot

STALE_BEATS = 3  # heartbeats missed before a bot counts as gone
PAIRING = "pairing"  # a match the bot did not ask for: the ladder's, a tournament's
CHALLENGE = "challenge"  # a match another bot asked for (BotService.Challenge)


def is_connected(bot: Bot, heartbeat_s: float, now: datetime | None = None) -> bool:
    """Whether remote `bot` has a Play stream open (as of its last heartbeat)."""
    if bot.kind != REMOTE or bot.connected_since is None or bot.last_seen_at is None:
        return False
    since = (now or datetime.now(UTC)) - timedelta(seconds=STALE_BEATS * heartbeat_s)
    return aware(bot.last_seen_at) >= since


def takes(accepts: str | None, kind: str) -> bool:
    """Whether a bot whose streams say `accepts` takes a new match of `kind` (PAIRING or
    CHALLENGE)."""
    if accepts in (None, ACCEPTS_ALL):
        return True
    return kind == CHALLENGE and accepts == ACCEPTS_CHALLENGES


def takes_pairings(bot: Bot, heartbeat_s: float, now: datetime | None = None) -> bool:
    """Whether the ladder (or a tournament) may pair remote `bot` now: connected, and not for
    challenges only nor finishing up."""
    return is_connected(bot, heartbeat_s, now) and takes(bot.accepts, PAIRING)


def takes_challenges(bot: Bot, heartbeat_s: float, now: datetime | None = None) -> bool:
    """Whether remote `bot` may be challenged now: connected, and not finishing up."""
    return is_connected(bot, heartbeat_s, now) and takes(bot.accepts, CHALLENGE)


def refusal(name: str, accepts: str | None, kind: str) -> str:
    """Why a bot named `name` that says `accepts` takes no new match of `kind`."""
    if accepts == ACCEPTS_NONE:
        return (f"bot {name} takes no new matches now: it is finishing its running ones "
                "before it disconnects")
    if accepts == ACCEPTS_CHALLENGES and kind == PAIRING:
        return (f"bot {name} is connected for challenges only (--challenges-only): the "
                "ladder and tournaments do not pair it")
    return f"bot {name} takes no {kind} now"
