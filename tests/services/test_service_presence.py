"""A remote bot's presence in the database (`services.live.presence`), with the real server: a
connected bot has a fresh heartbeat, a disconnected one is cleared, a crashed server's bots go
stale by themselves; on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import queue
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from bummerl.v1 import bot_pb2
from servicekit import CONFIG, auth, running_service

from db.base import aware as db_aware
from db.models import Bot
from services.live.presence import STALE_BEATS, Presence, is_connected

HEARTBEAT = 0.2
FAST = dataclasses.replace(CONFIG, heartbeat_s=HEARTBEAT)


def row(sessions, bot_id: int) -> Bot:
    with sessions() as s:
        bot = s.get(Bot, bot_id)
        assert bot is not None
        return bot


def aware(moment: datetime | None) -> datetime:
    assert moment is not None
    return db_aware(moment)


def wait_for(check, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def beats_on(sessions, bot_id: int) -> None:  # type: ignore[no-untyped-def]
    """The heartbeat is still refreshed: a beat after now comes (however loaded the machine)."""
    mark = datetime.now(UTC)
    wait_for(lambda: aware(row(sessions, bot_id).last_seen_at) >= mark)


class Stream:
    """A raw Play stream, open until `close`."""

    def __init__(self, service, token: str) -> None:  # type: ignore[no-untyped-def]
        self.outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        self.outbox.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello()))
        self.call = service.bots.Play(self._requests(), metadata=auth(token))
        first = next(self.call)
        assert first.WhichOneof("message") == "welcome"

    def _requests(self) -> Iterator[bot_pb2.PlayRequest]:
        while (request := self.outbox.get()) is not None:
            yield request

    def close(self) -> None:
        self.call.cancel()
        self.outbox.put(None)


def test_a_connected_bot_has_a_fresh_heartbeat_and_is_cleared_on_disconnect(database):
    with running_service(database, FAST) as service:
        a_id, a_token = service.register("a")
        b_id, _ = service.register("b")  # never connects
        assert not is_connected(row(service.sessions, a_id), HEARTBEAT)
        before = datetime.now(UTC)
        stream = Stream(service, a_token)
        try:
            bot = row(service.sessions, a_id)
            assert aware(bot.connected_since) >= before - timedelta(seconds=0.01)
            first_seen = aware(bot.last_seen_at)
            assert is_connected(bot, HEARTBEAT)
            # the heartbeat goes on while the stream is open: refreshed, connected_since kept
            wait_for(lambda: aware(row(service.sessions, a_id).last_seen_at) > first_seen)
            time.sleep(STALE_BEATS * HEARTBEAT + 0.1)  # longer than a stale heartbeat
            beats_on(service.sessions, a_id)
            bot = row(service.sessions, a_id)
            assert is_connected(bot, HEARTBEAT)
            assert aware(bot.connected_since) < aware(bot.last_seen_at)
            assert not is_connected(row(service.sessions, b_id), HEARTBEAT)
        finally:
            stream.close()
        wait_for(lambda: row(service.sessions, a_id).connected_since is None)
        assert not is_connected(row(service.sessions, a_id), HEARTBEAT)
        seen = row(service.sessions, a_id).last_seen_at
        time.sleep(2 * HEARTBEAT)  # no more heartbeats once disconnected
        assert row(service.sessions, a_id).last_seen_at == seen


def test_a_bot_stays_connected_while_any_of_its_streams_is_open(database):
    with running_service(database, FAST) as service:
        a_id, a_token = service.register("a")
        one, two = Stream(service, a_token), Stream(service, a_token)
        try:
            since = row(service.sessions, a_id).connected_since
            one.close()
            time.sleep(STALE_BEATS * HEARTBEAT + 0.1)
            beats_on(service.sessions, a_id)
            bot = row(service.sessions, a_id)
            assert is_connected(bot, HEARTBEAT) and bot.connected_since == since
        finally:
            one.close()
            two.close()
        wait_for(lambda: row(service.sessions, a_id).connected_since is None)


def test_a_crashed_servers_bots_go_stale_by_themselves(database):
    """A server that dies clears nothing; its heartbeat stops, so its bots drop out."""
    with running_service(database, FAST) as service:
        a_id, _ = service.register("a")
        presence = Presence(service.sessions, HEARTBEAT)
        presence.opened(a_id)
        wait_for(lambda: aware(row(service.sessions, a_id).last_seen_at)
                 > aware(row(service.sessions, a_id).connected_since))  # beating
        assert is_connected(row(service.sessions, a_id), HEARTBEAT)
        with presence._lock:  # the "crash": no more heartbeats, no clean disconnect
            presence._open.clear()
        time.sleep(STALE_BEATS * HEARTBEAT + 0.2)
        bot = row(service.sessions, a_id)
        assert bot.connected_since is not None  # never cleared...
        assert not is_connected(bot, HEARTBEAT)  # ...but stale
        # a new stream (the restarted server) makes it connected again, with a new start
        stream_start = datetime.now(UTC)
        again = Presence(service.sessions, HEARTBEAT)
        again.opened(a_id)
        bot = row(service.sessions, a_id)
        assert is_connected(bot, HEARTBEAT) and aware(bot.connected_since) >= stream_start
        again.closed(a_id)
        assert row(service.sessions, a_id).connected_since is None


def test_a_burst_of_opens_and_closes_is_written_in_batches_with_the_same_outcome(database):
    """`opened_many` and `closed_many` (a burst of connects, services.live.batches) leave each
    bot as the one-by-one calls would: connected while a stream of it is open, with what its
    widest stream takes, and cleared with its last one."""
    from db.models import ACCEPTS_ALL, ACCEPTS_CHALLENGES

    with running_service(database, FAST) as service:
        a_id, _ = service.register("a")
        b_id, _ = service.register("b")
        c_id, _ = service.register("c")
        presence = Presence(service.sessions, HEARTBEAT)
        gone, k1, k2, k3 = (presence.new_key() for _ in range(4))
        presence.closed_many([(c_id, gone)])  # closed before its open was recorded
        presence.opened_many([(a_id, ACCEPTS_CHALLENGES, k1, None), (a_id, ACCEPTS_ALL, k2, None),
                              (b_id, ACCEPTS_CHALLENGES, k3, None),
                              (c_id, ACCEPTS_ALL, gone, None)])
        a, b, c = (row(service.sessions, i) for i in (a_id, b_id, c_id))
        assert is_connected(a, HEARTBEAT) and a.accepts == ACCEPTS_ALL
        assert is_connected(b, HEARTBEAT) and b.accepts == ACCEPTS_CHALLENGES
        assert c.connected_since is None  # its stream ended before it was recorded
        presence.closed_many([(a_id, k2), (b_id, k3)])
        a, b = row(service.sessions, a_id), row(service.sessions, b_id)
        assert is_connected(a, HEARTBEAT) and a.accepts == ACCEPTS_CHALLENGES  # stream 1 left
        assert b.connected_since is None and b.accepts is None
        presence.closed_many([(a_id, k1)])
        assert row(service.sessions, a_id).connected_since is None
