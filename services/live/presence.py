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
- What the bot takes (`bots.accepts`, `db.presence`): each stream says it (every match;
  challenges only, from its Hello; none, after its Drain) and the bot takes what its widest
  stream here takes. It is written with the stream's open, on each change, with every
  heartbeat, and cleared with the last stream. (With streams on two servers, the value last
  written wins until the next heartbeat: run one kit per bot.)
- Which version the bot runs (`bots.version`, from the Hello): written with the stream's open,
  with a later Hello that says another, and when a stream closes while others stay: the
  version of the newest stream among those taking the widest kind of match (`widest`: a
  stream for challenges only does not replace the version of one that takes the ladder), so a
  new match is made for a version whose stream takes it (`services.core.values.seat_for`
  gives it only to that version's streams); it stays when the bot disconnects (the dashboard
  shows it; a new match reads it, `services.core.matches`). A write that failed (the
  database was down) is written again by the next heartbeat; matches created meanwhile
  record the version the row still held.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from itertools import count

from sqlalchemy import case, func, update
from sqlalchemy.orm import Session, sessionmaker

from db.models import ACCEPTS_ALL, ACCEPTS_CHALLENGES, ACCEPTS_NONE, Bot
from db.presence import STALE_BEATS, is_connected  # noqa: F401  (read side, shared)
from db.versiontests import stream_closed, stream_opened, versions_beat
from services.core.connections import factory_of, writing
from services.core.failures import log_failure

log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


WIDEST = (ACCEPTS_ALL, ACCEPTS_CHALLENGES, ACCEPTS_NONE)  # widest first


def widest(modes: Iterable[str]) -> str:
    """What a bot takes whose open streams take `modes` (every match if none is known)."""
    found = set(modes)
    return next((mode for mode in WIDEST if mode in found), ACCEPTS_ALL)


def _version(version: str | None) -> dict[str, str | None]:
    """The `bots.version` part of an UPDATE: none for None, NULL for "" (no version said)."""
    return {} if version is None else {"version": version or None}


def _each(write: Callable[[Session, int, str], None], streams: list[tuple[int, str]]
          ) -> Callable[[Session], None]:
    """`write` of each (bot id, version) of `streams`, as one write (one transaction)."""
    def each(s: Session) -> None:
        for bot_id, version in streams:
            write(s, bot_id, version)
    return each


# A stream that opened: its bot's id, what it takes, its key and the version its Hello said
# (None: none yet, the bot's version left as it is).
Opening = tuple[int, str, int, str | None]


class Presence:
    """The open Play streams of one server, per bot, and their heartbeat in the database."""

    def __init__(self, sessions: sessionmaker[Session] | None, heartbeat_s: float) -> None:
        self.sessions = sessions
        self.heartbeat_s = heartbeat_s
        self._open: Counter[int] = Counter()
        self._modes: dict[int, dict[int, str]] = {}  # bot id -> {stream key: what it takes}
        self._keys = count(1)
        self._gone: set[int] = set()  # keys closed before their open was recorded
        self._versions: dict[int, str] = {}  # bot id -> the version its newest stream here said
        self._unwritten: set[int] = set()  # bots whose version write failed: the beat retries
        self._streams: dict[int, tuple[int, str]] = {}  # stream key -> (bot id, its version)
        self._said: dict[int, str] = {}  # stream key -> the version its Hello said ("" none)
        self._lock = threading.Lock()  # the counts and the writes (so they apply in order)
        self._thread: threading.Thread | None = None

    def new_key(self) -> int:
        """A key for a stream's `opened`, `changed` and `closed`."""
        return next(self._keys)

    def opened(self, bot_id: int, accepts: str = ACCEPTS_ALL, key: int | None = None,
               version: str | None = None) -> int:
        """A stream of `bot_id` that takes `accepts` opened here; its key (for `changed` and
        `closed`). A stream whose `closed` came first (its call ended while this waited for
        the pool) is not counted. `version`: what its Hello said ("" none: NULL), written as
        the bot's version; None leaves the bot's version as it is. A stream that said a
        version counts it open in `bot_versions` (`db.versiontests`: version tests wait for
        it)."""
        with self._lock:
            key = next(self._keys) if key is None else key
            self._opened_many([(bot_id, accepts, key, version)])
            return key

    def opened_many(self, streams: list[Opening]) -> list[None]:
        """`opened` of each (bot id, what it takes, key, version) of `streams`, in one UPDATE
        per kind of what the bots take (a burst of connects)."""
        with self._lock:
            self._opened_many(streams)
        return [None] * len(streams)

    def _opened_many(self, streams: list[Opening]) -> None:
        writes: dict[int, str] = {}  # bot id -> "open" (its first stream here) or "accepts"
        versions: dict[int, str] = {}  # bot id -> the version to write as the bot's
        counted: list[tuple[int, str]] = []  # (bot id, version) of the streams that said one
        for bot_id, accepts, key, version in streams:
            if key in self._gone:
                self._gone.discard(key)
                continue
            if version:
                self._streams[key] = (bot_id, version)
                counted.append((bot_id, version))
            self._open[bot_id] += 1
            modes = self._modes.setdefault(bot_id, {})
            before = widest(modes.values()) if modes else None
            modes[key] = accepts
            if version is not None:
                self._said[key] = version
                picked = self._pick(bot_id)
                if picked is not None:
                    self._versions[bot_id] = versions[bot_id] = picked
            if self._open[bot_id] == 1:
                writes[bot_id] = "open"
            elif widest(modes.values()) != before:
                writes.setdefault(bot_id, "accepts")
        if self._thread is None and self._open:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="presence-heartbeat")
            self._thread.start()
        self._flush(writes)
        self._write_versions(versions)
        if counted:
            self._write_with(_each(stream_opened, counted))

    def _pick(self, bot_id: int) -> str | None:
        """The version to write as `bot_id`'s (under the lock): its newest stream's here among
        those taking the widest kind of match, of those that said one; None: none said."""
        modes = self._modes.get(bot_id, {})
        top = widest(modes.values())
        said = [key for key, mode in modes.items() if mode == top and key in self._said]
        return self._said[max(said)] if said else None

    def _write_versions(self, versions: dict[int, str]) -> None:
        """Write each bot's version of `versions` (under the lock), one UPDATE per version; a
        bot whose write failed is written again by the next heartbeat."""
        groups: dict[str, list[int]] = {}
        for bot_id, version in sorted(versions.items()):
            groups.setdefault(version, []).append(bot_id)
        for version, ids in groups.items():
            if not self._write(update(Bot).where(Bot.id.in_(ids)).values(**_version(version))):
                self._unwritten.update(ids)

    def _flush(self, writes: dict[int, str]) -> bool:
        """Write the presence of the bots in `writes` (under the lock): "open" (connected
        since now, unless still connected), "accepts" (what it takes), "closed" (no stream
        left here); one UPDATE per kind and value."""
        groups: dict[tuple[str, str | None], list[int]] = {}
        for bot_id, kind in sorted(writes.items()):
            accepts = None if kind == "closed" else widest(self._modes.get(bot_id, {}).values())
            groups.setdefault((kind, accepts), []).append(bot_id)
        now, ok = _now(), True
        stale = now - timedelta(seconds=STALE_BEATS * self.heartbeat_s)
        for (kind, accepts), ids in groups.items():
            where = update(Bot).where(Bot.id.in_(ids))
            if kind == "open":
                ok &= self._write(where.values(
                    connected_since=case(
                        (Bot.connected_since.is_(None) | Bot.last_seen_at.is_(None)
                         | (Bot.last_seen_at < stale), now),
                        else_=Bot.connected_since),
                    last_seen_at=now, accepts=accepts))
            elif kind == "accepts":
                ok &= self._write(where.values(accepts=accepts))
            else:
                ok &= self._write(where.values(connected_since=None, last_seen_at=now,
                                               accepts=None))
        return ok

    def changed(self, bot_id: int, key: int, accepts: str, version: str | None = None) -> bool:
        """Stream `key` of `bot_id` takes `accepts` from now on (and runs `version`, unless
        None), written before this returns (so that a pairing decided after it sees it); False
        if the write failed (the next heartbeat writes what it takes again)."""
        with self._lock:
            modes = self._modes.get(bot_id)
            if modes is None or key not in modes:
                return True  # the stream closed meanwhile
            modes[key] = accepts
            if version is not None:
                self._said[key] = version
            picked = self._pick(bot_id)
            if picked == self._versions.get(bot_id):
                picked = None  # written already
            elif picked is not None:
                self._versions[bot_id] = picked
            return self._write_accepts(bot_id, picked)

    def closed(self, bot_id: int, key: int | None = None) -> None:
        self.closed_many([(bot_id, key)])

    def closed_many(self, streams: list[tuple[int, int | None]]) -> list[None]:
        """`closed` of each (bot id, key) of `streams`, in one UPDATE per kind of write."""
        with self._lock:
            writes: dict[int, str] = {}
            versions: dict[int, str] = {}  # bot id -> its version now, if another
            uncounted: list[tuple[int, str]] = []  # (bot id, version) of closed streams
            for bot_id, key in streams:
                modes = self._modes.get(bot_id, {})
                if key is not None:
                    if key not in modes:  # before its `opened` ran: that one is not to count
                        self._gone.add(key)
                        continue
                    modes.pop(key)
                    self._said.pop(key, None)
                    versioned = self._streams.pop(key, None)
                    if versioned is not None:
                        uncounted.append(versioned)
                elif modes:
                    self._said.pop(next(iter(modes)), None)
                    modes.pop(next(iter(modes)))
                self._open[bot_id] -= 1
                if self._open[bot_id] > 0:
                    if modes:
                        writes[bot_id] = "accepts"
                        picked = self._pick(bot_id)
                        if picked is not None and picked != self._versions.get(bot_id):
                            self._versions[bot_id] = versions[bot_id] = picked
                    continue
                del self._open[bot_id]
                self._modes.pop(bot_id, None)
                self._versions.pop(bot_id, None)
                self._unwritten.discard(bot_id)
                writes[bot_id] = "closed"
            self._flush(writes)
            self._write_versions(versions)
            if uncounted:
                self._write_with(_each(stream_closed, uncounted))
        return [None] * len(streams)

    def accepts(self, bot_id: int) -> str | None:
        """What `bot_id` takes as far as this server knows (None: no stream here)."""
        with self._lock:
            modes = self._modes.get(bot_id)
            return widest(modes.values()) if modes else None

    def _write_accepts(self, bot_id: int, version: str | None = None) -> bool:
        """Write what `bot_id` takes now, and `version` unless None (under the lock)."""
        return self._write(update(Bot).where(Bot.id == bot_id)
                           .values(accepts=widest(self._modes.get(bot_id, {}).values()),
                                   **_version(version)),
                           version=bot_id if version is not None else None)

    def stop(self) -> None:
        """The server stopped: forget its streams (no more heartbeats from here)."""
        with self._lock:
            self._open.clear()
            self._modes.clear()
            self._versions.clear()
            self._unwritten.clear()
            self._streams.clear()
            self._said.clear()

    def beat(self) -> None:
        """Refresh the heartbeat of every bot with a stream open here (the thread's step): one
        UPDATE per kind of what the bots take (almost always one), and the versions its streams
        said (`bot_versions`); then write again each version whose write failed (the database
        was down), one UPDATE each."""
        with self._lock:
            if self._open:
                now = _now()
                groups: dict[str, list[int]] = {}
                for bot_id in sorted(self._open):
                    groups.setdefault(widest(self._modes.get(bot_id, {}).values()),
                                      []).append(bot_id)
                for accepts, ids in groups.items():
                    self._write(update(Bot).where(Bot.id.in_(ids)).values(
                        last_seen_at=now, connected_since=func.coalesce(Bot.connected_since, now),
                        accepts=accepts))
                if self._streams:
                    versions = set(self._streams.values())
                    self._write_with(lambda s: versions_beat(s, versions, now))
            for bot_id in sorted(self._unwritten):
                if bot_id not in self._versions or self._write(
                        update(Bot).where(Bot.id == bot_id)
                        .values(**_version(self._versions[bot_id]))):
                    self._unwritten.discard(bot_id)

    def _run(self) -> None:
        stop = threading.Event()  # never set: only a timed wait
        while True:
            stop.wait(self.heartbeat_s)
            with self._lock:
                if not self._open:
                    self._thread = None
                    return
            self.beat()

    def _write(self, statement, version: int | None = None) -> bool:  # type: ignore[no-untyped-def]
        """One UPDATE in its own transaction; a failure is logged (the next beat repairs it)
        and answered False. `version`: the bot whose version the UPDATE writes (the beat
        writes it again if this fails)."""
        done = self._write_with(lambda s: s.execute(
            statement, execution_options={"synchronize_session": False}))
        if not done and version is not None:
            self._unwritten.add(version)
        return done

    def _write_with(self, write: Callable[[Session], object]) -> bool:
        """`write` in its own transaction; a failure is logged and answered False."""
        try:
            with factory_of(self.sessions)() as s, writing(s), s.begin():
                write(s)
            return True
        except Exception as e:  # noqa: BLE001  (presence must never break a stream)
            log_failure("bot presence update (the next heartbeat retries)", e)
            return False
