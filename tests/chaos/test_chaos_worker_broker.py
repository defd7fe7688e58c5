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

from conftest import REDIS_URL, through
from proxy import PASS, PAUSE, REFUSE
from sqlalchemy import select

from db.base import create_all, make_session_factory
from db.batch import CHUNK_DONE, SimulationChunk
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
        simulations.dispatch(sim_id, sessions, lambda ids: [
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
