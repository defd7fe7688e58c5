"""A bot's versions on the ladder: a kit bot plays as version 1.0, reconnects as 2.0 mid-ladder
(the real gRPC service, a real Celery worker with beat on real Redis and PostgreSQL, house
bots); the service records each version (bots.version, matches.version0/1), the rating carries
over with its sigma widened once as docs/versions.md says, and the bot's page shows both."""

from __future__ import annotations

import threading

from housekit import HOUSE_CONFIG, HOUSE_TOKEN
from sqlalchemy import select

from client.runner import Runner
from db.models import FINISHED, HOUSE, Bot, Match
from db.ratings import LadderMatch, Rating, RatingHistory
from examples.simple_bot import SimpleBot
from services.api.server import create_server
from services.core import hooks
from services.ops import bots
from web import create_app
from workers import procs
from workers.ladder import MODEL, VERSION_WIDENING
from workers.testing import redis_site, wait_until


class VersionedBot(SimpleBot):
    version = "1.0"  # the class attribute: what the kit says without --version


def play(runner: Runner, sessions, bot_id: int, rated: int) -> None:
    """Run `runner` until the bot has `rated` rated ladder matches and the runner ended."""
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        def enough() -> bool:
            with sessions() as s:
                r = s.scalar(select(Rating).where(Rating.bot_id == bot_id))
                return r is not None and r.matches >= rated and not thread.is_alive()
        wait_until(enough, 150, every=0.2, what=f"{rated} rated matches of the bot")
    finally:
        runner.stop()
        thread.join(timeout=10)


def test_a_new_version_is_recorded_and_widens_sigma_once(postgres_sessions, redis_url,
                                                        tmp_path, monkeypatch):
    url, sessions = postgres_sessions
    app, broker_env = redis_site(redis_url)
    monkeypatch.setattr(hooks, "on_turn", [lambda m, s, q, _turn: app.send_task(
        "bummerl.move", (m, s, q), queue="moves")])
    monkeypatch.setattr(hooks, "on_match_end", [lambda m: app.send_task(
        "bummerl.rate", (m,), queue="moves")])
    bots.register_bot("house-random", kind=HOUSE, house_strategy="random", sessions=sessions)
    outsider, token = bots.register_bot("outsider", sessions=sessions)
    server = create_server("127.0.0.1:0", sessions=sessions, config=HOUSE_CONFIG).start()
    env = {"DATABASE_URL": url, **broker_env, "BUMMERL_SERVICE_ADDRESS": server.address,
           "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN,
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_LADDER_EVERY": "1",
           "BUMMERL_LADDER_MATCHES": "1", "BUMMERL_SWEEP_EVERY": "2"}
    worker = procs.start_worker(env, concurrency=2, beat=True, logfile=tmp_path / "worker.log")
    try:
        # version 1.0 (the class attribute), two ladder matches
        first = Runner(VersionedBot(), server.address, token or "", max_matches=2)
        assert first.version == "1.0"
        play(first, sessions, outsider.id, 2)
        with sessions() as s:
            assert s.get(Bot, outsider.id).version == "1.0"
            before = s.scalar(select(Rating).where(Rating.bot_id == outsider.id))
            sigma_before, matches_before = before.sigma, before.matches
            assert before.version == "1.0"
        # the same bot reconnects as 2.0 (--version overrides the class attribute)
        second = Runner(VersionedBot(), server.address, token or "", max_matches=2,
                        version="2.0")
        play(second, sessions, outsider.id, matches_before + 2)
    finally:
        procs.stop(worker)
        server.stop()

    with sessions() as s:
        assert s.get(Bot, outsider.id).version == "2.0"
        played = list(s.scalars(
            select(Match).join(LadderMatch, LadderMatch.match_id == Match.id)
            .where((Match.bot0_id == outsider.id) | (Match.bot1_id == outsider.id))
            .order_by(Match.id)).unique())
        seen = [(m.version0, m.version1) if m.bot0_id == outsider.id
                else (m.version1, m.version0) for m in played]
        rating = s.scalar(select(Rating).where(Rating.bot_id == outsider.id))
        history = list(s.scalars(select(RatingHistory).order_by(RatingHistory.id)))
    # every match records each seat's version: the kit's, and the house bot's strategy
    assert [mine for mine, _ in seen] == ["1.0"] * matches_before + ["2.0"] * (
        len(seen) - matches_before), seen
    assert {theirs for _, theirs in seen} == {"random"}
    assert all(m.state == FINISHED for m in played)
    assert rating.version == "2.0"

    # sigma: the first 2.0 match was rated from the widened sigma, the next ones were not
    mine = [h for h in history if h.bot_id == outsider.id]
    by_match = {m.id: m for m in played}
    first_v2 = next(i for i, h in enumerate(mine)
                    if "2.0" in (by_match[h.match_id].version0, by_match[h.match_id].version1))
    assert mine[first_v2 - 1].sigma == sigma_before

    def rated_from(i: int, sigma: float) -> tuple[float, float]:
        """Outsider's (mu, sigma) after match `mine[i]`, rated from `sigma`."""
        h, m = mine[i], by_match[mine[i].match_id]
        opponent = [o for o in history if o.match_id == h.match_id and o.bot_id != outsider.id]
        earlier = [o for o in history if o.bot_id == opponent[0].bot_id and o.id < h.id
                   and o.match_id != h.match_id]
        theirs = (MODEL.rating(mu=earlier[-1].mu, sigma=earlier[-1].sigma) if earlier
                  else MODEL.rating())
        ours = MODEL.rating(mu=mine[i - 1].mu, sigma=sigma)
        seat = 0 if m.bot0_id == outsider.id else 1
        teams = [[ours], [theirs]] if seat == 0 else [[theirs], [ours]]
        new = MODEL.rate(teams, ranks=[0.0, 1.0] if m.winner == 0 else [1.0, 0.0])
        return new[seat][0].mu, new[seat][0].sigma

    widened = min(MODEL.sigma, sigma_before + VERSION_WIDENING * MODEL.sigma)
    assert widened > sigma_before
    mu, sigma = rated_from(first_v2, widened)
    assert abs(mine[first_v2].sigma - sigma) < 1e-9 and abs(mine[first_v2].mu - mu) < 1e-9
    assert mine[first_v2].sigma > sigma_before  # wider than before, despite a match played
    for i in range(first_v2 + 1, len(mine)):  # once: the next 2.0 matches are not widened
        mu, sigma = rated_from(i, mine[i - 1].sigma)
        assert abs(mine[i].sigma - sigma) < 1e-9 and mine[i].sigma < mine[i - 1].sigma

    # the dashboard: each version's record on the bot's page, the current one in the standings
    web = create_app({"DATABASE_URL": url}).test_client()
    page = web.get(f"/bots/{outsider.id}").get_data(as_text=True)
    assert "<td>1.0</td>" in page and "<td>2.0</td>" in page and "<h2>Versions</h2>" in page
    data = web.get(f"/api/bots/{outsider.id}").get_json()
    assert data["version"] == "2.0"
    records = {v["version"]: v for v in data["versions"]}
    assert records["1.0"]["matches"] == matches_before
    assert records["2.0"]["matches"] == len(seen) - matches_before
    assert records["2.0"]["finished"] == records["2.0"]["matches"]
    assert 0 <= records["1.0"]["won"] <= matches_before
    assert records["1.0"]["first"] <= records["1.0"]["last"] <= records["2.0"]["first"]
    assert [v["version"] for v in data["versions"]] == ["2.0", "1.0"]
    standings = web.get("/standings/soft").get_data(as_text=True)
    assert '<span class="version" title="the version it runs now">2.0</span>' in standings
