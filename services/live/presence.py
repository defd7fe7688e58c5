"""Which remote bots are connected: a heartbeat in the database (`bots.connected_since`,
`bots.last_seen_at`), so other processes (the ladder on the workers, the dashboard) can tell.

- When a bot's first Play stream in this server opens, `connected_since` is set (kept if the bot
  is still connected elsewhere) and `last_seen_at` is now.
- While at least one of its streams is open, one thread per server refreshes `last_seen_at`
  every `heartbeat_s` seconds, for all such bots in one UPDATE: the cost is per server per
  heartbeat, nothing per action.
- When its last stream here closes, `connected_since` is cleared (a clean disconnect).
- A bot is *connected* when `connected_since` is set and `last_seen_at` is less than
  `STALE_BEATS` heartbeats old. A crashed server clears nothing, but stops beating, so its bots
  drop out by themselves. (A bot with streams on two servers that closes one of them looks
  disconnected until the other server's next heartbeat sets `connected_since` again.)
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

from sqlalchemy import case, func, update
from sqlalchemy.orm import Session, sessionmaker

from db.models import Bot
from db.presence import STALE_BEATS, is_connected  # noqa: F401  (read side, shared)
from services.core.connections import factory_of, writing
from services.core.failures import log_failure

log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)

class Presence:
    """The open Play streams of one server, per bot, and their heartbeat in the database."""

    def __init__(self, sessions: sessionmaker[Session] | None, heartbeat_s: float) -> None:
        self.sessions = sessions
        self.heartbeat_s = heartbeat_s
        self._open: Counter[int] = Counter()
        self._lock = threading.Lock()  # the counts and the writes (so they apply in order)
        self._thread: threading.Thread | None = None

    def opened(self, bot_id: int) -> None:
        with self._lock:
            self._open[bot_id] += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="presence-heartbeat")
                self._thread.start()
            if self._open[bot_id] == 1:
                now = _now()
                stale = now - timedelta(seconds=STALE_BEATS * self.heartbeat_s)
                self._write(update(Bot).where(Bot.id == bot_id).values(
                    connected_since=case(
                        (Bot.connected_since.is_(None) | Bot.last_seen_at.is_(None)
                         | (Bot.last_seen_at < stale), now),
                        else_=Bot.connected_since),
                    last_seen_at=now))

    def closed(self, bot_id: int) -> None:
        with self._lock:
            self._open[bot_id] -= 1
            if self._open[bot_id] > 0:
                return
            del self._open[bot_id]
            self._write(update(Bot).where(Bot.id == bot_id)
                        .values(connected_since=None, last_seen_at=_now()))

    def stop(self) -> None:
        """The server stopped: forget its streams (no more heartbeats from here)."""
        with self._lock:
            self._open.clear()

    def beat(self) -> None:
        """Refresh the heartbeat of every bot with a stream open here (the thread's step)."""
        with self._lock:
            if self._open:
                now = _now()
                self._write(update(Bot).where(Bot.id.in_(sorted(self._open))).values(
                    last_seen_at=now, connected_since=func.coalesce(Bot.connected_since, now)))

    def _run(self) -> None:
        stop = threading.Event()  # never set: only a timed wait
        while True:
            stop.wait(self.heartbeat_s)
            with self._lock:
                if not self._open:
                    self._thread = None
                    return
            self.beat()

    def _write(self, statement) -> None:  # type: ignore[no-untyped-def]
        """One UPDATE in its own transaction; a failure is logged (the next beat repairs it)."""
        try:
            with factory_of(self.sessions)() as s, writing(s), s.begin():
                s.execute(statement, execution_options={"synchronize_session": False})
        except Exception as e:  # noqa: BLE001  (presence must never break a stream)
            log_failure("bot presence update (the next heartbeat retries)", e)
