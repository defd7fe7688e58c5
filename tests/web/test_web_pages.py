"""The dashboard (web/) as operators use it: pages and JSON on a fresh SQLite database per test,
data written through the real models and the service's plain functions."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime

import pytest

from db.base import make_session_factory
from db.batch import Simulation
from db.models import FINISHED, FORFEIT_TIMEOUT, HOUSE, PLAYED, REMOTE, RUNNING, Bot, Match
from db.ratings import LadderMatch, Rating
from db.schema import create_all
from web import create_app
from web.transcript import card as card_text


@pytest.fixture
def sessions(tmp_path):
    factory = make_session_factory(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


@pytest.fixture
def client(sessions):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "PAGE_SIZE": 3, "TESTING": True})
    yield app.test_client()
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def add_bots(sessions, *names: str) -> list[int]:
    with sessions.begin() as s:
        bots = [Bot(name=n, kind=HOUSE, house_strategy="bully") for n in names]
        s.add_all(bots)
        s.flush()
        return [b.id for b in bots]


def add_match(sessions, bot0: int, bot1: int, state: str = FINISHED, profile: str = "soft",
              ladder: bool = False, **columns) -> int:
    values = dict(bot0_id=bot0, bot1_id=bot1, profile=profile, seed=12345, state=state,
                  move_ms=5000, bank_ms=30000, max_illegal=3, bank0_ms=30000, bank1_ms=30000,
                  to_act=0 if state == RUNNING else None)
    if state == FINISHED:
        values.update(winner=0, end_reason=PLAYED, counter1=0, finished_at=datetime.now(UTC))
    values.update(columns)
    with sessions.begin() as s:
        m = Match(**values)
        s.add(m)
        s.flush()
        if ladder:
            s.add(LadderMatch(match_id=m.id, profile=profile))
        return m.id


def play(match_id: int, sessions, actions: int | None = None, seed: int = 1) -> None:
    """Submit random legal actions (all of them, or `actions`) through the service."""
    from services.core.actions import submit_action
    from services.core.matches import get_match, get_observation

    rng = random.Random(seed)
    done = 0
    while actions is None or done < actions:
        m = get_match(match_id, sessions=sessions)
        if m.state != RUNNING:
            return
        obs, m = get_observation(match_id, m.to_act, sessions=sessions)
        plays = [a for a in obs.legal_actions if a.kind == "play"]
        action = rng.choice(plays or list(obs.legal_actions))
        submit_action(match_id, m.to_act, action, expected_seq=m.seq, sessions=sessions)
        done += 1


def real_match(sessions, seed: int = 7):
    from services.core.matches import create_match
    from services.ops.bots import register_bot

    a, _ = register_bot("alice", kind=HOUSE, house_strategy="random", sessions=sessions)
    b, _ = register_bot("bob", kind=HOUSE, house_strategy="bully", sessions=sessions)
    return create_match([a.id, b.id], seed=seed, sessions=sessions).id


# --- standings -------------------------------------------------------------------------------
def test_standings_rank_by_conservative_rating_and_refresh(client, sessions):
    strong, shaky, new = add_bots(sessions, "strong", "shaky", "newbie")
    with sessions.begin() as s:
        s.add_all([Rating(bot_id=strong, profile="soft", mu=30.0, sigma=2.0, matches=12, wins=9),
                   Rating(bot_id=shaky, profile="soft", mu=33.0, sigma=5.0, matches=4, wins=3),
                   Rating(bot_id=new, profile="soft", mu=25.0, sigma=8.333, matches=0, wins=0)])
    add_match(sessions, strong, shaky, state=RUNNING, ladder=True)

    page = client.get("/").get_data(as_text=True)
    assert 'data-events=' in page
    assert page.index("strong") < page.index("shaky") < page.index("newbie")  # by mu - 3 sigma
    assert "30.0 ± 4.0" in page and "24.0" in page  # mu ± 2 sigma, mu - 3 sigma
    assert "75%" in page  # 9 of 12
    assert page.count("provisional</span>") == 2

    data = client.get("/api/standings").get_json()["profiles"]["soft"]
    assert [row["name"] for row in data] == ["strong", "shaky", "newbie"]
    top = data[0]
    assert top["rank"] == 1 and top["ordinal"] == pytest.approx(24.0)
    assert (top["low"], top["high"]) == (pytest.approx(26.0), pytest.approx(34.0))
    assert top["provisional"] is False and top["playing"] == 1
    assert data[2]["win_rate"] is None and data[2]["provisional"] is True

    assert "No ratings yet" in client.get("/standings/sharp").get_data(as_text=True)


def test_unknown_profile_is_a_404_naming_it(client):
    page = client.get("/standings/blitz")
    assert page.status_code == 404
    assert "unknown rules profile &#39;blitz&#39;" in page.get_data(as_text=True)
    api = client.get("/api/standings?profile=blitz")
    assert api.status_code == 404
    assert "blitz" in api.get_json()["error"]


# --- matches ---------------------------------------------------------------------------------
def test_matches_list_running_first_filtered_and_paged(client, sessions):
    a, b, c = add_bots(sessions, "anna", "berta", "carl")
    old_running = add_match(sessions, a, b, state=RUNNING, to_act=1, hand_number=2,
                            counter0=4, counter1=5)
    done = [add_match(sessions, a, c), add_match(sessions, b, c, profile="sharp")]
    forfeit = add_match(sessions, c, a, winner=1, end_reason=FORFEIT_TIMEOUT, forfeit_seat=0,
                        end_detail="R-clock carl did not act within 5 s + bank")

    first = client.get("/api/matches").get_json()
    assert first["total"] == 4 and first["running"] == 1 and first["pages"] == 2
    ids = [m["id"] for m in first["matches"]]
    assert ids == [old_running, forfeit, done[1]]  # running first, then newest first
    running = first["matches"][0]
    assert running["to_act"] == 1 and running["counters"] == [4, 5]
    assert running["hand_number"] == 2 and running["seed"] is None
    assert [s["name"] for s in running["seats"]] == ["anna", "berta"]
    assert client.get("/api/matches?page=2").get_json()["matches"][0]["id"] == done[0]

    page = client.get("/matches").get_data(as_text=True)
    assert "berta to act" in page and "needs 4 · needs 5" in re.sub(r"<[^>]+>", "", page)
    assert "forfeit: time-out" in page and "did not act within 5 s" in page
    assert "page 1 of 2" in page and 'data-events=' in page

    by_bot = client.get(f"/api/matches?bot={c}&state=finished").get_json()
    assert {m["id"] for m in by_bot["matches"]} == {done[0], done[1], forfeit}
    sharp = client.get("/api/matches?profile=sharp").get_json()
    assert [m["id"] for m in sharp["matches"]] == [done[1]]
    finished_page = client.get("/matches?state=finished").get_data(as_text=True)
    assert 'data-events=' not in finished_page


@pytest.mark.parametrize(("query", "status", "message"), [
    ("page=abc", 400, "page number must be a whole number, not &#39;abc&#39;"),
    ("page=0", 400, "page must be 1 or more"),
    ("page=7", 404, "page 7 does not exist"),
    ("state=paused", 400, "unknown match state &#39;paused&#39;"),
    ("bot=999", 404, "no bot with id 999"),
    ("bot=x", 400, "bot id must be a whole number"),
    ("profile=blitz", 404, "unknown rules profile &#39;blitz&#39;"),
])
def test_bad_match_list_requests_say_what_is_wrong(client, sessions, query, status, message):
    add_match(sessions, *add_bots(sessions, "x1", "x2"))
    page = client.get(f"/matches?{query}")
    assert page.status_code == status
    assert message in page.get_data(as_text=True)
    api = client.get(f"/api/matches?{query}")
    assert api.status_code == status and api.get_json()["status"] == status


def test_unknown_or_malformed_match_id(client):
    missing = client.get("/matches/999")
    assert missing.status_code == 404 and "no match with id 999" in missing.get_data(as_text=True)
    assert client.get("/api/matches/999").get_json() == {"error": "no match with id 999",
                                                         "status": 404}
    bad = client.get("/matches/abc")
    assert bad.status_code == 400 and "match id must be a whole number" in bad.get_data(
        as_text=True)
    nowhere = client.get("/no/such/page")
    assert nowhere.status_code == 404 and "/no/such/page" in nowhere.get_data(as_text=True)


def test_finished_match_shows_hands_and_transcript(client, sessions):
    match_id = real_match(sessions)
    play(match_id, sessions)

    data = client.get(f"/api/matches/{match_id}").get_json()
    assert data["state"] == FINISHED and data["end_reason"] == PLAYED
    assert data["seed"] == 7 and data["winner"] in (0, 1)
    assert sum(len(h["actions"]) for h in data["hands"]) == data["seq"]
    assert all(h["over"] for h in data["hands"])
    loser = 1 - data["winner"]
    assert data["counters"][data["winner"]] == 0 or data["counters"][loser] == 0
    first = data["hands"][0]
    assert first["actions"][0]["seq"] == 0 and first["points"] is not None
    assert first["actions"][0]["trick"] == 1 and first["actions"][0]["leads"] is True

    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'data-events=' not in page  # over: nothing changes
    assert "Hand 0" in page and "dealt by" in page and "plays " in page
    assert f"{first['points'][0]} : {first['points'][1]}" in page
    assert first["reason"].replace("_", " ") in page and "trick 1" in page
    winner = data["seats"][data["winner"]]["name"]
    assert f"<b>{winner}</b> won" in page


def test_running_match_never_shows_hidden_cards_or_seed(client, sessions):
    from services.core.matches import get_match, get_observation

    seed = 7_345_678_901_234_567  # a number no clock, count or id on the page can contain
    match_id = real_match(sessions, seed=seed)
    play(match_id, sessions, actions=5)
    m = get_match(match_id, sessions=sessions)
    assert m.state == RUNNING

    data = client.get(f"/api/matches/{match_id}").get_json()
    assert data["seed"] is None and data["to_act"] == m.to_act
    assert len(data["hands"][0]["actions"]) == 5 and data["hands"][0]["over"] is False
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'data-events=' in page and "in play" in page
    assert f"{m.bot(m.to_act).name} to act" in page
    assert str(seed) not in page and f"{seed:,}" not in page
    for seat in (0, 1):
        obs, _ = get_observation(match_id, seat, sessions=sessions)
        for c in obs.hand:  # cards held now were never played: nowhere on the page
            assert card_text(str(c)) not in page, c
            assert f"play {c}" not in str(data)


def test_a_house_seat_shows_the_house_move_time_not_the_matchs(client, sessions):
    """A house seat showed "119.7 s left" under "5.0 s per move + a bank of 30.0 s": its move
    time is the service's setting (BUMMERL_HOUSE_MOVE_MS), and the page says so (issue 22)."""
    import re

    from db.settings import settings
    from services.core.matches import create_match
    from services.ops.bots import register_bot

    house_ms = settings().house_move_ms
    house_s = f"{house_ms / 1000:.1f} s"
    remote, _ = register_bot("remote-one", sessions=sessions)
    house, _ = register_bot("house-one", kind=HOUSE, house_strategy="random",
                            sessions=sessions)
    other, _ = register_bot("remote-two", sessions=sessions)
    mixed = create_match([remote.id, house.id], seed=3, sessions=sessions).id
    page = client.get(f"/matches/{mixed}").get_data(as_text=True)
    assert "5.0 s per move + a bank of 30.0 s" in page
    assert f"<dt>house bots</dt><dd>{house_s} per move, no bank" in page
    assert "BUMMERL_HOUSE_MOVE_MS" in page
    clocks = dict(re.findall(r'<span class="clock[^"]*" data-seat="(\d)"[^>]*>\s*([^<]*?)\s*'
                             r'</span>', page))
    assert client.get(f"/api/matches/{mixed}").get_json()["to_act"] == 0  # (seed 3)
    assert clocks["0"] == "…"  # the remote seat's, counting down in the browser (live.js)
    assert clocks["1"] == f"house bot: {house_s} per move"  # the house seat waits
    assert page.count(f'data-house-ms="{house_ms}"') == 1  # the house seat's clock only
    # two remote bots: no house row, and the waiting seat's clock shows its bank
    both = create_match([remote.id, other.id], seed=3, sessions=sessions).id
    page = client.get(f"/matches/{both}").get_data(as_text=True)
    assert "<dt>house bots</dt>" not in page and "data-house-ms" not in page
    assert "bank 30.0 s" in page


def test_the_stock_count_says_it_includes_the_trump_card(client, sessions):
    """"stock 8" stood beside a pile of 7: the trump card lies apart and is counted."""
    import re

    match_id = real_match(sessions, seed=5)
    play(match_id, sessions, actions=2)  # one trick: each seat drew, 8 cards left
    data = client.get(f"/api/matches/{match_id}").get_json()
    size = data["table"]["stock_size"]
    assert size == 8 and data["table"]["trump_face_up"]
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    pile = re.search(r'<span class="card back pile"><span class="count">(\d+)</span>', page)
    assert pile and int(pile.group(1)) == size - 1  # the face-down pile...
    assert f"stock {size} ({size - 1} + the trump card)" in page  # ...and the words agree


# --- bots, simulations, health ---------------------------------------------------------------
def test_bot_page_shows_rating_and_matches(client, sessions):
    a, b = add_bots(sessions, "anna", "berta")
    with sessions.begin() as s:
        s.add(Rating(bot_id=a, profile="soft", mu=28.0, sigma=3.0, matches=11, wins=6))
        s.add(Rating(bot_id=b, profile="soft", mu=29.0, sigma=3.0, matches=11, wins=5))
    mid = add_match(sessions, a, b)
    page = client.get(f"/bots/{a}").get_data(as_text=True)
    assert "anna" in page and "2 of 2" in page and "28.0 ± 6.0" in page
    assert f"#{mid}" in page and "55%" in page
    assert client.get(f"/api/bots/{b}").get_json()["ratings"][0]["rank"] == 1
    assert client.get("/bots/999").status_code == 404
    assert "no bot with id 999" in client.get("/bots/999").get_data(as_text=True)


def test_connected_remote_bots_are_marked(client, sessions):
    now = datetime.now(UTC)
    with sessions.begin() as s:
        on = Bot(name="online", kind=REMOTE, connected_since=now, last_seen_at=now)
        off = Bot(name="offline", kind=REMOTE, last_seen_at=now)
        s.add_all([on, off])
        s.flush()
        s.add_all([Rating(bot_id=on.id, profile="soft", mu=25.0, sigma=8.0, matches=0, wins=0),
                   Rating(bot_id=off.id, profile="soft", mu=25.0, sigma=8.0, matches=0, wins=0)])
        on_id, off_id = on.id, off.id
    rows = client.get("/").get_data(as_text=True).split("<tr>")
    marked = [row for row in rows if 'class="tag on"' in row]
    assert len(marked) == 1 and ">online</a>" in marked[0]
    data = client.get("/api/standings").get_json()["profiles"]["soft"]
    assert {row["name"]: row["connected"] for row in data} == {"online": True, "offline": False}
    assert "connected since" in client.get(f"/bots/{on_id}").get_data(as_text=True)
    assert "not connected, last seen" in client.get(f"/bots/{off_id}").get_data(as_text=True)
    assert client.get(f"/api/bots/{on_id}").get_json()["connected"] is True
    assert client.get(f"/api/bots/{off_id}").get_json()["connected"] is False
    assert "challenges only" not in client.get(f"/bots/{on_id}").get_data(as_text=True)
    for accepts, shown in (("challenges", "challenges only"), ("none", "finishing up")):
        with sessions.begin() as s:  # what its Play streams take (issue 22)
            s.get(Bot, on_id).accepts = accepts
        assert shown in client.get(f"/bots/{on_id}").get_data(as_text=True)
        assert client.get(f"/api/bots/{on_id}").get_json()["accepts"] == accepts


def test_simulations_show_progress_and_results(client, sessions):
    from workers.simulations import create_simulation, run_chunk

    sim_id = create_simulation("random", "bully", 40, seed=3, chunk_deals=20, sessions=sessions)
    with sessions() as s:
        from db.batch import SimulationChunk

        first_chunk = min(c.id for c in s.query(SimulationChunk).filter_by(simulation_id=sim_id))
    run_chunk(first_chunk, sessions, send=lambda ids: None)

    listing = client.get("/simulations").get_data(as_text=True)
    assert "20 / 40" in listing and "50%" in listing and 'data-events=' in listing
    page = client.get(f"/simulations/{sim_id}").get_data(as_text=True)
    assert "random vs bully" in page and "Elo difference" in page and "20 (40)" in page
    data = client.get(f"/api/simulations/{sim_id}").get_json()
    assert data["deals_done"] == 20 and data["result"]["pairs"] == 20
    assert client.get("/simulations/77").status_code == 404
    with sessions() as s:
        assert s.get(Simulation, sim_id).state == "running"


def test_healthz(client, monkeypatch):
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL", "BUMMERL_SERVICE_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    client.application.config["SERVICE_ADDRESS"] = "127.0.0.1:9"  # nothing listens there
    answer = client.get("/healthz").get_json()
    assert answer["database"] == "ok" and answer["broker"] == "embedded"
    # nothing serves the engine here: the dashboard still works, and says what is missing
    assert answer["status"] == "degraded" and "UNAVAILABLE" in answer["service"]


def test_healthz_reports_an_unreachable_database(tmp_path):
    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'missing' / 'x.sqlite3'}"})
    answer = app.test_client().get("/healthz")
    assert answer.status_code == 503 and answer.get_json()["status"] == "error"


def test_the_dashboard_cannot_write(client, sessions):
    import sqlalchemy.exc
    from flask import Flask

    app = client.application
    assert isinstance(app, Flask)
    with pytest.raises(sqlalchemy.exc.OperationalError, match="readonly"), \
            app.extensions["bummerl.sessions"].begin() as s:
        s.add(Bot(name="intruder", kind=HOUSE))
    with sessions() as s:
        assert s.query(Bot).count() == 0
