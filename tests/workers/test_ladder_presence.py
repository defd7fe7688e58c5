"""The ladder fields a remote bot only while it is connected (a fresh presence heartbeat), on
SQLite and PostgreSQL; and with the real server, a bot's Play stream is what makes it eligible."""

from __future__ import annotations

import dataclasses
import random
import time
from datetime import UTC, datetime, timedelta

import pytest
from housekit import create_in_process
from servicekit import CONFIG, fresh_database, running_service
from sqlalchemy import update
from test_service_presence import Stream, aware, row, wait_for

from db.models import HOUSE, Bot, Match
from services.core import hooks
from services.live.presence import STALE_BEATS
from services.ops import bots
from workers import ladder

HEARTBEAT = 0.2


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no queue here
    monkeypatch.setattr(hooks, "on_match_end", [])
    with fresh_database(request.param, request, tmp_path) as db:
        db.create_tables()
        yield db


def seen(sessions, bot_id: int, connected_since: datetime | None, last_seen_at: datetime | None
         ) -> None:  # type: ignore[no-untyped-def]
    with sessions.begin() as s:
        s.execute(update(Bot).where(Bot.id == bot_id)
                  .values(connected_since=connected_since, last_seen_at=last_seen_at))


def test_only_connected_remote_bots_are_fielded(database, monkeypatch):
    sessions = database.sessions()
    create_in_process(monkeypatch, sessions)
    try:
        house, _ = bots.register_bot("house", kind=HOUSE, house_strategy="random",
                                     sessions=sessions)
        connected, _ = bots.register_bot("connected", sessions=sessions)
        gone, _ = bots.register_bot("gone", sessions=sessions)  # disconnected cleanly
        stale, _ = bots.register_bot("stale", sessions=sessions)  # its server crashed
        never, _ = bots.register_bot("never", sessions=sessions)  # never connected
        now = datetime.now(UTC)
        old = now - timedelta(seconds=STALE_BEATS * 5 + 1)
        seen(sessions, connected.id, now - timedelta(hours=1), now)
        seen(sessions, gone.id, None, now)
        seen(sessions, stale.id, now - timedelta(hours=1), old)
        with sessions() as s:
            eligible = [b.id for b in ladder.eligible_bots(s, "soft", heartbeat_s=5)]
        assert eligible == [house.id, connected.id]
        # the pairing: the only pair is the house bot and the connected bot, once
        started = ladder.start_matches("soft", 3, sessions, random.Random(4))
        assert len(started) == 1
        with sessions() as s:
            m = s.get(Match, started[0])
            assert m is not None and {m.bot0_id, m.bot1_id} == {house.id, connected.id}
            # busy with its ladder match: not fielded again meanwhile
            assert [b.id for b in ladder.eligible_bots(s, "soft", heartbeat_s=5)] == [house.id]
        assert never.id not in eligible
    finally:
        sessions.kw["bind"].dispose()


def test_a_play_stream_makes_a_bot_eligible_until_it_closes(database):
    config = dataclasses.replace(CONFIG, heartbeat_s=HEARTBEAT)
    with running_service(database, config) as service:
        a_id, a_token = service.register("a")
        b_id, _ = service.register("b")

        def eligible() -> list[int]:
            with service.sessions() as s:
                return [b.id for b in ladder.eligible_bots(s, "soft", heartbeat_s=HEARTBEAT)]

        assert eligible() == []
        stream = Stream(service, a_token)
        try:
            assert eligible() == [a_id]
            time.sleep(STALE_BEATS * HEARTBEAT + 0.1)  # kept by the heartbeat
            mark = datetime.now(UTC)
            wait_for(lambda: aware(row(service.sessions, a_id).last_seen_at) >= mark)
            assert eligible() == [a_id]
        finally:
            stream.close()
        wait_for(lambda: eligible() == [])
        assert b_id not in eligible()
