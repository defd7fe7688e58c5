"""Games as data on the dashboard: /api/export (streamed JSON lines of finished matches,
filters, cursors), a finished match as one seat saw it, the download links, and the safety of
a running match: never exported, its seat pages a 404 that shows none of its hidden cards."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from test_web_live import assert_safe
from test_web_pages import play, real_match
from web_safety import hidden_cards

from db.base import make_session_factory
from db.schema import create_all
from engine.matchrecord import seat_view, verify_record
from services.core import hooks
from web import create_app

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "match-record.schema.json").read_text()))


@pytest.fixture
def sessions(tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
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


def lines(answer) -> list[dict]:
    return [json.loads(line) for line in answer.get_data(as_text=True).splitlines()]


def more_matches(sessions, count: int, first_seed: int = 50) -> list[int]:
    from services.core.matches import create_match

    made = []
    for seed in range(first_seed, first_seed + count):
        made.append(create_match([1, 2], seed=seed, sessions=sessions).id)
        play(made[-1], sessions, seed=seed)
    return made


def test_export_streams_finished_matches_as_records(client, sessions):
    done = real_match(sessions, seed=41)
    play(done, sessions)
    from services.core.matches import create_match

    running = create_match([1, 2], seed=99, sessions=sessions).id
    play(running, sessions, actions=5)
    answer = client.get("/api/export")
    assert answer.status_code == 200 and answer.mimetype == "application/x-ndjson"
    assert answer.headers["X-Bummerl-Total"] == "1"
    assert answer.headers["Content-Disposition"] == 'attachment; filename="bummerl-games.jsonl"'
    [record] = lines(answer)
    SCHEMA.validate(record)
    assert record["match_id"] == done and verify_record(record)["verified"]
    named = client.get("/api/export?bot=alice")
    assert named.headers["Content-Disposition"] == \
        'attachment; filename="bummerl-games-alice.jsonl"'
    assert [r["match_id"] for r in lines(named)] == [done]


def test_export_pages_are_streamed_and_cursors_resume(client, sessions):
    real_match(sessions, seed=42)  # running: bots 1 and 2 exist
    made = more_matches(sessions, 5)
    answer = client.get("/api/export?limit=4", buffered=False)
    assert answer.is_streamed  # a generator of pages, each read from the database when sent
    chunks = list(answer.response)
    answer.close()
    records = [json.loads(line) for chunk in chunks for line in chunk.decode().splitlines()]
    assert [r["match_id"] for r in records] == made[:4]
    from db import records as model

    cursor = model.Cursor(model._parse_time(records[1]["finished_at"]), records[1]["match_id"])
    rest = lines(client.get(f"/api/export?cursor={cursor.text()}"))
    assert [r["match_id"] for r in rest] == made[2:]


@pytest.mark.parametrize(("query", "status", "says"), [
    ("bot=nobody", 404, "no bot named 'nobody'"),
    ("opponent=nobody", 404, "no bot named 'nobody'"),
    ("profile=hard", 400, "unknown profile 'hard'"),
    ("origin=pub", 400, "unknown origin 'pub'"),
    ("since=yesterday", 400, "since must be an ISO 8601"),
    ("since=2026-12-02&until=2026-12-01", 400, "since must be before until"),
    ("cursor=12", 400, "bad cursor"),
    ("limit=0", 400, "limit must be 1 or more"),
    ("match=x", 400, "match id must be a whole number"),
    ("match=99999999999999999999999", 400, "match id must be from"),
    ("match=%EF%BC%91%EF%BC%92", 400, "match id must be a whole number"),  # full-width 12
    ("match=777", 404, "no match with id 777"),
    ("bot=a%00b", 404, "bot names are 1-40 letters"),
    ("version=1%00", 400, "version must be printable"),
    ("since=0001-01-01T00:00:00%2B14:00", 400, "since is out of range"),
])
def test_bad_exports_say_what_is_wrong(client, sessions, query, status, says):
    real_match(sessions, seed=43)
    answer = client.get(f"/api/export?{query}")
    assert answer.status_code == status and says in answer.get_json()["error"]


def test_a_running_match_is_never_exported_at_any_seq(client, sessions):
    finished = real_match(sessions, seed=44)
    play(finished, sessions)
    from services.core.matches import create_match, get_match

    running = create_match([1, 2], seed=45, sessions=sessions).id
    seed = 45
    while get_match(running, sessions=sessions).state == "running":
        seq = get_match(running, sessions=sessions).seq
        hidden = hidden_cards(sessions, running, seq)
        exported = client.get("/api/export").get_data(as_text=True)
        assert [r["match_id"] for r in map(json.loads, exported.splitlines())] == [finished]
        for path in (f"/matches/{running}/seats/0", f"/api/matches/{running}/seats/1",
                     f"/api/export?match={running}"):
            answer = client.get(path)
            text = answer.get_data(as_text=True)
            if "export" in path:  # a clear refusal, not an empty 200
                assert answer.status_code == 409, (answer.status_code, text)
                assert f"match {running} is still running" in answer.get_json()["error"]
            else:
                assert answer.status_code == 404
            assert_safe(text, hidden, f"{path} at seq {seq}")
            assert str(seed) not in text.replace(str(running), "")
        play(running, sessions, actions=3, seed=seq)
    assert [r["match_id"] for r in lines(client.get("/api/export"))] == [finished, running]


def test_a_finished_match_as_each_seat_saw_it(client, sessions):
    match_id = real_match(sessions, seed=46)
    play(match_id, sessions)
    [record] = lines(client.get(f"/api/export?match={match_id}"))
    for seat in (0, 1):
        data = client.get(f"/api/matches/{match_id}/seats/{seat}").get_json()
        assert data["turns"] == seat_view(record, seat)
        assert data["bot"]["name"] == ("alice", "bob")[seat]
        assert all(t["observation"]["seat"] == seat and t["answer"] for t in data["turns"])
        page = client.get(f"/matches/{match_id}/seats/{seat}").get_data(as_text=True)
        assert page.count('<tr id="seq-') == len(data["turns"])
        assert f"as seat {seat} (" in page and f">{data['bot']['name']}</a>) saw it" in page
    assert client.get(f"/matches/{match_id}/seats/2").status_code == 404


def test_download_links_on_the_bot_and_finished_match_pages(client, sessions):
    match_id = real_match(sessions, seed=47)
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "download the record" not in page and "saw it" not in page  # running
    play(match_id, sessions)
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert f'href="/api/export?match={match_id}"' in page
    assert f'href="/matches/{match_id}/seats/0"' in page
    assert f'href="/matches/{match_id}/seats/1"' in page
    bot = client.get("/bots/1").get_data(as_text=True)
    assert 'href="/api/export?bot=alice"' in bot and "finished matches (1)" in bot
