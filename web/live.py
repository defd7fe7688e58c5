"""Live pages: one server-sent event stream per page, fed by one database poller per process.

Why the database: the dashboard is a read-only client of the shared database, which is the
authority on every match; it works the same on SQLite (embedded) and PostgreSQL, needs no
broker, and does not depend on how the engine service's replicas talk to each other. The
poller reads a handful of cheap change markers (max ids and counts, all index-only) every
`LIVE_POLL_SECONDS` (0.2 s): one small query per process, however many pages are open. When
they change, it renders each open channel (a page's live part) once, and sends it to every
stream of that channel only if it changed.

A stream is `GET /events/<channel>` (`text/event-stream`). Each event `update` carries JSON
`{"html": {element id: inner HTML}, "final": bool}`: the same templates render the page and its
updates, so an update is exactly what a reload would show (and the spectator-safety of the
page is the safety of the events). A stream holds a server thread while open (waitress: one of
its `threads`), so at most `MAX_STREAMS` are open at once: past that the stream is refused
with 503 and the page says it is not live. Streams end after `STREAM_SECONDS` (the browser
reconnects by itself) and send a comment every `KEEPALIVE_SECONDS`, so closed tabs free their
thread soon.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from flask import Blueprint, Flask, current_app, request
from sqlalchemy import func, select

from db.batch import Simulation
from db.events import T_RUNNING, Tournament, TournamentEntry
from db.models import RUNNING, ActionLog, Bot, Match, Refusal
from db.pairs import FINAL, PLAYING, DuplicatePair
from db.ratings import Rating
from db.versiontests import OPEN as TEST_OPEN
from db.versiontests import WAITING as TEST_WAITING
from db.versiontests import VersionTest
from web import sse

log = logging.getLogger(__name__)

bp = Blueprint("live", __name__)

Render = Callable[[], dict[str, Any]]  # a channel's payload: {"html": {...}, "final": bool}


def markers_query() -> Any:
    """One row of change markers: any action, refusal, new or ended match, rating, presence
    change, simulation progress, tournament change (a new tournament or pair, a pair started
    or decided, an event ended, a bot withdrawn), or version test's progress or state changes
    it."""
    return select(
        select(func.max(ActionLog.id)).scalar_subquery(),
        select(func.max(Refusal.id)).scalar_subquery(),
        select(func.max(Match.id)).scalar_subquery(),
        select(func.count()).select_from(Match).where(Match.state == RUNNING)
        .scalar_subquery(),
        select(func.max(Rating.updated_at)).scalar_subquery(),
        select(func.count()).select_from(Bot).where(Bot.connected_since.is_not(None))
        .scalar_subquery(),
        select(func.count()).select_from(Bot).where(Bot.suspended_at.is_not(None))
        .scalar_subquery(),
        select(func.sum(Simulation.deals_done)).scalar_subquery(),
        select(func.max(Tournament.id)).scalar_subquery(),
        select(func.count()).select_from(Tournament).where(Tournament.state != T_RUNNING)
        .scalar_subquery(),
        select(func.max(DuplicatePair.id)).scalar_subquery(),
        select(func.count()).select_from(DuplicatePair).where(DuplicatePair.state == PLAYING)
        .scalar_subquery(),
        select(func.count()).select_from(DuplicatePair).where(DuplicatePair.state.in_(FINAL))
        .scalar_subquery(),
        select(func.count()).select_from(TournamentEntry)
        .where(TournamentEntry.withdrawn_at.is_not(None)).scalar_subquery(),
        select(func.max(VersionTest.id)).scalar_subquery(),
        select(func.sum(VersionTest.lost_both + VersionTest.split + VersionTest.won_both
                        + VersionTest.voided)).scalar_subquery(),
        select(func.count()).select_from(VersionTest).where(VersionTest.state.in_(TEST_OPEN))
        .scalar_subquery(),
        select(func.count()).select_from(VersionTest).where(VersionTest.state == TEST_WAITING)
        .scalar_subquery(),
    )


@dataclass
class Channel:
    render: Render
    last: str | None = None  # the payload last sent
    streams: set[queue.Queue[str | None]] = field(default_factory=set)


class Hub:
    """The poller and the open streams of one dashboard app."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.interval = float(app.config["LIVE_POLL_SECONDS"])
        self.max_streams = int(app.config["MAX_STREAMS"])
        self.channels: dict[str, Channel] = {}
        self.lock = threading.Lock()
        self.open = 0
        self.marker: Any = None
        self.thread: threading.Thread | None = None
        self.stopping = threading.Event()

    def subscribe(self, key: str, render: Render) -> queue.Queue[str | None] | None:
        """A new stream of channel `key` (its first event queued), or None when full."""
        first = encode(render())
        with self.lock:
            if self.open >= self.max_streams:
                return None
            self.open += 1
            channel = self.channels.get(key)
            if channel is None:
                channel = self.channels[key] = Channel(render, last=first)
            stream: queue.Queue[str | None] = queue.Queue(maxsize=16)
            channel.streams.add(stream)
            stream.put(first)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="dashboard-live",
                                               daemon=True)
                self.thread.start()
        return stream

    def unsubscribe(self, key: str, stream: queue.Queue[str | None]) -> None:
        with self.lock:
            self.open -= 1
            channel = self.channels.get(key)
            if channel is not None:
                channel.streams.discard(stream)
                if not channel.streams:
                    del self.channels[key]

    def close(self) -> None:
        """End every open stream and the poller (the app is shutting down)."""
        self.stopping.set()
        with self.lock:
            streams = [q for channel in self.channels.values() for q in channel.streams]
        for stream in streams:
            with contextlib.suppress(queue.Full):
                stream.put_nowait(None)

    def _run(self) -> None:
        sessions = self.app.extensions["bummerl.sessions"]
        failing = False
        while not self.stopping.wait(self.interval):
            with self.lock:
                if not self.channels:  # nobody watches: stop (the next stream restarts it)
                    self.thread = None
                    return
            try:
                with sessions() as s:
                    marker = tuple(s.execute(markers_query()).one())
            except Exception as e:  # noqa: BLE001  (the database may be away; try again)
                if not failing:  # once per outage, not every poll
                    log.warning("live: cannot read the change markers: %s", e)
                failing = True
                continue
            if failing:
                log.warning("live: reading the change markers again")
                failing = False
            if marker == self.marker:
                continue
            self.marker = marker
            with self.lock:
                channels = list(self.channels.values())
            for channel in channels:
                self._publish(channel)

    def _publish(self, channel: Channel) -> None:
        try:
            payload = encode(channel.render())
        except Exception:  # noqa: BLE001  (one broken channel must not stop the others)
            log.warning("live: rendering a channel failed", exc_info=True)
            return
        if payload == channel.last:
            return
        channel.last = payload
        with self.lock:
            streams = list(channel.streams)
        for stream in streams:
            while True:  # a stalled client loses its oldest states, never the latest
                try:
                    stream.put_nowait(payload)
                    break
                except queue.Full:
                    with contextlib.suppress(queue.Empty):
                        stream.get_nowait()


def encode(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"))


def hub() -> Hub:
    found: Hub = current_app.extensions["bummerl.hub"]
    return found


def install(app: Flask) -> None:
    app.extensions["bummerl.hub"] = Hub(app)
    app.register_blueprint(bp)


def stream(key: str, render: Render) -> Any:
    """The event-stream response of channel `key` (503 past the cap of open streams)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    path = request.full_path

    def in_request() -> dict[str, Any]:  # renders with url_for, outside any request
        with app.test_request_context(path):
            return render()

    live = hub()
    subscription = live.subscribe(key, in_request)
    if subscription is None:
        return sse.refused(f"too many live streams open (at most {live.max_streams}): this "
                           "page is not live; reload it later")
    return sse.respond(subscription, "update",
                       partial(live.unsubscribe, key, subscription))
