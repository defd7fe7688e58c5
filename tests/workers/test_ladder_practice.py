"""A bot connected for challenges only (issue 22) is never paired by the ladder, with the real
server and the client kit, on SQLite and PostgreSQL: the ladder leaves it out, the service
refuses a pairing decided on a stale read, and challenges still reach it."""

from __future__ import annotations

import dataclasses
import random
import threading
import time

import pytest
from servicekit import CONFIG, OPERATOR, fresh_database, running_service
from sqlalchemy import select

from client import Runner
from client.challenge import challenge
from db.models import HOUSE, Bot, Match
from examples.random_bot import RandomBot
from services.core import hooks
from services.ops import bots
from workers import ladder
from workers import service as house_service

# a heartbeat that a loaded machine keeps: the bots stay connected throughout
STEADY = dataclasses.replace(CONFIG, heartbeat_s=2.0)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no queue here
    monkeypatch.setattr(hooks, "on_match_end", [])
    with fresh_database(request.param, request, tmp_path) as db:
        yield db


def connect(runner: Runner) -> threading.Thread:
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while runner.stats.connections == 0:
        assert thread.is_alive() and time.monotonic() < deadline, "the bot did not connect"
        time.sleep(0.01)
    return thread


def test_a_bot_connected_for_challenges_only_gets_no_ladder_match(database, monkeypatch):
    with running_service(database, STEADY) as service:
        # the ladder creates its matches over gRPC, as on a worker
        monkeypatch.setenv("BUMMERL_SERVICE_ADDRESS", service.server.address)
        monkeypatch.setenv("BUMMERL_HOUSE_TOKEN", OPERATOR)
        monkeypatch.setattr(house_service, "_service", None)
        house, _ = bots.register_bot("house-random", kind=HOUSE, house_strategy="random",
                                     sessions=service.sessions)
        p_id, p_token = service.register("practiser")
        o_id, o_token = service.register("open")
        practiser = Runner(RandomBot(1), service.server.address, p_token, max_matches=1,
                           challenges_only=True)
        other = Runner(RandomBot(2), service.server.address, o_token)
        threads = [connect(practiser), connect(other)]
        try:
            with service.sessions() as s:
                eligible = [b.id for b in ladder.eligible_bots(s, "soft", STEADY.heartbeat_s)]
            assert eligible == [house.id, o_id]  # the open bot is the ladder's; the other not
            started = ladder.start_matches("soft", 5, service.sessions, random.Random(1))
            assert len(started) == 1  # house against the open bot: the only pair
            # a ladder that read the presence before the bot said so: the service refuses it
            with service.sessions() as s:
                everyone = list(s.scalars(select(Bot).order_by(Bot.id)))
            monkeypatch.setattr(ladder, "eligible_bots", lambda *_args, **_kw: everyone)
            for seed in range(5):
                ladder.start_matches("soft", 5, service.sessions, random.Random(seed))
            with service.sessions() as s:
                seats = [(m.bot0_id, m.bot1_id) for m in s.scalars(select(Match))]
            assert seats and not [pair for pair in seats if p_id in pair]
            # a challenge still reaches it, and it plays it out (then --matches 1 ends it)
            challenge(service.channel, o_token, "practiser", 1)
            threads[0].join(60)
            assert not threads[0].is_alive(), "the challenges-only bot did not finish"
            assert practiser.stats.matches_won + practiser.stats.matches_lost == 1
        finally:
            practiser.stop()
            other.stop()
