"""The live dashboard: the card table's public view, replays, event streams (the poller and
the cap), and spectator safety of every page, JSON answer and event of a match in play."""

from __future__ import annotations

import json
import threading
import time

import pytest
from test_web_pages import add_bots, add_match, play, real_match
from web_safety import hidden_cards, in_play_json, in_play_part, seq_of, shown_cards

from db.base import make_session_factory
from db.models import RUNNING, Match
from db.schema import create_all
from web import create_app
from web.transcript import card as card_text


def assert_safe(text: str, hidden: set[str], where: str) -> None:
    leaked = shown_cards(text) & hidden
    assert not leaked, f"{where} shows hidden cards {leaked}"
    for c in hidden:
        assert card_text(c) not in text, f"{where} shows hidden card {c}"




@pytest.fixture
def sessions(tmp_path):
    factory = make_session_factory(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


@pytest.fixture
def client(sessions):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "TESTING": True})
    yield app.test_client()
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


@pytest.fixture
def live_app(sessions):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "TESTING": True, "LIVE_POLL_SECONDS": 0.05,
                      "KEEPALIVE_SECONDS": 0.5, "MAX_STREAMS": 2})
    yield app
    app.extensions["bummerl.hub"].close()
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def next_update(chunks, timeout: float = 20.0) -> dict:
    ends = time.monotonic() + timeout
    buffer = ""
    while time.monotonic() < ends:
        buffer += next(chunks).decode()
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            if block.startswith("event: update"):
                return json.loads(block.split("data: ", 1)[1])
    raise AssertionError("no update event in time")


def test_public_table_of_a_hand_in_play(client, sessions):
    match_id = real_match(sessions, seed=31)
    play(match_id, sessions, actions=3)
    data = client.get(f"/api/matches/{match_id}").get_json()
    table = data["table"]
    assert table["hand_number"] == 0 and table["trump_suit"] in "CDHS"
    assert sum(seat["hand_size"] for seat in table["seats"]) in (9, 10, 11)
    assert table["stock_size"] + sum(s["hand_size"] for s in table["seats"]) + 2 * len(
        table["tricks"]) + (table["lead_card"] is not None) == 20
    for seat in table["seats"]:
        assert set(seat) == {"hand_size", "points", "pending_points", "tricks_won",
                             "marriages", "exchanged"}  # sizes, never the cards
    assert data["deadline_at"] and data["turn_started_at"] and data["seed"] is None
    assert_safe(json.dumps(data), hidden_cards(sessions, match_id, data["seq"]), "the JSON")
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'class="felt"' in page and 'data-deadline="' in page and "to act" in page
    assert_safe(page, hidden_cards(sessions, match_id, data["seq"]), "the page")
    # the hand in play cannot be replayed
    answer = client.get(f"/api/matches/{match_id}/hands/0")
    assert answer.status_code == 404 and "still in play" in answer.get_json()["error"]
    assert client.get(f"/matches/{match_id}/hands/0").status_code == 404


def test_every_state_of_a_match_is_safe_in_json_and_pages(client, sessions):
    match_id = real_match(sessions, seed=32)
    while True:
        data = client.get(f"/api/matches/{match_id}").get_json()
        hidden = hidden_cards(sessions, match_id, data["seq"])
        assert_safe(in_play_json(data), hidden, f"the JSON at seq {data['seq']}")
        if data["seq"] % 5 == 0:
            page = client.get(f"/matches/{match_id}").get_data(as_text=True)
            assert_safe(in_play_part(page), hidden, f"the page at seq {data['seq']}")
            assert ("seed</dt>" in page) == (data["state"] != RUNNING)
        if data["state"] != RUNNING:
            break
        play(match_id, sessions, actions=1, seed=data["seq"])
    assert data["seed"] == 32  # revealed once over


def test_finished_hand_replays_with_its_deal(client, sessions):
    match_id = real_match(sessions, seed=33)
    play(match_id, sessions)
    data = client.get(f"/api/matches/{match_id}/hands/0").get_json()
    steps = data["hand"]["steps"]
    deal = steps[0]
    assert len(deal["hands"][0]) == len(deal["hands"][1]) == 5 and len(deal["stock"]) == 10
    assert len({*deal["hands"][0], *deal["hands"][1], *deal["stock"]}) == 20
    assert steps[-1]["over"] and all(not s["over"] for s in steps[:-1])
    tricks = [s["tricks_done"] for s in steps]
    assert tricks == sorted(tricks) and tricks[0] == 0
    logged = sum(len(s["events"]) for s in steps)
    match = client.get(f"/api/matches/{match_id}").get_json()
    assert logged == len(match["hands"][0]["actions"])
    page = client.get(f"/matches/{match_id}/hands/0").get_data(as_text=True)
    assert page.count('class="felt step"') == len(steps) and 'id="step-0"' in page
    assert "replay.js" in page
    assert client.get(f"/matches/{match_id}/hands/99").status_code == 404


def test_event_stream_follows_a_match_and_stays_safe(live_app, sessions):
    match_id = real_match(sessions, seed=34)
    play(match_id, sessions, actions=2)
    web = live_app.test_client()
    response = web.get(f"/events/matches/{match_id}", buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    chunks = iter(response.response)
    seen = []
    try:
        for step in range(12):
            event = next_update(chunks)
            html = event["html"]["live-match"]
            seq = seq_of(html)
            assert_safe(in_play_part(html), hidden_cards(sessions, match_id, seq),
                        f"the event at seq {seq}")
            seen.append(seq)
            if event["final"]:
                break
            play(match_id, sessions, actions=1, seed=step)
    finally:
        response.close()
    assert seen == sorted(seen) and len(set(seen)) == len(seen) >= 5  # one event per action


def test_streams_are_capped_with_a_clear_503(live_app, sessions):
    match_id = real_match(sessions, seed=35)
    web = live_app.test_client()
    open_ = [web.get(f"/events/matches/{match_id}", buffered=False) for _ in range(2)]
    try:
        for response in open_:
            next_update(iter(response.response))
        refused = web.get(f"/events/matches/{match_id}")
        assert refused.status_code == 503 and "too many live streams" in refused.get_json()[
            "error"]
    finally:
        for response in open_:
            response.close()
    ok = web.get("/events/standings", buffered=False)  # closing freed the slots
    assert ok.status_code == 200
    ok.close()
    assert web.get("/events/matches/999").status_code == 404
    assert web.get("/events/standings?profile=blitz").status_code == 404


def test_standings_show_the_days_change_and_suspension(client, sessions):
    from datetime import UTC, datetime, timedelta

    from db.models import Bot
    from db.ratings import Rating, RatingHistory

    a, b = add_bots(sessions, "riser", "faller")
    old = datetime.now(UTC) - timedelta(days=2)
    with sessions.begin() as s:
        s.add_all([Rating(bot_id=a, profile="soft", mu=28.0, sigma=5.0, matches=3, wins=3),
                   Rating(bot_id=b, profile="soft", mu=22.0, sigma=5.0, matches=3, wins=0),
                   RatingHistory(bot_id=a, profile="soft", mu=26.0, sigma=6.0, at=old),
                   RatingHistory(bot_id=a, profile="soft", mu=28.0, sigma=5.0),
                   RatingHistory(bot_id=b, profile="soft", mu=24.0, sigma=6.0, at=old),
                   RatingHistory(bot_id=b, profile="soft", mu=22.0, sigma=5.0)])
        s.get(Bot, b).suspended_at = datetime.now(UTC)
        s.get(Bot, b).suspended_reason = "crashes on every turn"
    page = client.get("/standings").get_data(as_text=True)
    assert "+2.0" in page and "−2.0" in page and "suspended</span>" in page
    assert "crashes on every turn" in page
    bot = client.get(f"/bots/{a}").get_data(as_text=True)
    assert "<svg" in bot and "polyline" in bot and "Rating over time" in bot
    data = client.get(f"/api/bots/{a}").get_json()
    assert [p["mu"] for p in data["rating_history"]["soft"]] == [26.0, 28.0]


def test_bot_record_opponents_forfeits_and_move_times(client, sessions):
    from db.models import FORFEIT_TIMEOUT

    match_id = real_match(sessions, seed=36)
    play(match_id, sessions)
    with sessions() as s:
        m = s.get(Match, match_id)
        a, b, winner = m.bot0_id, m.bot1_id, m.winner
    add_match(sessions, a, b, winner=1, forfeit_seat=0, end_reason=FORFEIT_TIMEOUT)
    data = client.get(f"/api/bots/{a}").get_json()
    [row] = data["opponents"]
    assert row["played"] == 2 and row["forfeited"] == 1
    assert row["won"] + row["lost"] == 2 and row["won"] == int(winner == 0)
    assert data["forfeits"] == {FORFEIT_TIMEOUT: 1}
    speed = data["move_times"]
    assert speed["moves"] > 0 and 0 <= speed["median_ms"] <= speed["p95_ms"]
    page = client.get(f"/bots/{a}").get_data(as_text=True)
    assert "Results by opponent" in page and "forfeit: time-out: <b>1</b>" in page
    assert "median" in page and "p95" in page


def test_health_page_reports_each_dependency(client, sessions, monkeypatch):
    from datetime import UTC, datetime, timedelta

    for name in ("BUMMERL_BROKER_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    client.application.config["SERVICE_ADDRESS"] = "127.0.0.1:9"
    a, b = add_bots(sessions, "h1", "h2")
    add_match(sessions, a, b, state=RUNNING,
              deadline_at=datetime.now(UTC) - timedelta(minutes=1))
    started = time.monotonic()
    page = client.get("/health").get_data(as_text=True)
    assert time.monotonic() - started < 10  # bounded, even with nothing listening
    assert "engine service" in page and "UNAVAILABLE" in page
    assert "1 owed a move past their deadline" in page and "embedded broker" in page


def test_health_reads_redis_queue_lengths(client, redis_url, monkeypatch):
    import redis

    r = redis.Redis.from_url(redis_url)
    r.rpush("moves", "x", "y")
    monkeypatch.setenv("BUMMERL_BROKER_URL", redis_url)
    monkeypatch.delenv("BUMMERL_BROKER_PREFIX", raising=False)
    page = client.get("/health").get_data(as_text=True)
    assert "<code>moves</code> 2" in page and "<code>batch</code> 0" in page
    assert client.get("/healthz").get_json()["broker"] == "ok"


def test_poller_pushes_within_a_second(live_app, sessions):
    match_id = real_match(sessions, seed=37)
    web = live_app.test_client()
    response = web.get(f"/events/matches/{match_id}", buffered=False)
    chunks = iter(response.response)
    try:
        next_update(chunks)
        got: list[float] = []

        def reader() -> None:
            next_update(chunks)
            got.append(time.monotonic())

        thread = threading.Thread(target=reader)
        thread.start()
        acted = time.monotonic()
        play(match_id, sessions, actions=1)
        thread.join(10)
        assert got and got[0] - acted < 1.0 + 2.0  # within a second (generous: loaded CI)
    finally:
        response.close()


def test_list_standings_and_simulation_streams_render_their_part(live_app, sessions):
    from workers.simulations import create_simulation

    a, b = add_bots(sessions, "l1", "l2")
    running = add_match(sessions, a, b, state=RUNNING)
    sim_id = create_simulation("random", "bully", 40, seed=3, chunk_deals=20, sessions=sessions)
    web = live_app.test_client()
    for url, part, text in [("/events/matches?state=running", "live-matches", f"#{running}"),
                            ("/events/standings", "live-standings", "Ladder standings"),
                            ("/events/simulations", "live-simulations", "random"),
                            (f"/events/simulations/{sim_id}", "live-simulation", "0 / 40")]:
        response = web.get(url, buffered=False)
        try:
            assert response.status_code == 200, url
            event = next_update(iter(response.response))
            assert text in event["html"][part] and event["final"] is False, url
        finally:
            response.close()
    assert web.get("/events/matches?state=paused").status_code == 400


def test_health_sees_a_real_engine_service(tmp_path):
    from servicekit import Database, running_service

    database = Database(f"sqlite:///{tmp_path / 'svc.sqlite3'}")
    with running_service(database) as service:
        app = create_app({"DATABASE_URL": database.url, "TESTING": True,
                          "SERVICE_ADDRESS": service.server.address})
        try:
            answer = app.test_client().get("/healthz").get_json()
            assert answer["database"] == "ok" and answer["service"] == "ok"
            page = app.test_client().get("/health").get_data(as_text=True)
            assert f"{service.server.address}: SERVING" in page
        finally:
            app.extensions["bummerl.sessions"].kw["bind"].dispose()


def test_health_pings_a_real_celery_worker(client, sessions, redis_url, tmp_path, monkeypatch):
    from workers import procs
    from workers.testing import redis_site, wait_until

    _, env = redis_site(redis_url)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    assert "no worker answered" in client.get("/health").get_data(as_text=True)
    worker = procs.start_worker({**env, "DATABASE_URL": url}, queues="moves", name="webping",
                                logfile=tmp_path / "worker.log")
    try:
        page = wait_until(lambda: (lambda p: p if "1 answering: webping@" in p else None)(
            client.get("/health").get_data(as_text=True)), 60, every=0.5,
            what="the worker to answer the dashboard's ping")
        assert "<code>moves</code> 0" in page
    finally:
        procs.stop(worker)


def refused_in_play(sessions, match_id: int) -> tuple[str, str, int]:  # type: ignore[no-untyped-def]
    """Play `match_id` until the stock is closed and the follower holds the led suit, then have
    it play another card through the service: refused (R3.4: it must follow suit). The refused
    action's text, its rule as the service told the seat, and the hand it was refused in."""
    import engine
    from services.core.actions import submit_action
    from services.core.errors import FailedPrecondition
    from services.core.matches import get_match, get_observation

    for _ in range(200):
        m = get_match(match_id, sessions=sessions)
        assert m.state == RUNNING, "the match ended before a refusal could be made"
        obs, m = get_observation(match_id, m.to_act, sessions=sessions)
        legal = list(obs.legal_actions)
        closing = [a for a in legal if a.kind == "close"]
        off_suit = [engine.Action.play(c) for c in obs.hand if engine.Action.play(c) not in legal]
        if obs.lead_card is not None and off_suit:
            with pytest.raises(FailedPrecondition) as refused:
                submit_action(match_id, m.to_act, off_suit[0], expected_seq=m.seq,
                              sessions=sessions)
            return str(off_suit[0]), refused.value.rule, m.hand_number
        action = closing[0] if closing else next(a for a in legal if a.kind == "play")
        submit_action(match_id, m.to_act, action, expected_seq=m.seq, sessions=sessions)
    raise AssertionError("no refusable position was reached")


def test_refused_actions_of_the_hand_in_play_hide_their_cards_and_rule(live_app, sessions):
    """Issue 44: while its hand is in play a refusal shows neither its action (a card its seat
    holds) nor its rule (R3.4: that seat can follow suit), on the page, its JSON and its event
    stream (the opponent sees them all); once the hand is over it is shown whole. (The refused
    seat was told the rule at once, in the answer to its action.)"""
    from services.core.matches import get_match, get_observation

    client = live_app.test_client()
    match_id = real_match(sessions, seed=38)
    action, rule, hand = refused_in_play(sessions, match_id)
    assert rule == "R3.4"
    data = client.get(f"/api/matches/{match_id}").get_json()
    [refusal] = data["refusals"]
    assert refusal["rule"] is None and refusal["action"] == "…"
    text = json.dumps(data["refusals"])
    assert rule not in text and action.split(" ")[1] not in text
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "Refused actions" in page and rule not in page
    m = get_match(match_id, sessions=sessions)
    obs, _ = get_observation(match_id, 0, sessions=sessions)
    hidden = hidden_cards(sessions, match_id, m.seq) - {str(obs.trump_card)}  # (public: R10.1)
    assert action.split(" ")[1] in hidden
    assert_safe(in_play_part(page), hidden, "the page")
    response = client.get(f"/events/matches/{match_id}", buffered=False)
    try:
        event = next_update(iter(response.response))
    finally:
        response.close()
    assert "Refused actions" in event["html"]["live-match"]
    assert rule not in json.dumps(event)
    while get_match(match_id, sessions=sessions).hand_number == hand:  # the hand ends
        play(match_id, sessions, actions=1)
    data = client.get(f"/api/matches/{match_id}").get_json()
    assert (data["refusals"][0]["action"], data["refusals"][0]["rule"]) == (action, rule)
    assert rule in client.get(f"/matches/{match_id}").get_data(as_text=True)
