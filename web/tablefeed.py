"""Live tables: one server-sent event stream per open table page, fed by one database poller per
process (the approach of web/live.py, for the people's tables).

Every `TABLE_POLL_SECONDS` (0.025 s) the poller reads `(id, seq, state)` of the matches that have
an open table, in one query by primary key, however many tables are open; when a match's seq or
state changed it queues `{"seq": N, "final": bool}` to that match's streams (and to a stream
just opened, once, whatever the seq: its page may have loaded the table just before a change).
The event carries no card: the browser then reloads the table from its JSON endpoint
(`/api/table/<id>`), which asks the service for what the person's seat may know. So an open
table costs one stream (a server thread while it waits, no CPU) and a row in one query; the
poller's thread is shared.

At most `TABLE_STREAMS` table streams are open at once; past that a stream is refused with 503
and the page polls the JSON endpoint instead (every 2 s), so nobody is turned away from a table.
Streams end after `STREAM_SECONDS` (the browser reconnects) and send a comment every
`KEEPALIVE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
from collections.abc import Sequence
from functools import partial
from typing import Any

from flask import Flask, current_app
from sqlalchemy import bindparam, select

from db.models import Match
from web import sse

log = logging.getLogger(__name__)


class Feed:
    """The poller and the open table streams of one app."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.interval = float(app.config["TABLE_POLL_SECONDS"])
        self.max_streams = int(app.config["TABLE_STREAMS"])
        self.lock = threading.Lock()
        self.streams: dict[int, set[queue.Queue[str | None]]] = {}
        self.seen: dict[int, tuple[int, str]] = {}
        self.fresh: set[queue.Queue[str | None]] = set()  # opened since the last poll
        self.open = 0
        self.thread: threading.Thread | None = None
        self.stopping = threading.Event()

    def subscribe(self, match_id: int) -> queue.Queue[str | None] | None:
        with self.lock:
            if self.open >= self.max_streams:
                return None
            self.open += 1
            stream: queue.Queue[str | None] = queue.Queue(maxsize=8)
            self.streams.setdefault(match_id, set()).add(stream)
            self.fresh.add(stream)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="web-tables", daemon=True)
                self.thread.start()
        return stream

    def unsubscribe(self, match_id: int, stream: queue.Queue[str | None]) -> None:
        with self.lock:
            self.open -= 1
            streams = self.streams.get(match_id)
            self.fresh.discard(stream)
            if streams is not None:
                streams.discard(stream)
                if not streams:
                    del self.streams[match_id]
                    self.seen.pop(match_id, None)

    def close(self) -> None:
        self.stopping.set()
        with self.lock:
            streams = [q for group in self.streams.values() for q in group]
        for stream in streams:
            with contextlib.suppress(queue.Full):
                stream.put_nowait(None)

    def _run(self) -> None:
        sessions = self.app.extensions["bummerl.sessions"]
        failing = False
        while not self.stopping.wait(self.interval):
            with self.lock:
                if not self.streams:
                    self.thread = None
                    return
                ids = list(self.streams)
            try:
                with sessions() as s:
                    rows = s.connection().execute(_OPEN_TABLES, {"ids": ids}).all()
            except Exception as e:  # noqa: BLE001  (the database may be away; try again)
                if not failing:
                    log.warning("tables: cannot read the open tables' matches: %s", e)
                failing = True
                continue
            failing = False
            for targets, seq, state in self._changes(rows):
                payload = json.dumps({"seq": seq, "final": state != "running"})
                for stream in targets:
                    while True:  # a stalled client loses its oldest states, never the latest
                        try:
                            stream.put_nowait(payload)
                            break
                        except queue.Full:
                            with contextlib.suppress(queue.Empty):
                                stream.get_nowait()

    def _changes(self, rows: Sequence[Any]) -> list[tuple[list[queue.Queue[str | None]], int, str]]:
        """The streams to tell of each row (match id, seq, state) read: all of a match's when
        its seq or state changed, else those opened since the last poll (the page may have
        loaded the table just before a change; it reloads only when the seq differs). Most
        rows of a poll are unchanged: they cost a comparison."""
        changes = []
        with self.lock:
            fresh, self.fresh = self.fresh, set()
            for match_id, seq, state in rows:
                streams = self.streams.get(match_id)
                if not streams:
                    continue
                now = (seq, state)
                if self.seen.get(match_id) != now:
                    self.seen[match_id] = now
                    changes.append((list(streams), seq, state))
                elif fresh:
                    targets = [q for q in streams if q in fresh]
                    if targets:
                        changes.append((targets, seq, state))
        return changes


# The open tables' (id, seq, state), built once (a statement costs more to build than to run).
_OPEN_TABLES = select(Match.id, Match.seq, Match.state).where(
    Match.id.in_(bindparam("ids", expanding=True)))


def install(app: Flask) -> None:
    app.extensions["bummerl.tables"] = Feed(app)


def stream(match_id: int) -> Any:
    """The event stream of table `match_id` (503 past the cap: the page then polls)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    feed: Feed = app.extensions["bummerl.tables"]
    subscription = feed.subscribe(match_id)
    if subscription is None:
        return sse.refused(f"too many table streams open (at most {feed.max_streams}): this "
                           "table reloads every 2 s instead")
    return sse.respond(subscription, "table",
                       partial(feed.unsubscribe, match_id, subscription))
