"""The version tests' step (`workers.versiontests`) against a real engine service (in this
process, over gRPC with the house token), on SQLite and PostgreSQL: a test waits while a side
is not connected with its version and times out after the wait setting; a fixed number of
games is played in whole pairs; a side that disconnects mid-pair forfeits its matches on time
and the pair counts as played; counting again changes nothing; a stopped test voids every
open pair at once (those being played too), and a pair left open after its test ended is voided
by the next step."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import timedelta

import pytest
from housekit import HOUSE_CONFIG, HOUSE_TOKEN
from servicekit import fresh_database, running_service
from sqlalchemy import select

from client import Runner
from db.base import utcnow
from db.models import FORFEIT_TIMEOUT, ORIGIN_TEST, RUNNING, Match
from db.pairs import OWNER_TEST, VOID, DuplicatePair
from db.versiontests import CAPPED, TIMED_OUT, WAITING, BotVersion, VersionTest
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot
from services.ops import versiontests as ops
from workers import versiontests
from workers.service import Service
from workers.testing import wait_until

CONFIG = replace(HOUSE_CONFIG, heartbeat_s=1.0, test_wait_s=30.0)


@pytest.fixture(params=["sqlite", "postgres"])
def site(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, CONFIG) as svc:
        client = Service(svc.server.address, HOUSE_TOKEN)
        yield svc, client
        client.channel.close()


class SlowRandomBot(RandomBot):
    """A random bot that thinks 20 ms a move: a match of it lasts a second or two, so it can be
    left in the middle of one."""

    def act(self, observation):
        time.sleep(0.02)
        return super().act(observation)


def run(service, token: str, version: str, bot=None) -> Runner:
    runner = Runner(bot or RandomBot(3), service.server.address, token, version=version)
    threading.Thread(target=runner.run, daemon=True).start()

    def seen() -> bool:
        with service.sessions() as s:
            row = s.get(BotVersion, (runner_bot_id(service, token), version))
            return row is not None and row.open_streams > 0

    wait_until(seen, 20, every=0.05, what=f"version {version} connected")
    return runner


def runner_bot_id(service, token: str) -> int:
    from services.ops import bots

    return bots.bot_for_token(token, sessions=service.sessions).id


def row_of(service, test_id: int) -> VersionTest:
    with service.sessions() as s:
        test = s.get(VersionTest, test_id)
        assert test is not None
        s.expunge(test)
        return test


def tick(service, client, now=None) -> dict[int, str]:
    return versiontests.tick(service.sessions, client, CONFIG, now=now)


def test_a_side_not_connected_waits_then_times_out(site):
    service, client = site
    _, token = service.register("mybot")
    old = run(service, token, "1.9")
    new = run(service, token, "2.0")
    test_id = ops.start_test(token, "mybot@2.0", "mybot@1.9", sessions=service.sessions,
                             config=CONFIG).test.id
    new.stop()

    def gone() -> bool:  # the service has seen 2.0's stream close (a tick before it would pair)
        with service.sessions() as s:
            row = s.get(BotVersion, (runner_bot_id(service, token), "2.0"))
            return row is None or row.open_streams == 0

    wait_until(gone, 20, every=0.05, what="version 2.0 disconnected")
    wait_until(lambda: tick(service, client) == {test_id: WAITING}, 20, every=0.2,
               what="the test waits for mybot@2.0")
    waiting = row_of(service, test_id)
    assert "waiting for mybot@2.0 to connect" in (waiting.reason or "")
    with service.sessions() as s:  # nothing is played while it waits
        assert not list(s.scalars(select(DuplicatePair).where(DuplicatePair.owner_id
                                                              == test_id)))
    later = utcnow() + timedelta(seconds=CONFIG.test_wait_s + 1)
    assert tick(service, client, now=later) == {test_id: TIMED_OUT}
    ended = row_of(service, test_id)
    assert ended.state == TIMED_OUT and "did not connect within 30 s" in (ended.reason or "")
    assert tick(service, client) == {}  # an ended test is left alone
    old.stop()


def test_a_fixed_number_of_games_and_a_disconnect_mid_pair(site):
    service, client = site
    bot_id, token = service.register("mybot")
    old = run(service, token, "1.9", SlowRandomBot(5))
    new = run(service, token, "2.0", SimpleBot())
    summary = ops.start_test(token, "mybot@2.0", "mybot@1.9", games=3, move_ms=400,
                             bank_ms=400, sessions=service.sessions, config=CONFIG)
    test_id = summary.test.id
    assert summary.test.max_pairs == 2  # 3 games: two whole pairs

    def second_pair_playing() -> bool:
        tick(service, client)
        with service.sessions() as s:
            pairs = list(s.scalars(select(DuplicatePair).where(
                DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test_id)
                .order_by(DuplicatePair.board)))
            if [p.state for p in pairs][:2] != ["done", "playing"]:
                return False
            leg = s.get(Match, pairs[1].match_a_id) if pairs[1].match_a_id else None
            return leg is not None and leg.state == RUNNING

    wait_until(second_pair_playing, 60, every=0.05,
               what="the first pair played, the second's first leg on")
    old.stop()  # the baseline's process goes away in the middle of the second pair
    # Leg 0 of the second pair is played out (1.9's seat forfeits on time); leg 1, made only
    # once leg 0 has ended (docs/events.md), needs 1.9 connected: the test waits for it.
    wait_until(lambda: tick(service, client) == {test_id: WAITING}, 60, every=0.2,
               what="the test waiting for 1.9 to come back")

    def first_leg_over() -> bool:
        with service.sessions() as s:
            pair = s.scalars(select(DuplicatePair).where(
                DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test_id)
                .order_by(DuplicatePair.board).offset(1)).first()
            leg = s.get(Match, pair.match_a_id)
            return leg.state != RUNNING and pair.match_b_id is None

    wait_until(first_leg_over, 30, every=0.1, what="the first leg forfeited, no second leg")
    old = run(service, token, "1.9", SlowRandomBot(5))  # back within BUMMERL_TEST_WAIT_S
    wait_until(lambda: tick(service, client).get(test_id, CAPPED) == CAPPED, 60, every=0.2,
               what="the second pair completed, the test capped")
    test = row_of(service, test_id)
    with service.sessions() as s:
        legs = list(s.scalars(select(Match).where(Match.origin == ORIGIN_TEST,
                                                  Match.event_id == test_id)).unique())
        pairs = list(s.scalars(select(DuplicatePair).where(DuplicatePair.owner_id == test_id)))
    counted = [p for p in pairs if p.state != VOID]
    assert all(m.bot0_id == m.bot1_id == bot_id for m in legs)
    # the pair in play when 1.9 left was completed (its first leg with 1.9's seat forfeited on
    # time, its second once 1.9 was back), and counted as played
    assert test.state == CAPPED and test.pairs == 2 and len(counted) == 2
    assert any(m.end_reason == FORFEIT_TIMEOUT for m in legs), [m.end_reason for m in legs]
    assert "4 games played" in (test.reason or "")
    # counting again from the database changes nothing
    before = (test.lost_both, test.split, test.won_both)
    tick(service, client)
    after = row_of(service, test_id)
    assert (after.lost_both, after.split, after.won_both) == before
    new.stop()
    old.stop()


def test_an_ended_test_leaves_no_pair_open(site):
    """The test ends while a pair plays: that pair is void at once (not counted); a pair
    left open by another path after the test ended (here written back by hand) is made void
    by the next step (`workers.pairs.void_orphans`)."""
    service, client = site
    _, token = service.register("mybot")
    old = run(service, token, "1.9", SlowRandomBot(5))
    new = run(service, token, "2.0", SimpleBot())
    test_id = ops.start_test(token, "mybot@2.0", "mybot@1.9", move_ms=2000, bank_ms=2000,
                             sessions=service.sessions, config=CONFIG).test.id

    def pairs_of() -> list[DuplicatePair]:
        with service.sessions() as s:
            rows = list(s.scalars(select(DuplicatePair).where(
                DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test_id)))
            s.expunge_all()
        return rows

    wait_until(lambda: tick(service, client) and any(p.state == "playing" for p in pairs_of()),
               30, every=0.1, what="a pair playing")
    ops.stop_test(token, test_id, "enough", sessions=service.sessions, config=CONFIG)
    assert {p.state for p in pairs_of()} == {VOID}
    assert row_of(service, test_id).voided == len(pairs_of())
    playing = pairs_of()[0].id
    with service.sessions.begin() as s:  # a pair left open after the end, by any path
        s.get(DuplicatePair, playing).state = "playing"  # type: ignore[union-attr]
    tick(service, client)
    assert {p.state for p in pairs_of()} == {VOID}
    new.stop()
    old.stop()
