"""A version test end to end: one bot runs two versions as two kit processes (a random policy
labelled 1.9, the greedy example bot labelled 2.0), each with its own Play stream; the
candidate 2.0 is tested against 1.9 over the real service (gRPC, bot token), played by a
real Celery worker with beat (real Redis, real PostgreSQL). The test ends H1 for the stronger
one, with its numbers in GetTest, in `bummerl test show` and on the dashboard's page. And a
house bot as the baseline, its moves made by the worker, for a fixed number of games."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import replace

import grpc
from bummerl.v1 import match_pb2, versiontest_pb2, versiontest_pb2_grpc
from housekit import HOUSE_CONFIG, HOUSE_TOKEN, announce_on
from sqlalchemy import select

from client.runner import Runner
from db.models import HOUSE, ORIGIN_TEST, Bot, Match
from db.pairs import OPEN as PAIR_OPEN
from db.pairs import DuplicatePair
from db.versiontests import BotVersion
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot
from services.api.server import create_server
from services.ops import bots
from workers import procs
from workers.testing import redis_site, wait_until


def test_the_stronger_version_is_accepted_h1(postgres_sessions, redis_url, tmp_path):
    url, sessions = postgres_sessions
    _app, broker_env = redis_site(redis_url)
    bot, token = bots.register_bot("mybot", sessions=sessions)
    config = replace(HOUSE_CONFIG, heartbeat_s=1.0)
    server = create_server("127.0.0.1:0", sessions=sessions, config=config).start()
    runners = [Runner(RandomBot(7), server.address, token or "", version="1.9"),
               Runner(SimpleBot(), server.address, token or "", version="2.0")]
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for thread in threads:
        thread.start()
    env = {"DATABASE_URL": url, **broker_env, "BUMMERL_SERVICE_ADDRESS": server.address,
           "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN, "BUMMERL_HEARTBEAT_S": "1",
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_TESTS_EVERY": "0.5",
           "BUMMERL_LADDER_EVERY": "30", "BUMMERL_SWEEP_EVERY": "30"}
    worker = None
    channel = grpc.insecure_channel(server.address)
    stub = versiontest_pb2_grpc.VersionTestServiceStub(channel)
    auth = (("authorization", f"Bearer {token}"),)
    try:
        def both_seen() -> bool:
            with sessions() as s:
                return len(list(s.scalars(select(BotVersion).where(
                    BotVersion.bot_id == bot.id, BotVersion.open_streams > 0)))) == 2

        wait_until(both_seen, 30, every=0.1, what="both versions connected")
        began = time.monotonic()
        started = stub.StartTest(versiontest_pb2.StartTestRequest(
            candidate="mybot@2.0", baseline="mybot@1.9", elo0=0, elo1=200, concurrency=2,
            time_control=match_pb2.TimeControl(move_ms=2000, bank_ms=5000)), metadata=auth)
        test_id = started.test.test_id
        assert started.test.state == versiontest_pb2.TEST_STATE_WAITING
        worker = procs.start_worker(env, concurrency=2, beat=True,
                                    logfile=tmp_path / "worker.log")

        def decided() -> versiontest_pb2.VersionTest | None:
            test = stub.GetTest(versiontest_pb2.GetTestRequest(test_id=test_id),
                                metadata=auth).test
            return test if test.state not in (versiontest_pb2.TEST_STATE_WAITING,
                                              versiontest_pb2.TEST_STATE_RUNNING) else None

        try:
            test = wait_until(decided, 90, every=0.5, what="the test's decision")
        except AssertionError as e:
            log = (tmp_path / "worker.log").read_text()[-3000:]
            raise AssertionError(f"{e}; runners {[r.stats for r in runners]}; worker log:\n"
                                 f"{log}") from None
        print(f"decided {versiontest_pb2.TestState.Name(test.state)} after "
              f"{test.lost_both}/{test.split}/{test.won_both} pairs (lost both/split/won "
              f"both), LLR {test.llr:.2f} >= {test.llr_upper:.2f}, "
              f"{time.monotonic() - began:.1f} s after StartTest")
        assert test.state == versiontest_pb2.TEST_STATE_H1, test
        pairs = test.lost_both + test.split + test.won_both
        assert pairs >= 2 and test.won_both > test.lost_both, test
        assert test.llr >= test.llr_upper > 0
        assert test.score > 0.5 and test.score_low <= test.score <= test.score_high
        assert test.candidate.mean_think_ms > 0 and test.baseline.mean_think_ms > 0
        with sessions() as s:
            legs = list(s.scalars(select(Match).where(Match.origin == ORIGIN_TEST,
                                                      Match.event_id == test_id)).unique())
        assert legs and all(m.bot0_id == m.bot1_id == bot.id and not m.rated for m in legs)
        # each leg seats both versions: the candidate's seat is the leg (bot a in seat 0 first)
        assert all({m.version0, m.version1} == {"2.0", "1.9"} for m in legs)
        assert all((m.version0 if m.pair_leg == 0 else m.version1) == "2.0" for m in legs)

        def all_settled() -> bool:  # pairs in play at the decision are played out and settled
            with sessions() as s:
                return not list(s.scalars(select(DuplicatePair).where(
                    DuplicatePair.owner_id == test_id, DuplicatePair.state.in_(PAIR_OPEN))))

        wait_until(all_settled, 90, every=0.2, what="the test's last pairs settled")
        after = stub.GetTest(versiontest_pb2.GetTestRequest(test_id=test_id),
                             metadata=auth).test
        assert after.llr == test.llr and after.won_both == test.won_both  # not counted

        shown = subprocess.run(
            [sys.executable, "-m", "cli.main", "test", "show", str(test_id), "--server",
             server.address, "--token", token or ""], capture_output=True, text=True,
            timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert f"test {test_id}: H1" in shown.stdout
        assert f"split {test.split}, won both {test.won_both}" in shown.stdout
        assert f"LLR        {test.llr:+.2f}" in shown.stdout

        from web import create_app

        app = create_app({"DATABASE_URL": url, "TESTING": True})
        page = app.test_client().get(f"/tests/{test_id}")
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        assert "mybot@2.0" in html and "H1" in html and f"{test.llr:+.2f}" in html
    finally:
        for runner in runners:
            runner.stop()
        if worker is not None:
            procs.stop(worker)
        channel.close()
        server.stop()


def test_a_house_baseline_plays_a_fixed_number_of_games(postgres_sessions, redis_url, tmp_path,
                                                        monkeypatch):
    """A house bot as the baseline (no version): its seats are played by the worker's house
    moves; `--games 4` without an SPRT plays two pairs and ends capped."""
    url, sessions = postgres_sessions
    app, broker_env = redis_site(redis_url)
    announce_on(app, monkeypatch)
    bots.register_bot("house-random", kind=HOUSE, house_strategy="random", sessions=sessions)
    _, token = bots.register_bot("mybot", sessions=sessions)
    config = replace(HOUSE_CONFIG, heartbeat_s=1.0)
    server = create_server("127.0.0.1:0", sessions=sessions, config=config).start()
    runner = Runner(SimpleBot(), server.address, token or "", version="2.0")
    threading.Thread(target=runner.run, daemon=True).start()
    env = {"DATABASE_URL": url, **broker_env, "BUMMERL_SERVICE_ADDRESS": server.address,
           "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN, "BUMMERL_HEARTBEAT_S": "1",
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_TESTS_EVERY": "0.5",
           "BUMMERL_LADDER_EVERY": "30", "BUMMERL_SWEEP_EVERY": "30"}
    worker = None
    channel = grpc.insecure_channel(server.address)
    stub = versiontest_pb2_grpc.VersionTestServiceStub(channel)
    auth = (("authorization", f"Bearer {token}"),)
    try:
        def seen() -> bool:
            with sessions() as s:
                return s.get(BotVersion, (runner_bot(sessions), "2.0")) is not None

        wait_until(seen, 30, every=0.1, what="mybot@2.0 connected")
        test_id = stub.StartTest(versiontest_pb2.StartTestRequest(
            candidate="mybot@2.0", baseline="house-random", games=4,
            time_control=match_pb2.TimeControl(move_ms=2000, bank_ms=5000)),
            metadata=auth).test.test_id
        worker = procs.start_worker(env, concurrency=2, beat=True,
                                    logfile=tmp_path / "worker.log")

        def ended() -> versiontest_pb2.VersionTest | None:
            test = stub.GetTest(versiontest_pb2.GetTestRequest(test_id=test_id),
                                metadata=auth).test
            return test if test.state == versiontest_pb2.TEST_STATE_CAPPED else None

        try:
            test = wait_until(ended, 90, every=0.5, what="the test capped")
        except AssertionError as e:
            log = (tmp_path / "worker.log").read_text()[-3000:]
            raise AssertionError(f"{e}; runner {runner.stats}; worker log:\n{log}") from None
        assert not test.sprt and test.max_games == 4
        assert test.lost_both + test.split + test.won_both == 2
        assert test.baseline.bot_name == "house-random" and test.baseline.version == ""
        assert test.baseline.mean_think_ms > 0 and test.candidate.mean_think_ms > 0
    finally:
        runner.stop()
        if worker is not None:
            procs.stop(worker)
        channel.close()
        server.stop()


def runner_bot(sessions) -> int:
    with sessions() as s:
        return s.scalar(select(Bot.id).where(Bot.name == "mybot"))
