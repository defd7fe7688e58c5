"""Simulations in the database, in-process (SQLite and PostgreSQL): idempotent chunks, early
stop, the sweeper's re-dispatch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from bots.batch import play_deals
from bots.stats import Sprt
from db.base import make_session_factory
from db.batch import CHUNK_CANCELLED, Simulation, SimulationChunk
from db.schema import create_all
from workers import simulations
from workers.testing import fresh_postgres


@pytest.fixture(params=["sqlite", "postgres"])
def sessions(request, tmp_path):
    if request.param == "sqlite":
        factory = make_session_factory(f"sqlite:///{tmp_path / 'db.sqlite3'}")
        create_all(factory)
        yield factory
        return
    with fresh_postgres(request.getfixturevalue("postgres_url")) as url:
        factory = make_session_factory(url)
        create_all(factory)
        yield factory
        factory.kw["bind"].dispose()


def drain(sessions, queue: list[int], twice: bool = False) -> None:
    while queue:
        chunk_id = queue.pop(0)
        simulations.run_chunk(chunk_id, sessions, send=queue.extend)
        if twice:
            assert simulations.run_chunk(chunk_id, sessions, send=queue.extend) is False


def test_chunks_run_twice_count_once(sessions, monkeypatch):
    monkeypatch.setenv("BUMMERL_BATCH_WINDOW", "3")
    sim_id = simulations.create_simulation("random", "bully", 47, seed=2, chunk_deals=10,
                                           sessions=sessions)
    queue: list[int] = []
    assert len(simulations.dispatch(sim_id, sessions, send=queue.extend)) == 3
    drain(sessions, queue, twice=True)
    result = simulations.progress(sim_id, sessions)
    assert result["state"] == "done" and result["deals_done"] == 47
    with sessions() as s:
        assert simulations.totals_of(s, sim_id) == play_deals("random", "bully", 2, 0, 47)


def test_sprt_stops_early_and_cancels_the_rest(sessions):
    sim_id = simulations.create_simulation("random", "bully", 2000, seed=1, chunk_deals=20,
                                           sprt=Sprt(0, 50), sessions=sessions)
    queue: list[int] = []
    simulations.dispatch(sim_id, sessions, send=queue.extend)
    drain(sessions, queue)
    result = simulations.progress(sim_id, sessions)
    assert result["state"] == "stopped" and result["decision"] == "H0"
    assert result["deals_done"] < 2000
    assert result["result"]["sprt"]["llr"] <= result["result"]["sprt"]["lower"]
    with sessions() as s:
        states = set(s.scalars(select(SimulationChunk.state)
                               .where(SimulationChunk.simulation_id == sim_id)))
    assert CHUNK_CANCELLED in states


def test_sweeper_redispatches_a_stalled_simulation(sessions):
    sim_id = simulations.create_simulation("random", "random", 30, seed=4, chunk_deals=10,
                                           sessions=sessions)
    lost: list[int] = []
    simulations.dispatch(sim_id, sessions, send=lost.extend)  # messages lost with a worker
    assert simulations.redispatch_stalled(60, sessions, send=lambda ids: None) == []  # not stale
    with sessions.begin() as s:
        s.execute(update(Simulation).values(progress_at=datetime.now(UTC) - timedelta(hours=1)))
    queue: list[int] = []
    assert simulations.redispatch_stalled(60, sessions, send=queue.extend) == lost
    drain(sessions, queue)
    assert simulations.progress(sim_id, sessions)["state"] == "done"


def test_bad_requests():
    with pytest.raises(ValueError):
        simulations.create_simulation("random", "nope", 10, sessions=None)
