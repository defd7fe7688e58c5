"""When the ladder cannot pair anyone it says why and when the next match can come
(`db.ladder_state`): on the dashboard's standings (and `/api/standings`), in the live table of
`bummerl up`, and in the tick's log; while it pairs, it says how many matches run. On a real
database (SQLite and PostgreSQL), the ladder's own tick making the matches."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime

import pytest
from housekit import create_in_process
from markupsafe import escape
from rich.console import Console
from servicekit import fresh_database
from sqlalchemy import update

from db.ladder_state import ladder_state
from db.models import ACCEPTS_CHALLENGES, HOUSE, Bot
from db.pairs import PLAYING, DuplicatePair
from services.core import hooks
from services.ops import bots
from web import create_app
from workers import ladder


@pytest.fixture(params=["sqlite", "postgres"])
def site(request, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # nobody moves: the matches stay running
    monkeypatch.setattr(hooks, "on_match_end", [])
    with fresh_database(request.param, request, tmp_path) as db:
        db.create_tables()
        factory = db.sessions()
        create_in_process(monkeypatch, factory)
        monkeypatch.setattr("db.base.session_factory", lambda: factory)
        monkeypatch.setattr("workers.ladder.session_factory", lambda: factory)
        monkeypatch.setattr(ladder, "_said", {})  # what this process logged: nothing yet
        monkeypatch.setenv("BUMMERL_LADDER_MATCHES", "3")
        monkeypatch.setenv("BUMMERL_LADDER_PROFILES", "soft")
        app = create_app({"DATABASE_URL": db.url, "TESTING": True})
        if db.schema:  # the dashboard on the same schema
            app.extensions["bummerl.sessions"].kw["bind"].dispose()
            app.extensions["bummerl.sessions"] = factory
        yield factory, app.test_client()
        factory.kw["bind"].dispose()


def shown_in_terminal() -> str:
    from cli.up import render

    console = Console(file=io.StringIO(), width=400, color_system=None)
    console.print(render({}, "soft"))
    return console.file.getvalue()  # type: ignore[attr-defined]


def shown_on_dashboard(web) -> tuple[str, dict]:
    page = web.get("/standings/soft")
    assert page.status_code == 200
    return page.get_data(as_text=True), web.get("/api/standings?profile=soft").get_json()[
        "ladder"]["soft"]


def test_an_idle_ladder_says_why_and_when_the_next_match_can_come(site, caplog):
    sessions, web = site
    bots.register_bot("lonely-house", kind=HOUSE, house_strategy="random", sessions=sessions)
    picky, _ = bots.register_bot("picky", sessions=sessions)
    moment = datetime.now(UTC)
    with sessions.begin() as s:  # connected, but for challenges only
        s.execute(update(Bot).where(Bot.id == picky.id).values(
            connected_since=moment, last_seen_at=moment, accepts=ACCEPTS_CHALLENGES))
    caplog.set_level(logging.INFO, logger="workers.ladder")
    assert ladder.tick(sessions) == {"soft": []}  # the tick pairs nobody
    why = ("idle: only lonely-house is free for a ladder match (1 of 1 remote bots "
           "connected; picky for challenges only or finishing up)")
    when = "when another bot connects (bummerl bot run) or is reinstated"
    assert f"ladder soft: {why}; next match {when}" in caplog.text
    html, api = shown_on_dashboard(web)
    assert f"Ladder {why}. Next match: {when}." in html
    assert api["idle"] is True and api["reason"] == why and api["next_match"] == when
    assert api["running"] == 0 and api["target"] == 3 and api["free"] == ["lonely-house"]
    assert f"ladder {why}; next match {when}" in shown_in_terminal()

    # a second house bot: the tick pairs the two; then they already play each other
    bots.register_bot("other-house", kind=HOUSE, house_strategy="random", sessions=sessions)
    assert len(ladder.tick(sessions)["soft"]) == 1
    with sessions() as s:
        state = ladder_state(s, "soft", heartbeat_s=60)
    assert state.idle and state.running == 1
    assert state.reason == ("idle: the free bots (lonely-house, other-house) already play "
                            "each other")
    assert state.next_match.startswith("when one of the 1 running ladder matches ends (the "
                                       "next turn's deadline: ")
    html, api = shown_on_dashboard(web)
    assert str(escape(f"Ladder {state.reason}. Next match: {state.next_match}.")) in html
    assert api["reason"] == state.reason
    assert state.reason in shown_in_terminal()

    # a third: pairing again, and nothing says idle
    bots.register_bot("third-house", kind=HOUSE, house_strategy="random", sessions=sessions)
    with sessions() as s:
        state = ladder_state(s, "soft", heartbeat_s=60)
    # lonely-house and other-house play each other and are still counted: house bots are
    # never busy, and the line says so instead of calling them free (issue 44)
    assert not state.idle and state.reason == (
        "1 of 3 matches running; pairing among 3 bots (a house bot may play several matches "
        "at once)")
    html, api = shown_on_dashboard(web)
    assert "idle" not in api["reason"] and "Ladder 1 of 3 matches running" in html
    assert len(ladder.tick(sessions)["soft"]) == 2
    assert "ladder soft: pairing again" in caplog.text
    with sessions() as s:
        state = ladder_state(s, "soft", heartbeat_s=60)
    assert not state.idle and state.reason == "3 of 3 matches running"
    assert "ladder 3 of 3 matches running" in shown_in_terminal()


def test_the_reason_names_the_bots_busy_elsewhere(site):
    sessions, web = site
    bots.register_bot("house-x", kind=HOUSE, house_strategy="random", sessions=sessions)
    eventful, _ = bots.register_bot("eventful", sessions=sessions)
    moment = datetime.now(UTC)
    with sessions.begin() as s:  # connected, and playing a duplicate pair of a tournament
        s.execute(update(Bot).where(Bot.id == eventful.id).values(
            connected_since=moment, last_seen_at=moment))
        s.add(DuplicatePair(owner="tournament", owner_id=1, round=1, board=1, seed=5,
                            bot_a_id=eventful.id, bot_b_id=1, profile="soft", move_ms=4000,
                            bank_ms=9000, rated=False, state=PLAYING))
    assert ladder.tick(sessions) == {"soft": []}
    with sessions() as s:
        state = ladder_state(s, "soft", heartbeat_s=60)
    assert state.idle and state.reason == (
        "idle: only house-x is free for a ladder match (1 of 1 remote bots connected; "
        "eventful playing for an event)")
    assert shown_on_dashboard(web)[1]["reason"] == state.reason
