"""Batch simulations on a real Celery worker process with real Redis and PostgreSQL.

The crash tests SIGKILL a worker in the middle of a chunk; the simulation still finishes and
its totals equal those of the same deals played in-process: nothing lost, nothing counted twice.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from sqlalchemy import select

from bots.batch import play_deals
from db.batch import CHUNK_DONE, SimulationChunk
from workers import procs, simulations
from workers.testing import redis_site, wait_until


@pytest.fixture
def site(redis_url):
    """This test's Celery app and worker environment, in its own corner of Redis."""
    return redis_site(redis_url)


def worker_env(database_url: str, broker_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        **broker_env,
        "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat-schedule"),
        "BUMMERL_SWEEP_EVERY": "1",
        "BUMMERL_SWEEP_STALE": "3",
        "BUMMERL_LADDER_EVERY": "3600",
    }


def send_with(app):
    """A chunk sender for the test process, on the test's broker."""

    def send(ids: list[int]) -> None:
        for chunk_id in ids:
            app.send_task("bummerl.chunk", (chunk_id,), queue="batch")

    return send


def chunks(sessions) -> list[SimulationChunk]:
    with sessions() as s:
        return list(s.scalars(select(SimulationChunk).order_by(SimulationChunk.number)))


def test_simulation_on_a_worker(postgres_sessions, site, tmp_path):
    url, sessions = postgres_sessions
    app, broker_env = site
    sim_id = simulations.create_simulation("random", "bully", 60, seed=11, chunk_deals=10,
                                           sessions=sessions)
    worker = procs.start_worker(worker_env(url, broker_env, tmp_path), concurrency=2,
                                logfile=tmp_path / "worker.log")
    try:
        simulations.dispatch(sim_id, sessions, send=send_with(app))
        done = wait_until(lambda: simulations.progress(sim_id, sessions)["state"] == "done"
                          and simulations.progress(sim_id, sessions), 60, what="the simulation")
    finally:
        procs.stop(worker)
    expected = play_deals("random", "bully", 11, 0, 60)
    assert done["deals_done"] == 60
    assert done["result"]["pairs"] == 60
    assert done["result"]["points_per_deal_a"] == expected.points_a / 120
    assert done["result"]["win_rate_a"] == expected.wins_a / 120


@pytest.mark.parametrize("victim", ["worker", "pool-child"])
def test_sigkill_mid_chunk(postgres_sessions, site, tmp_path, victim):
    """Kill the whole worker (main process and pool; the sweeper re-enqueues) or only the pool
    child running the chunk (reject_on_worker_lost puts the message back) mid-chunk."""
    url, sessions = postgres_sessions
    app, broker_env = site
    sim_id = simulations.create_simulation("bully", "rdeep", 24, seed=5, chunk_deals=6,
                                           sessions=sessions)
    env = worker_env(url, broker_env, tmp_path)
    log = tmp_path / "worker.log"
    # Killing only the pool child must recover without the sweeper: no beat in that case.
    worker = procs.start_worker(env, concurrency=1, beat=victim == "worker", logfile=log)
    try:
        simulations.dispatch(sim_id, sessions, send=send_with(app))
        # A chunk a worker has started (attempts 1) and not finished: the worker is mid-chunk.
        started = wait_until(lambda: [c for c in chunks(sessions)
                                      if c.attempts and c.state != CHUNK_DONE], 60,
                             every=0.02, what="a chunk to start")
        if victim == "worker":
            procs.kill(worker)
            worker = procs.start_worker(env, concurrency=1, beat=True, logfile=log)
        else:
            pool = procs.children(worker)
            assert pool, "the prefork worker has a pool child"
            for pid in pool:
                os.kill(pid, signal.SIGKILL)
        done = wait_until(lambda: simulations.progress(sim_id, sessions)["state"] == "done"
                          and simulations.progress(sim_id, sessions), 120,
                          what="the simulation to finish after the kill")
    finally:
        procs.stop(worker)
    rows = chunks(sessions)
    killed = next(c for c in rows if c.id == started[0].id)
    assert killed.attempts >= 2, "the chunk killed mid-run was run again"
    assert all(c.state == CHUNK_DONE for c in rows)
    expected = play_deals("bully", "rdeep", 5, 0, 24)
    assert done["deals_done"] == 24
    with sessions() as s:
        assert simulations.totals_of(s, sim_id) == expected
