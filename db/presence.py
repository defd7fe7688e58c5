"""Whether a remote bot is connected, read from its presence heartbeat in `bots` (written by
the engine service's `services.live.presence`; read by the ladder and the dashboard too).

A bot is *connected* when `connected_since` is set and `last_seen_at` is less than
`STALE_BEATS` heartbeats old: a crashed server clears nothing, but stops beating.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from db.base import aware
from db.models import REMOTE, Bot

STALE_BEATS = 3  # heartbeats missed before a bot counts as gone


def is_connected(bot: Bot, heartbeat_s: float, now: datetime | None = None) -> bool:
    """Whether remote `bot` has a Play stream open (as of its last heartbeat)."""
    if bot.kind != REMOTE or bot.connected_since is None or bot.last_seen_at is None:
        return False
    since = (now or datetime.now(UTC)) - timedelta(seconds=STALE_BEATS * heartbeat_s)
    return aware(bot.last_seen_at) >= since
