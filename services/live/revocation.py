"""Ending open Play streams whose bot was suspended or whose token was rotated.

A Play stream is authenticated when it opens. Each open stream is watched here: one thread per
process reads, every `interval` seconds (the presence heartbeat), the token hash and suspension
of every bot with a watched stream in one SELECT per database, and ends the streams whose bot
is suspended now, or whose token is no longer the one they opened with. `check_now()` runs that
check at once (the admin functions call it, so in the replica that made the change it takes
effect immediately; other replicas follow within `interval`).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from db.models import Bot
from services.core import failures, metrics
from services.core.connections import factory_of
from services.core.errors import FailedPrecondition, PermissionDenied, ServiceError

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Watch:
    """One open Play stream of a bot; `revoked` is set (and `on_end` called) when it must end."""

    bot_id: int
    bot_name: str
    token_hash: str | None
    sessions: sessionmaker[Session] | None
    on_end: Callable[[], None]
    revoked: ServiceError | None = field(default=None)

    def cancel(self) -> None:
        with _lock:
            if self in _watches:
                _discard(self)
                _count()


def _discard(w: Watch) -> None:
    """Stop watching `w` (under `_lock`)."""
    _watches.discard(w)
    _bots[w.bot_id] -= 1
    if _bots[w.bot_id] <= 0:
        del _bots[w.bot_id]


def _count() -> None:
    """Update the stream gauges (under `_lock`; kept as counts: a burst of connects must not
    walk every open stream once per connect)."""
    metrics.PLAY_STREAMS.set(len(_watches))
    metrics.CONNECTED_BOTS.set(len(_bots))


_watches: set[Watch] = set()
_bots: Counter[int] = Counter()  # bot id -> its watched streams
_lock = threading.Lock()
_wake = threading.Event()
_thread: threading.Thread | None = None
_interval = 5.0


def watch(bot: Bot, sessions: sessionmaker[Session] | None, on_end: Callable[[], None],
          interval: float = 5.0) -> Watch:
    """Watch an open Play stream of `bot` (call `Watch.cancel()` when it ends)."""
    global _thread, _interval
    w = Watch(bot.id, bot.name, bot.token_hash, sessions, on_end)
    with _lock:
        _watches.add(w)
        _bots[w.bot_id] += 1
        _count()
        _interval = min(_interval, interval)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, daemon=True, name="bummerl-stream-guard")
            _thread.start()
    return w


def forget(sessions: sessionmaker[Session] | None) -> None:
    """Stop watching the streams of the server on `sessions` (it stopped)."""
    with _lock:
        for w in [w for w in _watches if w.sessions is sessions]:
            _discard(w)
        _count()


def check_now() -> None:
    """Check every watched stream now (after a suspension or a token rotation)."""
    check()


def _run() -> None:
    while True:
        _wake.wait(_interval)
        _wake.clear()
        try:
            check()
        except Exception as e:  # noqa: BLE001  (keep watching; the next round retries)
            # an outage is a rate-limited line without a traceback; a bug
            # gets its traceback (services.api.status)
            failures.log_failure("checking open Play streams (retried next round)", e)


def check() -> int:
    """End the watched streams that must end; returns how many were ended."""
    with _lock:
        by_db: dict[int, list[Watch]] = {}
        factories: dict[int, sessionmaker[Session] | None] = {}
        for w in _watches:
            by_db.setdefault(id(w.sessions), []).append(w)
            factories[id(w.sessions)] = w.sessions
    ended = 0
    for key, group in by_db.items():
        ids = sorted({w.bot_id for w in group})
        with factory_of(factories[key])() as session:
            rows = {row.id: row for row in session.execute(
                select(Bot.id, Bot.token_hash, Bot.suspended_at, Bot.suspended_reason)
                .where(Bot.id.in_(ids)))}
        for w in group:
            row = rows.get(w.bot_id)
            if row is None or w.revoked is not None:
                continue
            if row.suspended_at is not None:
                w.revoked = FailedPrecondition(
                    f"bot {w.bot_id} ({w.bot_name}) is suspended: "
                    f"{row.suspended_reason or 'no reason given'}; ask the operator to "
                    "reinstate it")
            elif row.token_hash != w.token_hash:
                w.revoked = PermissionDenied(
                    f"the token of bot {w.bot_id} ({w.bot_name}) was replaced by an operator: "
                    "connect again with the new token")
            else:
                continue
            log.info("ending a Play stream of bot %d: %s", w.bot_id, w.revoked.message)
            w.cancel()
            w.on_end()
            ended += 1
    return ended
