"""The ladder on a real worker with embedded beat (real Redis, real PostgreSQL): matches kept
going, each finished match rated exactly once. House moves go to a real gRPC server (in this
process), which announces each next house turn on the test's corner of Redis."""

from __future__ import annotations

from housekit import announce_on, house_service
from sqlalchemy import func, select

from db.models import FINISHED, HOUSE, RUNNING, Match
from db.ratings import LadderMatch, Rating
from services.ops import bots
from workers import ladder, procs
from workers.testing import redis_site, wait_until


def rated(sessions) -> int:
    with sessions() as s:
        return s.scalar(select(func.count()).select_from(LadderMatch)
                        .where(LadderMatch.rated_at.is_not(None))) or 0


def running_ladder(sessions) -> int:
    with sessions() as s:
        return s.scalar(select(func.count()).select_from(LadderMatch)
                        .join(Match, Match.id == LadderMatch.match_id)
                        .where(Match.state == RUNNING)) or 0


def test_ladder_keeps_matches_going_and_rates_each_once(postgres_sessions, redis_url, tmp_path,
                                                        monkeypatch):
    url, sessions = postgres_sessions
    for strategy in ("random", "bully", "rdeep"):
        bots.register_bot(f"house-{strategy}", kind=HOUSE, house_strategy=strategy,
                          sessions=sessions)
    app, broker_env = redis_site(redis_url)
    announce_on(app, monkeypatch)
    most_running = 0
    with house_service(sessions) as (_, service_env):
        env = {
            "DATABASE_URL": url,
            **broker_env,
            **service_env,
            "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat-schedule"),
            "BUMMERL_LADDER_EVERY": "1",
            "BUMMERL_LADDER_MATCHES": "2",
            "BUMMERL_SWEEP_EVERY": "2",
            "BUMMERL_RDEEP_SAMPLES": "3",
        }
        worker = procs.start_worker(env, concurrency=2, beat=True,
                                    logfile=tmp_path / "worker.log")
        try:
            def enough() -> bool:
                nonlocal most_running
                most_running = max(most_running, running_ladder(sessions))
                return rated(sessions) >= 5

            wait_until(enough, 120, every=0.2, what="five rated ladder matches")
        finally:
            procs.stop(worker)
    assert most_running <= 2
    with sessions() as s:
        finished = s.scalar(select(func.count()).select_from(LadderMatch)
                            .join(Match, Match.id == LadderMatch.match_id)
                            .where(Match.state == FINISHED)) or 0
        ratings = list(s.scalars(select(Rating)))
    ladder.rate_finished(sessions)  # whatever finished after the worker stopped
    count = rated(sessions)
    assert count >= finished
    with sessions() as s:
        ratings = list(s.scalars(select(Rating)))
    assert sum(r.matches for r in ratings) == 2 * count  # each match rated once, both sides
    assert sum(r.wins for r in ratings) == count
    table = ladder.standings("soft", sessions)
    assert {st.name for st in table} == {"house-random", "house-bully", "house-rdeep"}
    assert all(st.provisional == (st.matches < ladder.PROVISIONAL_MATCHES) for st in table)
    assert all(st.sigma < 25 / 3 for st in table if st.matches)


def test_the_periodic_steps_expire_within_their_period(monkeypatch):
    """A ladder tick or sweep that could not start within its period (busy workers, a broker
    away) is dropped, not run late in a backlog: each beat entry expires after its period."""
    from workers.app import make_app

    monkeypatch.setenv("BUMMERL_LADDER_EVERY", "7")
    monkeypatch.setenv("BUMMERL_SWEEP_EVERY", "11")
    monkeypatch.setenv("BUMMERL_EVENTS_EVERY", "3")
    monkeypatch.setenv("BUMMERL_TESTS_EVERY", "4")
    schedule = make_app("memory://").conf.beat_schedule
    assert {name: (entry["task"], entry["schedule"], entry["options"]["expires"])
            for name, entry in schedule.items()} == {
        "ladder": ("bummerl.ladder_tick", 7.0, 7.0), "sweep": ("bummerl.sweep", 11.0, 11.0),
        "events": ("bummerl.events_tick", 3.0, 3.0),
        "versiontests": ("bummerl.versiontests_tick", 4.0, 4.0)}
    assert schedule["events"]["options"]["queue"] == "moves"
