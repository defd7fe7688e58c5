"""The version a bot runs (`Hello.version`), with the real server on SQLite and PostgreSQL:
recorded as `bots.version` when a stream opens and when a later Hello says another, read by
every new match into its seats' versions (a house bot's: its strategy), shown in the Match."""

from __future__ import annotations

import queue
from collections.abc import Iterator

from bummerl.v1 import bot_pb2, match_pb2
from servicekit import OPERATOR, auth, running_service
from test_service_presence import FAST, row, wait_for

from db.models import HOUSE, Match
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
