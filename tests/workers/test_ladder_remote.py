"""An outside bot joins the ladder with the client kit while the site runs: the gRPC service,
a real Celery worker with beat (real Redis, real PostgreSQL), house bots."""

from __future__ import annotations

import threading

from housekit import HOUSE_CONFIG, HOUSE_TOKEN
from sqlalchemy import select

from client.runner import Runner
from db.models import FINISHED, HOUSE, Match
from db.ratings import LadderMatch, Rating
from examples.simple_bot import SimpleBot
from services.api.server import create_server
from services.core import hooks
from services.ops import bots
from workers import procs
from workers.testing import redis_site, wait_until


def summary(sessions) -> list[str]:
    with sessions() as s:
        return [f"{m.id}:{m.bot0.name}-{m.bot1.name}:{m.state}:seq{m.seq}:to{m.to_act}"
                for m in s.scalars(select(Match).order_by(Match.id)).unique()]


def test_a_remote_bot_plays_and_is_rated(postgres_sessions, redis_url, tmp_path, monkeypatch):
    url, sessions = postgres_sessions
    app, broker_env = redis_site(redis_url)

    def send(name: str, args: tuple) -> None:
        app.send_task(name, args, queue="moves")

    # The service in this process announces house turns and match ends on the test's broker
    # (ids only: the worker asks for the observation over gRPC, as for a sweeper's message).
    monkeypatch.setattr(hooks, "on_turn", [lambda m, s, q, _turn: send("bummerl.move", (m, s, q))])
    monkeypatch.setattr(hooks, "on_match_end", [lambda m: send("bummerl.rate", (m,))])
    bots.register_bot("house-random", kind=HOUSE, house_strategy="random", sessions=sessions)
    bots.register_bot("house-bully", kind=HOUSE, house_strategy="bully", sessions=sessions)
    outsider, token = bots.register_bot("outsider", sessions=sessions)
    server = create_server("127.0.0.1:0", sessions=sessions, config=HOUSE_CONFIG).start()
    env = {"DATABASE_URL": url, **broker_env, "BUMMERL_SERVICE_ADDRESS": server.address,
           "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN,
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_LADDER_EVERY": "1",
           "BUMMERL_LADDER_MATCHES": "2", "BUMMERL_SWEEP_EVERY": "2"}
    worker = procs.start_worker(env, concurrency=2, beat=True, logfile=tmp_path / "worker.log")
    runner = Runner(SimpleBot(), server.address, token or "", max_matches=1)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        def rated() -> Rating | None:
            with sessions() as s:
                return s.scalar(select(Rating).where(Rating.bot_id == outsider.id,
                                                     Rating.matches >= 1))

        try:
            rating = wait_until(rated, 90, every=0.2, what="the outside bot's rated match")
        except AssertionError as e:
            raise AssertionError(f"{e}; runner {runner.stats}; matches {summary(sessions)}"
                                 ) from None
    finally:
        runner.stop()
        procs.stop(worker)
        server.stop()
        thread.join(timeout=10)
    assert runner.stats.turns > 0 and runner.stats.rejected == 0
    with sessions() as s:
        played = list(s.scalars(select(Match).join(LadderMatch, LadderMatch.match_id == Match.id)
                                .where((Match.bot0_id == outsider.id)
                                       | (Match.bot1_id == outsider.id))))
    assert any(m.state == FINISHED and m.end_reason == "played" for m in played)
    assert rating.matches >= 1
