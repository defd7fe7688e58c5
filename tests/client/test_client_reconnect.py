"""The kit never gives up (issue 8 item 1): it reconnects forever with capped exponential
backoff and jitter, a connection that got its Welcome resets the backoff, and every reconnect is
logged. A stand-in BotService on a real gRPC server cuts the streams."""

from __future__ import annotations

import logging
import random
import threading
import time
from concurrent import futures

import grpc
import pytest
from bummerl.v1 import bot_pb2, bot_pb2_grpc

from client import Backoff, Runner
from client.errors import TokenRefused
from examples.random_bot import RandomBot

FAST = Backoff(initial_s=0.01, max_s=0.05)


class Flaky(bot_pb2_grpc.BotServiceServicer):
    """Welcomes each stream, then ends it UNAVAILABLE; refuses all calls while `down`."""

    def __init__(self) -> None:
        self.streams = 0
        self.down = False
        self.lock = threading.Lock()

    def Play(self, request_iterator, context):  # noqa: N802
        with self.lock:
            self.streams += 1
        if self.down:
            context.abort(grpc.StatusCode.UNAVAILABLE, "database unreachable")
        next(request_iterator)
        yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(
            bot=bot_pb2.Bot(bot_id=1, name="flaky"), running_matches=0))
        context.abort(grpc.StatusCode.UNAVAILABLE, "cut")


@pytest.fixture
def flaky():
    servicer = Flaky()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    bot_pb2_grpc.add_BotServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    server.stop(grace=0)


def start(runner: Runner) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def target() -> None:
        try:
            runner.run()
        except BaseException as e:  # noqa: BLE001
            outcome["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def wait_for(condition, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_backoff_grows_caps_and_jitters():
    b = Backoff(initial_s=1, max_s=8, multiplier=2, jitter=0.5)
    rng = random.Random(1)
    for failures, top in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 8), (50, 8), (10_000, 8)]:
        waits = [b.delay(failures, rng) for _ in range(200)]
        assert all(top / 2 <= w <= top for w in waits)
        assert max(waits) - min(waits) > top / 4  # jittered, not one fixed value


def test_a_hundred_disconnects_never_end_the_bot(flaky, caplog):
    servicer, address = flaky
    runner = Runner(RandomBot(1), address, "t", backoff=FAST)
    caplog.set_level(logging.INFO, logger="bummerl.client")
    thread, outcome = start(runner)
    try:
        wait_for(lambda: servicer.streams >= 110 or not thread.is_alive())
        assert thread.is_alive(), outcome
        assert runner.stats.connections >= 100
    finally:
        runner.stop()
        thread.join(10)
    assert not thread.is_alive() and "error" not in outcome
    lost = [r for r in caplog.records if getattr(r, "event", "") == "disconnected"]
    again = [r for r in caplog.records if getattr(r, "event", "") == "reconnected"]
    assert len(lost) >= 100 and len(again) >= 99
    # each stream was a success, so every wait is the first step again (not growing to max)
    assert all(r.fields["attempt"] == 1 for r in lost)
    assert "UNAVAILABLE" in lost[0].getMessage() and address in lost[0].getMessage()


def test_a_long_outage_never_ends_the_bot_and_it_comes_back(flaky):
    servicer, address = flaky
    servicer.down = True  # like the service answering UNAVAILABLE through a database outage
    runner = Runner(RandomBot(1), address, "t", backoff=FAST)
    thread, outcome = start(runner)
    try:
        wait_for(lambda: runner.stats.reconnect_attempts >= 60)  # far beyond the old 5 tries
        assert thread.is_alive(), outcome
        assert runner.stats.connections == 0
        servicer.down = False
        wait_for(lambda: runner.stats.connections >= 1)
        assert thread.is_alive()
    finally:
        runner.stop()
        thread.join(10)
    assert "error" not in outcome


def test_nothing_listening_is_retried_too(caplog):
    import socket

    caplog.set_level(logging.INFO, logger="bummerl.client")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    runner = Runner(RandomBot(1), address, "t", backoff=FAST)
    thread, outcome = start(runner)
    try:
        wait_for(lambda: runner.stats.reconnect_attempts >= 20)
        assert thread.is_alive(), outcome
    finally:
        runner.stop()
        thread.join(10)
    lines = [r.getMessage() for r in caplog.records if getattr(r, "event", "") == "disconnected"]
    assert f"cannot reach the bummerl service at {address} (UNAVAILABLE" in lines[0]
    assert "the kit never gives up" in lines[0]


class Refusing(bot_pb2_grpc.BotServiceServicer):
    def Play(self, request_iterator, context):  # noqa: N802
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        yield  # pragma: no cover


def test_a_refused_token_ends_it_with_a_clear_error():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_pb2_grpc.add_BotServiceServicer_to_server(Refusing(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        runner = Runner(RandomBot(1), f"127.0.0.1:{port}", "wrong", backoff=FAST)
        with pytest.raises(TokenRefused, match="refused the bot token.*--token"):
            runner.run()
    finally:
        server.stop(grace=0)


class SlowRandom(RandomBot):
    def act(self, observation):
        time.sleep(0.05)  # so the match is still running when the service goes
        return super().act(observation)


def test_the_real_service_down_longer_than_the_old_kit_lasted(tmp_path, request):
    """The service is gone for 15 s mid-match (the old kit gave up after ~11 s of failures);
    both bots wait it out, reconnect and finish the match."""
    import dataclasses

    from servicekit import CONFIG, fresh_database, running_service

    from services.api.server import create_server
    from services.core import cache as game_states
    from services.core import matches as plain

    config = dataclasses.replace(CONFIG, move_ms=120_000)  # no time forfeit while it is down
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database, config) as service:
        a_id, a_token = service.register("a")
        b_id, b_token = service.register("b")
        m = plain.create_match([a_id, b_id], seed=8, sessions=service.sessions, config=config)
        address = service.server.address
        runners = [Runner(SlowRandom(i), address, token, max_matches=1,
                          backoff=Backoff(initial_s=0.1, max_s=1.0))
                   for i, token in enumerate((a_token, b_token))]
        threads = [start(r) for r in runners]
        wait_for(lambda: plain.get_match(m.id, sessions=service.sessions).seq >= 4)
        service.server.stop(grace=0)
        game_states._cache.clear()
        time.sleep(15)
        assert all(thread.is_alive() for thread, _ in threads)
        assert all(r.stats.reconnect_attempts >= 5 for r in runners)
        service.server = create_server(address, sessions=service.sessions,
                                       config=config).start()
        for thread, _ in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread, _ in threads)
        assert all("error" not in outcome for _, outcome in threads)
        final = plain.get_match(m.id, sessions=service.sessions)
        assert final.state == "finished" and final.end_reason == "played"
        assert all(r.stats.connections >= 2 for r in runners)
