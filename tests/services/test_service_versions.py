"""The version a bot runs (`Hello.version`), with the real server on SQLite and PostgreSQL:
recorded as `bots.version` when a stream opens and when a later Hello says another, read by
every new match into its seats' versions (a house bot's: its strategy), shown in the Match."""

from __future__ import annotations

import queue
from collections.abc import Iterator

from bummerl.v1 import bot_pb2, match_pb2
from faultproxy import Proxy
from servicekit import OPERATOR, auth, running_service
from sqlalchemy import create_engine as make_engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import sessionmaker
from test_service_presence import FAST, row, wait_for

from db.models import ACCEPTS_ALL, HOUSE, Match
from services.live.presence import Presence
from services.ops import bots


class Stream:
    """A raw Play stream that says `version` in its Hello (None: no Hello at all)."""

    def __init__(self, service, token: str, version: str | None) -> None:  # type: ignore[no-untyped-def]
        self.outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        if version is not None:
            self.outbox.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(version=version)))
        self.call = service.bots.Play(self._requests(), metadata=auth(token))
        assert next(self.call).WhichOneof("message") == "welcome"

    def _requests(self) -> Iterator[bot_pb2.PlayRequest]:
        while (request := self.outbox.get()) is not None:
            yield request

    def hello(self, version: str) -> None:
        self.outbox.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(version=version)))

    def close(self) -> None:
        self.call.cancel()
        self.outbox.put(None)


def new_match(service, a: int, b: int) -> match_pb2.Match:  # type: ignore[no-untyped-def]
    return service.matches.CreateMatch(match_pb2.CreateMatchRequest(bot_ids=[a, b]),
                                       metadata=auth(OPERATOR)).match


def seat_versions(service, match_id: int) -> tuple[str | None, str | None]:  # type: ignore[no-untyped-def]
    with service.sessions() as s:
        m = s.get(Match, match_id)
        assert m is not None
        return m.version0, m.version1


def test_each_match_records_the_version_each_seat_runs(database):
    with running_service(database, FAST) as service:
        a, token = service.register("a")
        silent, _ = service.register("silent")  # never says a version
        house, _ = bots.register_bot("house-bully", kind=HOUSE, house_strategy="bully",
                                     sessions=service.sessions)
        stream = Stream(service, token, "1.4.0")
        try:
            assert row(service.sessions, a).version == "1.4.0"
            m = new_match(service, a, house.id)
            assert seat_versions(service, m.match_id) == ("1.4.0", "bully")
            assert list(m.bot_versions) == ["1.4.0", "bully"]  # the Match says it too
            m = new_match(service, silent, a)
            assert seat_versions(service, m.match_id) == (None, "1.4.0")
            assert list(m.bot_versions) == ["", "1.4.0"]
            # a later Hello on the same stream: what it says counts from now on
            stream.hello("1.5.0")
            wait_for(lambda: row(service.sessions, a).version == "1.5.0")
            m2 = new_match(service, house.id, a)
            assert seat_versions(service, m2.match_id) == ("bully", "1.5.0")
            assert seat_versions(service, m.match_id) == (None, "1.4.0")  # an older match keeps its
            # the same version again writes nothing new and changes nothing
            stream.hello("1.5.0")
            assert row(service.sessions, a).version == "1.5.0"
        finally:
            stream.close()
        wait_for(lambda: row(service.sessions, a).connected_since is None)
        assert row(service.sessions, a).version == "1.5.0"  # kept after it disconnects
        # a stream that says no version (an empty one, or no Hello): the bot runs none now
        for said in ("", None):
            Stream(service, token, "2.0").close()
            wait_for(lambda: row(service.sessions, a).version == "2.0")
            stream = Stream(service, token, said)
            try:
                wait_for(lambda: row(service.sessions, a).version is None)
                m = new_match(service, a, house.id)
                assert seat_versions(service, m.match_id) == (None, "bully")
            finally:
                stream.close()


def test_a_version_written_in_an_outage_is_written_by_the_next_heartbeat(postgres_sessions):
    """The database is down when a stream opens: the open is logged and the heartbeat writes
    the version as soon as the database answers again (as it does for what the bot takes)."""
    url, sessions = postgres_sessions
    bot, _ = bots.register_bot("flaky", sessions=sessions)
    with Proxy(("127.0.0.1", make_url(url).port or 5432)) as proxy:
        through = make_url(url).set(port=proxy.port).render_as_string(hide_password=False)
        engine = make_engine(through, pool_pre_ping=True)
        presence = Presence(sessionmaker(bind=engine, expire_on_commit=False), heartbeat_s=0.2)
        try:
            key = presence.opened(bot.id, version="1.0")
            wait_for(lambda: row(sessions, bot.id).version == "1.0")
            proxy.down()
            assert not presence.changed(bot.id, key, ACCEPTS_ALL, version="2.0")  # refused
            assert row(sessions, bot.id).version == "1.0"
            proxy.restore()
            wait_for(lambda: row(sessions, bot.id).version == "2.0")
        finally:
            presence.closed(bot.id, key)
            presence.stop()
            engine.dispose()
