"""The dashboard on PostgreSQL: a real match played through the service, shown and listed."""

from __future__ import annotations

import pytest
import sqlalchemy.exc
from test_web_pages import play, real_match

from db.models import FINISHED, HOUSE, Bot
from db.ratings import LadderMatch, Rating
from web import create_app


def test_dashboard_on_postgres(postgres_sessions):
    url, sessions = postgres_sessions
    match_id = real_match(sessions, seed=11)
    play(match_id, sessions)
    with sessions.begin() as s:
        s.add(LadderMatch(match_id=match_id, profile="soft"))
        s.add_all([Rating(bot_id=1, profile="soft", mu=27.0, sigma=6.0, matches=1, wins=1),
                   Rating(bot_id=2, profile="soft", mu=23.0, sigma=6.0, matches=1, wins=0)])
    app = create_app({"DATABASE_URL": url})
    client = app.test_client()
    try:
        assert client.get("/healthz").get_json()["database"] == "ok"
        listed = client.get("/api/matches?state=finished&profile=soft").get_json()
        assert [m["id"] for m in listed["matches"]] == [match_id]
        assert listed["matches"][0]["ladder"] is True
        data = client.get(f"/api/matches/{match_id}").get_json()
        assert data["state"] == FINISHED and data["hands"] and data["seed"] == 11
        page = client.get(f"/matches/{match_id}").get_data(as_text=True)
        assert "Hand 0" in page and "plays " in page
        replay = client.get(f"/api/matches/{match_id}/hands/0").get_json()
        assert replay["hand"]["steps"][-1]["over"] is True
        bot = client.get("/api/bots/1").get_json()  # window functions and groupings on PG
        assert bot["move_times"]["moves"] > 0 and bot["opponents"][0]["played"] == 1
        assert "Workers' last tasks" in client.get("/health").get_data(as_text=True)
        standings = client.get("/api/standings").get_json()["profiles"]["soft"]
        assert [row["name"] for row in standings] == ["alice", "bob"]
        assert client.get("/matches/424242").status_code == 404
        with pytest.raises(sqlalchemy.exc.DBAPIError, match="read-only"), \
                app.extensions["bummerl.sessions"].begin() as s:
            s.add(Bot(name="intruder", kind=HOUSE))
    finally:
        app.extensions["bummerl.sessions"].kw["bind"].dispose()
