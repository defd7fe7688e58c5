"""Metrics (prometheus-client) of the service, the workers and the dashboard, each served on its
own BUMMERL_METRICS_PORT by the real processes; the service's gRPC health follows the database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
from celery import Celery
from faultproxy import Proxy
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY, CollectorRegistry
from servicekit import CONFIG, fresh_database, play_in_threads, running_service
from test_client_cli import free_port

import engine
from examples.random_bot import RandomBot
from services.api.server import create_server
from services.core import actions, metrics
from services.core import matches as plain_matches
from services.core.errors import FailedPrecondition
from workers import metrics as worker_metrics

ROOT = Path(__file__).resolve().parents[2]


def value(name: str, labels: dict[str, str] | None = None,
          registry: CollectorRegistry = REGISTRY) -> float:
    return registry.get_sample_value(name, labels or {}) or 0.0


def scrape(port: int, timeout: float = 60) -> str:
    """GET /metrics on `port`, retrying while the process starts."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
                return reply.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_the_service_counts_actions_turns_and_results(request, tmp_path):
    before = {name: value(name) for name in (
        "bummerl_actions_applied_total", "bummerl_turns_pushed_total",
        "bummerl_action_seconds_count", "bummerl_illegal_actions_total")}
    played = value("bummerl_matches_finished_total", {"reason": "played"})
    illegal = value("bummerl_forfeits_total", {"reason": "forfeit_illegal"})
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        ids = [service.register(name) for name in ("m0", "m1")]
        plain_matches.create_match([ids[0][0], ids[1][0]], sessions=service.sessions,
                                   config=service.config)
        play_in_threads(service, [(RandomBot(), ids[0][1]), (RandomBot(), ids[1][1])], 1)
        applied = value("bummerl_actions_applied_total") - before["bummerl_actions_applied_total"]
        assert applied >= 10
        assert value("bummerl_turns_pushed_total") - before["bummerl_turns_pushed_total"] \
            >= applied
        assert value("bummerl_action_seconds_count") - before["bummerl_action_seconds_count"] \
            >= applied
        assert value("bummerl_matches_finished_total", {"reason": "played"}) == played + 1
        # an illegal action is counted; max_illegal of them forfeit the match
        m = plain_matches.create_match([ids[0][0], ids[1][0]], max_illegal=1,
                                       sessions=service.sessions, config=service.config)
        game = engine.Match(m.seed, m.profile)
        holding = set(game.observe(m.to_act).hand)
        bad = engine.Action.play(next(c for c in engine.ALL_CARDS if c not in holding))
        with pytest.raises(FailedPrecondition):
            actions.submit_action(m.id, m.to_act, bad, expected_seq=0,
                                  sessions=service.sessions, config=service.config)
        assert value("bummerl_illegal_actions_total") \
            == before["bummerl_illegal_actions_total"] + 1
        assert value("bummerl_forfeits_total", {"reason": "forfeit_illegal"}) == illegal + 1
        # running matches are read from the database at scrape time
        registry = CollectorRegistry()
        registry.register(metrics.RunningMatches(service.sessions))
        plain_matches.create_match([ids[0][0], ids[1][0]], sessions=service.sessions,
                                   config=service.config)
        assert value("bummerl_matches_running", registry=registry) == 1


def test_bummerl_serve_serves_metrics_on_its_metrics_port(tmp_path):
    # Port 0 for both, read back from the log: a port picked beforehand can be taken meanwhile
    # (e.g. as the local port of another test's connection), and serve would exit.
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'm.sqlite3'}",
           "BUMMERL_HOOKS": "", "BUMMERL_METRICS_PORT": "0", "PYTHONPATH": str(ROOT)}
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "serve", "--address", "127.0.0.1:0"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"metrics on :(\d+)/metrics", log.read_text())):
            assert server.poll() is None, "serve exited: " + log.read_text()[-3000:]
            assert time.monotonic() < deadline, "no metrics port: " + log.read_text()[-3000:]
            time.sleep(0.1)
        metrics_port = int(found.group(1))
        while "bummerl_matches_running 0.0" not in (text := scrape(metrics_port)):
            assert time.monotonic() < deadline, "no bummerl_matches_running (migrated?)"
            time.sleep(0.2)
        assert "bummerl_actions_applied_total" in text and "bummerl_action_seconds_bucket" in text
    finally:
        server.terminate()
        server.wait(30)


def test_bad_metrics_port_is_named(monkeypatch):
    monkeypatch.setenv("BUMMERL_METRICS_PORT", "http")
    with pytest.raises(ValueError, match="BUMMERL_METRICS_PORT must be a port number"):
        metrics.start_from_env()
    monkeypatch.delenv("BUMMERL_METRICS_PORT")
    assert metrics.start_from_env() is None


def test_worker_task_metrics_and_queue_depth(redis_url):
    import redis

    app = Celery("metrics-test", broker="memory://")
    app.conf.task_always_eager = True

    @app.task(name="test.fine")
    def fine() -> int:
        return 1

    @app.task(name="test.broken")
    def broken() -> None:
        raise RuntimeError("broken on purpose")

    runs = value("bummerl_task_seconds_count", {"task": "test.fine"})
    failures = value("bummerl_task_failures_total", {"task": "test.broken"})
    fine.apply()
    fine.apply()
    broken.apply()
    assert value("bummerl_task_seconds_count", {"task": "test.fine"}) == runs + 2
    assert value("bummerl_task_failures_total", {"task": "test.broken"}) == failures + 1

    deals = value("bummerl_simulation_deals_total")
    worker_metrics.deals_played(200, 0.5)
    assert value("bummerl_simulation_deals_total") == deals + 200
    assert value("bummerl_simulation_deals_per_second") == 400

    client = redis.Redis.from_url(redis_url)
    client.rpush("test-prefix:moves", "a", "b", "c")
    client.rpush("test-prefix:batch", "x")
    registry = CollectorRegistry()
    registry.register(worker_metrics.QueueDepth(redis_url, "test-prefix:"))
    assert value("bummerl_queue_depth", {"queue": "moves"}, registry) == 3
    assert value("bummerl_queue_depth", {"queue": "batch"}, registry) == 1
    client.close()


def test_a_real_worker_serves_metrics_on_its_metrics_port(redis_url, tmp_path):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'w.sqlite3'}",
           "BUMMERL_BROKER_URL": redis_url, "BUMMERL_BROKER_PREFIX": "metrics-test:",
           "BUMMERL_METRICS_PORT": str(port), "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"),
           "PYTHONPATH": str(ROOT)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    worker = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "worker", "-Q", "batch", "-c", "1", "-n", "metrics"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        text = scrape(port, timeout=90)
        assert 'bummerl_queue_depth{queue="moves"}' in text
        assert 'bummerl_queue_depth{queue="batch"}' in text
    finally:
        worker.terminate()
        worker.wait(60)


def test_the_dashboard_serves_its_own_metrics_on_its_own_port(tmp_path):
    web_port, metrics_port = free_port(), free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}",
           "BUMMERL_METRICS_PORT": str(metrics_port), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "db.migrate"], cwd=ROOT, env=env, check=True,
                   timeout=120)
    web = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "web", "--port", str(web_port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        scrape(metrics_port)
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/healthz", timeout=10) as r:
            assert r.status == 200
        text = scrape(metrics_port)
        assert 'bummerl_web_requests_total{method="GET",status="200"}' in text
        # only the web's own metrics (issue 44): not the service's counters, which the web
        # process never increments and would export stuck at 0
        names = {line.split("{")[0].split(" ")[0] for line in text.splitlines()
                 if line.startswith("bummerl_")}
        assert names and all(name.startswith("bummerl_web_") for name in names), sorted(names)
        with pytest.raises(urllib.error.HTTPError):  # not on the dashboard's port
            urllib.request.urlopen(f"http://127.0.0.1:{web_port}/metrics", timeout=10)
    finally:
        web.terminate()
        web.wait(30)


def test_grpc_health_follows_the_database(postgres_sessions, monkeypatch):
    from sqlalchemy.engine import make_url

    from db.base import make_session_factory

    target = make_url(postgres_sessions[0])
    proxy = Proxy((target.host or "127.0.0.1", target.port or 5432))
    sessions = make_session_factory(str(target.set(port=proxy.port)))
    monkeypatch.setenv("BUMMERL_HEALTH_EVERY", "0.2")
    server = create_server("127.0.0.1:0", sessions=sessions, config=CONFIG).start()
    channel = grpc.insecure_channel(server.address)
    stub = health_pb2_grpc.HealthStub(channel)

    def status() -> int:
        return stub.Check(health_pb2.HealthCheckRequest(), timeout=10).status

    def until(expected: int) -> None:
        deadline = time.monotonic() + 30
        while status() != expected:
            assert time.monotonic() < deadline, f"health did not become {expected}"
            time.sleep(0.1)

    try:
        assert status() == health_pb2.HealthCheckResponse.SERVING
        proxy.down()
        until(health_pb2.HealthCheckResponse.NOT_SERVING)
        assert stub.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=10).status \
            == health_pb2.HealthCheckResponse.SERVING  # alive all the same
        proxy.restore()
        until(health_pb2.HealthCheckResponse.SERVING)
    finally:
        channel.close()
        server.stop(grace=0)
        proxy.close()
        sessions.kw["bind"].dispose()
