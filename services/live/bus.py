"""The change bus between processes serving one database: Redis pub/sub.

Every committed change of a match (`services.core.values.Change`) is published, after the commit and
off the committer's thread, on the channel `bummerl:changes:<site>` (the site names the
database, so several sites or test databases can share one Redis). A service replica listens to
the channels of the databases it serves and hands what it hears to its own streams, so a bot on
replica A gets its turn as soon as its opponent's answer committed on replica B.

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
from collections.abc import Callable
from datetime import datetime
from typing import Any

from services.core import cache, metrics
from services.core.config import settings
from services.core.connections import binds_of
from services.core.values import Change, MatchState

log = logging.getLogger(__name__)

CHANNEL = "bummerl:changes:"
MAX_PENDING = 10000
RETRY_SECONDS = 1.0


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
        self.outgoing: queue.Queue[tuple[str, str]] = queue.Queue(MAX_PENDING)
        self.sites: set[str] = set()
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
            self.outgoing.put_nowait((change.site, encode(change, self.origin)))
        except queue.Full:
            log.warning("change bus: outgoing queue full; change of match %d not published",
                        change.match.id)

    def _publish_loop(self) -> None:
        client = self._client(socket_timeout=2)
        while True:
            site, message = self.outgoing.get()
            try:
                client.publish(CHANNEL + site, message)
            except Exception as e:  # noqa: BLE001  (the bus is a hint: drop, retry later)
                log.warning("change bus: publish failed (%s); the safety net catches up", e)
                time.sleep(RETRY_SECONDS)

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
                pubsub = client.pubsub(ignore_subscribe_messages=True)
                pubsub.psubscribe(CHANNEL + "*")
                metrics.BUS_CHANNELS.set(1)
                pubsub.get_message(timeout=1.0)  # the subscription's confirmation
                self.connected.set()
                log.info("change bus: listening on %s", self.url)
                self._resync()  # changes may have been missed while not listening
                while True:
                    message = pubsub.get_message(timeout=1.0)
                    if message is None or message.get("type") != "pmessage":
                        continue
                    channel = message["channel"]
                    site = (channel.decode() if isinstance(channel, bytes) else channel)[
                        len(CHANNEL):]
                    if site not in self.sites:
                        continue
                    origin, change = decode(site, message["data"])
                    if origin != self.origin:
                        metrics.BUS_RECEIVED.inc()
                        follow(change)
                        self._deliver(change)
            except Exception as e:  # noqa: BLE001  (reconnect; the safety net covers the gap)
                if self.connected.is_set():
                    log.warning("change bus: lost (%s); streams poll until it is back", e)
                self.connected.clear()
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


def listening() -> bool:
    """Whether this process hears other processes' changes now."""
    bus = _bus
    return bus is not None and bus.connected.is_set()
