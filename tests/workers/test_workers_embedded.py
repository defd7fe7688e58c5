"""The embedded default: no Redis, kombu's filesystem transport and SQLite, still a real Celery
worker process. A simulation and a house match both finish (the house moves are submitted to a
real gRPC server in this process)."""

from __future__ import annotations

import pytest
from housekit import house_service

from db.base import make_session_factory
from db.models import FINISHED, HOUSE, Match
from db.schema import create_all
from services.core import hooks, matches
from services.ops import bots
from workers import procs, simulations
from workers.app import make_app
from workers.testing import wait_until


@pytest.fixture
def embedded(tmp_path, monkeypatch):
    monkeypatch.delenv("BUMMERL_BROKER_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("BUMMERL_BROKER_DIR", str(tmp_path / "broker"))
    url = f"sqlite:///{tmp_path / 'bummerl.sqlite3'}"
    sessions = make_session_factory(url)
    create_all(sessions)
    app = make_app()  # this test's own app, on the test's broker folder
    with house_service(sessions) as (_, service_env):
        env = {"DATABASE_URL": url, "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
               "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_LADDER_EVERY": "3600",
               **service_env}
        worker = procs.start_worker(env, concurrency=2, logfile=tmp_path / "worker.log")
        yield app, sessions
        procs.stop(worker)
    sessions.kw["bind"].dispose()


def test_simulation_and_house_match_on_the_filesystem_broker(embedded, monkeypatch):
    app, sessions = embedded
    assert app.conf.broker_url.startswith("bummerlfs")

    def send_chunks(ids: list[int]) -> None:
        for chunk_id in ids:
            app.send_task("bummerl.chunk", (chunk_id,), queue="batch")

    def on_turn(match_id: int, seat: int, seq: int, turn: hooks.HouseTurn) -> None:
        app.send_task("bummerl.move", (match_id, seat, seq),
                      {"strategy": turn.strategy, "observation": turn.encoded()}, queue="moves")

    monkeypatch.setattr(hooks, "on_turn", [on_turn])
    monkeypatch.setattr(hooks, "on_match_end", [])
    sim_id = simulations.create_simulation("random", "bully", 40, seed=9, chunk_deals=10,
                                           sessions=sessions)
    simulations.dispatch(sim_id, sessions, send=send_chunks)
    a, _ = bots.register_bot("bully", kind=HOUSE, house_strategy="bully", sessions=sessions)
    b, _ = bots.register_bot("random", kind=HOUSE, house_strategy="random", sessions=sessions)
    match = matches.create_match([a.id, b.id], seed=1, sessions=sessions)

    def match_over() -> bool:
        with sessions() as s:
            return s.get(Match, match.id).state == FINISHED

    wait_until(lambda: simulations.progress(sim_id, sessions)["state"] == "done", 60,
               what="the simulation")
    wait_until(match_over, 60, what="the house match")
    assert simulations.progress(sim_id, sessions)["deals_done"] == 40
