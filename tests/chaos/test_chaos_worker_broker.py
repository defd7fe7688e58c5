"""A real Celery worker whose Redis connection is cut mid-task (issue 8, item 4).

Before workers.liveness.BrokerCheck, a worker whose running tasks finished while Redis was
unreachable could not acknowledge them ("Couldn't ack"); their deliveries stayed counted against
the prefetch limit of a channel that was never replaced, and the worker took one task at a time,
or none, until restarted. Now it reconnects by itself, goes back to two tasks at a time, and its
liveness probe (`bummerl worker --check`) tells a live worker from a stuck one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from conftest import REDIS_URL, need, through
from faultproxy import PASS, PAUSE, REFUSE
from sqlalchemy import select

from db.base import make_session_factory
from db.batch import CHUNK_DONE, SimulationChunk
from db.schema import create_all
from workers import procs, simulations
from workers.app import ROOT, make_app
from workers.testing import wait_until


def running(sessions, sim_id: int) -> int:
    """Chunks a worker has started and not finished."""
    with sessions() as s:
        return len([c for c in s.scalars(select(SimulationChunk)
                                         .where(SimulationChunk.simulation_id == sim_id))
                    if c.attempts and c.state != CHUNK_DONE])


def probe(env: dict[str, str], name: str, max_age: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", "worker", "--check", "-n", name,
                           "--max-age", str(max_age)], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60)


def test_worker_reconnects_after_broker_cut(redis_proxy, postgres_database, broker_prefix,
                                            tmp_path):
    url = postgres_database
    sessions = make_session_factory(url)
    create_all(sessions)
    proxied = through(REDIS_URL, redis_proxy.port)
    app = make_app(REDIS_URL, broker_prefix)
    env = {"DATABASE_URL": url, "BUMMERL_BROKER_URL": proxied,
           "BUMMERL_BROKER_PREFIX": broker_prefix, "BUMMERL_WORKER_CHECK_S": "1",
           "BUMMERL_BROKER_TIMEOUT": "2", "BUMMERL_WORKER_HEARTBEAT": str(tmp_path / "hb"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat")}
    log = tmp_path / "worker.log"
    # Chunks of a second or more (rdeep), so two are running when the connection is cut.
    sim_id = simulations.create_simulation("bully", "rdeep", 400, seed=3, chunk_deals=4,
                                           sessions=sessions)
    worker = procs.start_worker(env, queues="batch", concurrency=2, logfile=log, name="cw")
    try:
        simulations.dispatch(sim_id, sessions, send=lambda ids: [
            app.send_task("bummerl.chunk", (i,), queue="batch") for i in ids])
        wait_until(lambda: running(sessions, sim_id) == 2, 60, every=0.05,
                   what="two chunks running at once")
        wait_until(lambda: probe(env, "cw", 10).returncode == 0, 30, every=0.5,
                   what="the worker's first heartbeat")
        # A silent outage (Redis paused: nothing answered, nothing closed) longer than a chunk,
        # so the running chunks finish while their acks cannot get through; then Redis is back.
        redis_proxy.set(PAUSE)
        time.sleep(10)
        redis_proxy.set(PASS)
        cured = time.monotonic()
        wait_until(lambda: running(sessions, sim_id) == 2, 60, every=0.05,
                   what="two chunks running at once again after the outage "
                        "(a leaked prefetch slot keeps the worker at one or none)")
        print(f"\nworker back to 2 tasks at a time {time.monotonic() - cured:.1f} s after "
              f"Redis answered again")
        wait_until(lambda: probe(env, "cw", 10).returncode == 0, 30, every=0.5,
                   what="the worker's heartbeat to be fresh again")
        # Every connection reset and new ones refused for a while: the same recovery.
        redis_proxy.set(REFUSE)
        redis_proxy.cut()
        time.sleep(6)
        redis_proxy.set(PASS)
        cured = time.monotonic()
        wait_until(lambda: running(sessions, sim_id) == 2, 60, every=0.05,
                   what="two chunks running at once after Redis came back")
        print(f"worker back to 2 tasks at a time {time.monotonic() - cured:.1f} s after "
              f"Redis came back")
        # The probe tells a stuck worker: stop its main process (no event loop, no heartbeat).
        os.kill(worker.pid, signal.SIGSTOP)
        try:
            stuck = wait_until(lambda: probe(env, "cw", 3).returncode == 1 and True, 30,
                               every=0.5, what="the probe to fail for a stopped worker")
            assert stuck
        finally:
            os.kill(worker.pid, signal.SIGCONT)
        wait_until(lambda: probe(env, "cw", 3).returncode == 0, 30, every=0.5,
                   what="the probe to pass again")
    finally:
        redis_proxy.set(PASS)
        procs.stop(worker)
        sessions.kw["bind"].dispose()


@pytest.mark.redis
def test_broker_check_sees_a_leaked_prefetch_slot(broker_prefix, tmp_path, monkeypatch):
    """The leak itself, made on purpose on a real Redis channel: a delivery the worker does not
    account for (its ack was lost) makes the check raise a connection error on its second
    sighting, so Celery reconnects; once acknowledged the check passes and writes the
    heartbeat."""
    need(6379, "Redis")
    from kombu import Connection, Consumer, Producer, Queue

    from workers.liveness import BrokerCheck, BrokerLost, check

    monkeypatch.setenv("BUMMERL_WORKER_HEARTBEAT", str(tmp_path / "hb"))
    connection = Connection(REDIS_URL, transport_options={"global_keyprefix": broker_prefix})
    try:
        channel = connection.channel()
        queue = Queue("leak", channel=channel, routing_key="leak")
        queue.declare()
        Producer(channel).publish({"n": 1}, routing_key="leak", declare=[queue])
        delivered = []
        consumer = Consumer(channel, [queue], callbacks=[lambda body, m: delivered.append(m)])
        channel.basic_qos(0, 2, False)
        consumer.consume()
        connection.drain_events(timeout=10)
        assert len(delivered) == 1
        parent = SimpleNamespace(connection=connection, task_consumer=consumer, hub=None,
                                 hostname="leak@test")
        step = BrokerCheck(parent)
        step.check(parent)  # one sighting may be a delivery in flight
        with pytest.raises(BrokerLost, match="1 prefetch slot"):
            step.check(parent)
        assert not check("leak", 60)[0], "no heartbeat while a slot is leaked"
        delivered[0].ack()
        step.check(parent)
        step.check(parent)
        alive, message = check("leak", 60)
        assert alive, message
    finally:
        connection.release()
