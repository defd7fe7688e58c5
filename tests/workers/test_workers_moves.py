"""House-bot moves on a real Celery worker process (real Redis, real PostgreSQL), submitted to a
real gRPC server (in this process) with the house token.

The crash test SIGKILLs the worker while it computes a move: the sweeper re-enqueues the owed
move, the match finishes, and its log holds every seq exactly once (nothing applied twice).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from housekit import announce_on, house_service
from sqlalchemy import select

from db.models import FINISHED, HOUSE, ActionLog, Match
from engine import Action
from engine import Match as EngineMatch
from services.core import matches
from services.ops import bots
from workers import procs
from workers.testing import redis_site, wait_until


def worker_env(database_url: str, broker_env: dict[str, str], tmp_path: Path, **extra: str
               ) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        **broker_env,
        "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat-schedule"),
        "BUMMERL_SWEEP_EVERY": "1",
        "BUMMERL_SWEEP_STALE": "3",
        "BUMMERL_SWEEP_MOVE_STALE": "2",
        "BUMMERL_LADDER_EVERY": "3600",
        **extra,
    }


@pytest.fixture
def announce(monkeypatch, redis_url, postgres_sessions):
    """This test's corner of Redis, and the service (in this process) that announces house
    turns there. Yields the worker processes' environment: broker, service address, house
    token."""
    app, broker_env = redis_site(redis_url)
    announce_on(app, monkeypatch)
    with house_service(postgres_sessions[1]) as (_, service_env):
        yield {**broker_env, **service_env}


def house(sessions, name: str, strategy: str) -> int:
    bot, _ = bots.register_bot(name, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    return bot.id


def finished(sessions, match_id: int) -> Match | None:
    with sessions() as s:
        m = s.get(Match, match_id)
        return m if m is not None and m.state == FINISHED else None


def check_log(sessions, match: Match) -> None:
    """Every seq once, and the log replays to the recorded result."""
    with sessions() as s:
        rows = list(s.scalars(select(ActionLog).where(ActionLog.match_id == match.id)
                              .order_by(ActionLog.seq)))
    assert [r.seq for r in rows] == list(range(match.seq))
    game = EngineMatch.replay(match.seed, match.profile,
                              [(r.seat, Action.from_text(r.action)) for r in rows])
    assert game.is_over and game.winner == match.winner
    assert game.counters == (match.counter0, match.counter1)


def test_house_match_on_a_worker(postgres_sessions, redis_url, tmp_path, announce):
    url, sessions = postgres_sessions
    a, b = house(sessions, "bully", "bully"), house(sessions, "rdeep", "rdeep")
    worker = procs.start_worker(worker_env(url, announce, tmp_path),
                                logfile=tmp_path / "worker.log")
    try:
        match = matches.create_match([a, b], seed=7, sessions=sessions)
        done = wait_until(lambda: finished(sessions, match.id), 90, what="the match to finish")
    finally:
        procs.stop(worker)
    assert done.end_reason == "played"
    check_log(sessions, done)


def test_sigkill_mid_move(postgres_sessions, redis_url, tmp_path, announce):
    url, sessions = postgres_sessions
    a, b = house(sessions, "rdeep", "rdeep"), house(sessions, "random", "random")
    log = tmp_path / "worker.log"
    # A slow rdeep (3 s per move), so that the kill lands while it thinks.
    slow = worker_env(url, announce, tmp_path, BUMMERL_RDEEP_SAMPLES="100000",
                      BUMMERL_HOUSE_THINK_S="3")
    worker = procs.start_worker(slow, beat=True, logfile=log)
    try:
        match = matches.create_match([a, b], seed=3, sessions=sessions)

        def mid_move() -> bool:
            text = log.read_text() if log.exists() else ""
            received = len(re.findall(r"Task bummerl\.move\[[^\]]+\] received", text))
            succeeded = len(re.findall(r"Task bummerl\.move\[[^\]]+\] succeeded", text))
            return received > succeeded

        wait_until(mid_move, 30, every=0.02, what="a move task to start")
        with sessions() as s:
            seq_at_kill = s.get(Match, match.id).seq
        procs.kill(worker)
        with sessions() as s:
            assert s.get(Match, match.id).seq == seq_at_kill, "the killed move was not applied"
        worker = procs.start_worker(worker_env(url, announce, tmp_path), beat=True,
                                    logfile=log)
        done = wait_until(lambda: finished(sessions, match.id), 120,
                          what="the match to finish after the kill")
    finally:
        procs.stop(worker)
    assert "sweeper: re-enqueued" in log.read_text()
    check_log(sessions, done)
