"""The change bus between processes serving one database: Redis pub/sub.

Every committed change of a match (`services.core.values.Change`) is published, after the commit and
off the committer's thread, on one channel per subject it concerns (`keys_of`): the match's,
`bummerl:changes:<site>/match:<id>`, and its bots', `bummerl:changes:<site>/bot:<id>` (the bot
to act, or both when the match ends; the site names the database, so several sites or test
databases can share one Redis). A replica listens only to the channels of the subjects its own
streams follow (`want`: a Play stream its bot's, a WatchMatch stream its match's), so a bot on
replica A gets its turn as soon as its opponent's answer committed on replica B, and what a
replica hears grows with what it serves, not with the whole site. (Until 2026-12 every replica
heard every change on `bummerl:changes:<site>`: with R replicas each decoded R - 1 changes of
others for each of its own, `bench/bus.py`.) A stream's first read of the database waits
(at most `READY_S`) until its channel is subscribed, so no change falls between the two.

Why Redis pub/sub and not PostgreSQL LISTEN/NOTIFY: it works with either database (SQLite stays
the embedded default), it adds nothing to the commit (NOTIFY would add a statement to each
action's transaction and takes a database-wide lock at commit), and Redis is already the
workers' broker. The database stays the authority: a message is only a hint to look. If the bus
is down or a message is lost, nothing is lost but time: the streams fall back to their
safety-net reads (`Settings.poll_s` while the bus is down), and after a reconnect every stream
reads the database once (the `resync` the listener was given: `services.live.notify.resync`).

Configured by `BUMMERL_BUS_URL` (else `REDIS_URL`; `off` disables it). Publishing never blocks:
the outgoing queue is bounded and a message that does not fit is dropped.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from db.settings import settings
from services.core import cache, metrics
from services.core.connections import binds_of
from services.core.values import Change, MatchState

log = logging.getLogger(__name__)

CHANNEL = "bummerl:changes:"
MAX_PENDING = 10000
RETRY_SECONDS = 1.0
TICK_S = 0.05  # the listener's longest wait for a message: new channels are subscribed then
READY_S = 1.0  # the longest a new stream waits for its channel before its first read
RECENT = 50_000  # matches whose last message is kept to drop a second copy of it


def key(site: str, kind: str, ident: int) -> str:
    """The subject of `kind` ("bot", "match") `ident` on database `site`: a stream's key in
    `services.live.notify`, and its channel on the bus (after `CHANNEL`)."""
    return f"{site}/{kind}:{ident}"


def keys_of(change: Change) -> list[str]:
    """The subjects a change concerns: its match, and the bot to act (both when it is over,
    or when the change is for everyone)."""
    m = change.match
    keys = [key(change.site, "match", m.id)]
    if change.everyone or m.to_act is None:
        keys += [key(change.site, "bot", m.bot0_id), key(change.site, "bot", m.bot1_id)]
    else:
        keys.append(key(change.site, "bot", m.bot1_id if m.to_act else m.bot0_id))
    return keys


def encode(change: Change, origin: str) -> str:
    m = change.match
    fields: dict[str, Any] = m._asdict()
    if m.deadline_at is not None:
        fields["deadline_at"] = m.deadline_at.isoformat()
    return json.dumps({"origin": origin, "everyone": change.everyone, "match": fields,
                       "action": change.action})


def decode(site: str, text: str | bytes) -> tuple[str, Change]:
    data = json.loads(text)
    fields = data["match"]
    if fields.get("deadline_at"):
        fields["deadline_at"] = datetime.fromisoformat(fields["deadline_at"])
    action = data.get("action")
    return data["origin"], Change(site, MatchState(**fields), bool(data["everyone"]),
                                  (int(action[0]), str(action[1])) if action else None)


class Bus:
    """One process's connection to the bus: a publisher and (on a server) a listener thread."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.origin = uuid.uuid4().hex  # this process: its own messages are not delivered twice
        self.outgoing: queue.Queue[tuple[list[str], str]] = queue.Queue(MAX_PENDING)
        self.sites: set[str] = set()
        self.wanted: Counter[str] = Counter()  # channel -> streams here that follow it
        self.waiting: dict[str, list[Callable[[], object]]] = {}  # channel -> `want`'s on_ready
        self.confirmed: set[str] = set()  # channels Redis confirmed this listener subscribes
        self.changed = False  # `wanted` changed since the listener last subscribed
        self._recent: dict[tuple[str, int], bytes | str] = {}  # (site, match) -> last message
        self.connected = threading.Event()
        self._publisher: threading.Thread | None = None
        self._listener: threading.Thread | None = None
        self._deliver: Callable[[Change], object] = lambda change: None
        self._resync: Callable[[], object] = lambda: None
        self._guard = threading.Lock()

    def _client(self, **options: Any):  # type: ignore[no-untyped-def]
        import redis

        return redis.Redis.from_url(self.url, socket_connect_timeout=2, socket_keepalive=True,
                                    **options)

    # --- publishing -------------------------------------------------------------------------
    def publish(self, change: Change) -> None:
        with self._guard:
            if self._publisher is None:
                self._publisher = threading.Thread(target=self._publish_loop, daemon=True,
                                                   name="bummerl-bus-out")
                self._publisher.start()
        try:
            self.outgoing.put_nowait(([CHANNEL + k for k in keys_of(change)],
                                      encode(change, self.origin)))
        except queue.Full:
            log.warning("change bus: outgoing queue full; change of match %d not published",
                        change.match.id)

    def _publish_loop(self) -> None:
        client = self._client(socket_timeout=2)
        while True:
            channels, message = self.outgoing.get()
            try:
                pipe = client.pipeline(transaction=False)  # one round trip for its channels
                for channel in channels:
                    pipe.publish(channel, message)
                pipe.execute()
            except Exception as e:  # noqa: BLE001  (the bus is a hint: drop, retry later)
                log.warning("change bus: publish failed (%s); the safety net catches up", e)
                time.sleep(RETRY_SECONDS)

    # --- what to listen to ---------------------------------------------------------------------
    def want(self, subject: str, on_ready: Callable[[], object] | None = None) -> None:
        """A stream here follows `subject` (a `key`): listen to its channel. `on_ready` is
        called once its subscription is confirmed (at once if it is, or if the bus is not
        heard now: a stream does not wait for a bus that is down; the resync after it is back
        covers the gap)."""
        channel = CHANNEL + subject
        with self._guard:
            self.wanted[channel] += 1
            if self.wanted[channel] == 1:
                self.changed = True
            now = on_ready is not None and (channel in self.confirmed
                                            or not self.connected.is_set())
            if on_ready is not None and not now:
                self.waiting.setdefault(channel, []).append(on_ready)
        if now and on_ready is not None:
            on_ready()

    def unwant(self, subject: str) -> None:
        channel = CHANNEL + subject
        with self._guard:
            self.wanted[channel] -= 1
            if self.wanted[channel] <= 0:
                del self.wanted[channel]
                self.changed = True

    def _subscribe(self, pubsub: Any) -> None:
        """Bring the listener's subscriptions up to `wanted` (on the listener's thread)."""
        with self._guard:
            if not self.changed:
                return
            self.changed = False
            wanted = set(self.wanted)
        current = set(pubsub.channels) | set(pubsub.pending_unsubscribe_channels)
        new = sorted(wanted - {c.decode() if isinstance(c, bytes) else c for c in current})
        gone = sorted({c.decode() if isinstance(c, bytes) else c for c in pubsub.channels}
                      - wanted)
        for first in range(0, len(new), 1000):
            pubsub.subscribe(*new[first:first + 1000])
        if gone:
            pubsub.unsubscribe(*gone)
            with self._guard:
                self.confirmed.difference_update(gone)
        metrics.BUS_CHANNELS.set(len(wanted))

    def _confirmed(self, channel: str) -> None:
        with self._guard:
            self.confirmed.add(channel)
            ready = self.waiting.pop(channel, [])
        for on_ready in ready:
            on_ready()

    def _all_confirmed(self) -> bool:
        with self._guard:
            return not self.changed and self.confirmed.issuperset(self.wanted)

    def _release_waiting(self) -> None:
        """The bus is lost: nobody waits for a subscription now."""
        with self._guard:
            self.confirmed.clear()
            ready = [r for waiting in self.waiting.values() for r in waiting]
            self.waiting.clear()
            self.changed = True
        for on_ready in ready:
            on_ready()

    def _duplicate(self, site: str, change: Change, data: bytes | str) -> bool:
        """A change heard on two channels here (its match's and its bot's) is handled once."""
        last = (site, change.match.id)
        if self._recent.get(last) == data:
            return True
        if len(self._recent) >= RECENT:
            self._recent.clear()
        self._recent[last] = data
        return False

    # --- listening --------------------------------------------------------------------------
    def listen(self, site: str, deliver: Callable[[Change], object],
               resync: Callable[[], object]) -> None:
        """Hand the changes other processes make on database `site` to `deliver` (after
        bringing this process's cached state of the match up to them), and call `resync`
        whenever changes may have been missed (the listener connected again)."""
        with self._guard:
            self.sites.add(site)
            self._deliver, self._resync = deliver, resync
            if self._listener is None:
                self._listener = threading.Thread(target=self._listen_loop, daemon=True,
                                                  name="bummerl-bus-in")
                self._listener.start()

    def _listen_loop(self) -> None:
        while True:
            try:
                client = self._client(socket_timeout=10, health_check_interval=5)
                pubsub = client.pubsub()
                with self._guard:
                    self.changed = True  # (again) every channel wanted
                pubsub.ping()  # the connection works: the bus is heard
                self.connected.set()
                log.info("change bus: listening on %s", self.url)
                # changes may have been missed while not listening: every stream reads the
                # database once its channel is subscribed again (or READY_S passed)
                resync_by: float | None = time.monotonic() + READY_S
                while True:
                    self._subscribe(pubsub)
                    if resync_by is not None and (self._all_confirmed()
                                                  or time.monotonic() > resync_by):
                        resync_by = None
                        self._resync()
                    if not pubsub.subscribed:
                        time.sleep(TICK_S)
                        continue
                    message = pubsub.get_message(timeout=TICK_S)
                    if message is None:
                        continue
                    channel = message["channel"]
                    channel = channel.decode() if isinstance(channel, bytes) else channel
                    if message.get("type") == "subscribe":
                        self._confirmed(channel)
                        continue
                    if message.get("type") != "message":
                        continue
                    site = channel[len(CHANNEL):].split("/", 1)[0]
                    if site not in self.sites:
                        continue
                    origin, change = decode(site, message["data"])
                    if origin == self.origin or self._duplicate(site, change, message["data"]):
                        continue
                    metrics.BUS_RECEIVED.inc()
                    follow(change)
                    self._deliver(change)
            except Exception as e:  # noqa: BLE001  (reconnect; the safety net covers the gap)
                if self.connected.is_set():
                    log.warning("change bus: lost (%s); streams poll until it is back", e)
                self.connected.clear()
                self._release_waiting()
                time.sleep(RETRY_SECONDS)


def follow(change: Change) -> None:
    """Bring this process's cached state of the match up to another process's change: apply
    its action to the cached game if that is one behind (so the next action here needs no
    replay), and forget the live row (it is stale)."""
    m = change.match
    for bind in binds_of(change.site):
        cache.follow(cache.bind_key(bind, m.id), m.seq, change.action)


_bus: Bus | None = None
_configured = False
_lock = threading.Lock()


def configure(url: str | None) -> Bus | None:
    """Use the bus at `url` in this process (None or "off": no bus)."""
    global _bus, _configured
    with _lock:
        if _bus is not None and _bus.url == url:
            return _bus
        _bus = Bus(url) if url and url != "off" else None
        _configured = True
        return _bus


def current() -> Bus | None:
    """This process's bus (configured from the environment on first use)."""
    if not _configured:
        configure(settings().bus_url)
    return _bus


def publish(change: Change) -> None:
    bus = current()
    if bus is not None:
        bus.publish(change)


def want(subject: str, on_ready: Callable[[], object] | None = None) -> None:
    """This process's streams follow `subject`: listen to its channel (`Bus.want`); without a
    bus, `on_ready` is called at once."""
    bus = current()
    if bus is None or bus._listener is None:  # publishing only (a worker), or no bus
        if on_ready is not None:
            on_ready()
        return
    bus.want(subject, on_ready)


def unwant(subject: str) -> None:
    bus = current()
    if bus is not None and bus._listener is not None:
        bus.unwant(subject)


def listening() -> bool:
    """Whether this process hears other processes' changes now."""
    bus = _bus
    return bus is not None and bus.connected.is_set()
