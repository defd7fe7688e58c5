"""Analyses on the dashboard: the replay page's "analyse" button adds a request row (the
dashboard's one write, through its own session), the replay shows each decision's loss and the
better action (exact and estimated in columns of their own), a bot's page its losses per match
by version and kind; bad requests are named and change nothing."""

from __future__ import annotations

import html
import importlib.util
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from db.analyses import Analysis, losses_by_version
from db.base import make_session_factory
from db.models import Match
from db.schema import create_all
from web import create_app
from workers.analysis import analyse_match

ROOT = Path(__file__).resolve().parents[2]


def bench_export():
    spec = importlib.util.spec_from_file_location("bench_export", ROOT / "bench" / "export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    for key in ("bummerl.sessions", "bummerl.analysis_requests"):
        if key in app.extensions:
            app.extensions[key].kw["bind"].dispose()


def test_ask_then_read_the_analysis_on_the_replay_and_the_bot_page(client, sessions):
    bench_export().fill(sessions.kw["bind"], 3, seed=4)
    with sessions() as s:
        m = s.scalars(select(Match).where(Match.state == "finished", Match.end_reason == "played")
                      .order_by(Match.seq).limit(1)).one()
        match_id, bot_id, version = m.id, m.bot0_id, m.version0
    page = f"/matches/{match_id}/hands/0"
    text = client.get(page).get_data(as_text=True)
    assert "analyse this match" in text
    assert client.get(f"/api/matches/{match_id}/analysis").status_code == 404
    answer = client.post(f"/matches/{match_id}/analyse", data={"next": page + "#analysis"})
    assert answer.status_code == 303 and answer.headers["Location"].endswith(page + "#analysis")
    assert "Analysis requested" in client.get(page).get_data(as_text=True)
    again = client.post(f"/matches/{match_id}/analyse", headers={"Accept": "application/json"})
    assert again.get_json() == {"match_id": match_id, "state": "requested"}  # one row only
    with sessions() as s:
        assert [r.match_id for r in s.scalars(select(Analysis))] == [match_id]

    assert analyse_match(match_id, sessions) == "done"  # what the worker's task does
    document = client.get(f"/api/matches/{match_id}/analysis").get_json()["document"]
    text = html.unescape(client.get(page).get_data(as_text=True))
    hand0 = [d for d in document["decisions"] if d["hand"] == 0]
    assert hand0 and "exact loss" in text and "estimated loss" in text
    for d in hand0:
        assert f'<td class="num">{d["seq"]}</td>' in text
    wrong = [d for d in hand0 if d["best"] != d["taken"]]
    for d in wrong:  # the better action, shown (its suit as a symbol)
        assert d["best"].split()[0] in text
    exact = [d for d in hand0 if d["method"] == "exact" and d["loss"] > 0]
    for d in exact:
        assert f'<b>{d["loss"]:.2f}</b>' in text
    for d in (d for d in hand0 if d["method"] == "estimate"):
        assert f'{d["loss"]:.2f} ± {d["loss_se"]:.2f}' in text

    text = html.unescape(client.get(f"/bots/{bot_id}").get_data(as_text=True))
    assert "Mistakes by version" in text
    with sessions() as s:
        (row,) = [v for v in losses_by_version(s, bot_id) if v["version"] == version]
    seat_tally = document["seats"][0]
    assert row["matches"] == 1 and row["exact"]["loss"] == round(seat_tally["exact"]["loss"], 3)
    assert f'<b>{row["exact"]["loss"]:.2f}</b>' in text
    for kind, loss in row["estimate"]["by_kind"].items():
        assert f"{kind} {loss:.2f}" in text
    api = client.get(f"/api/bots/{bot_id}").get_json()
    with sessions() as s:
        assert api["analysis_losses"] == json.loads(json.dumps(losses_by_version(s, bot_id)))


def test_a_request_for_no_finished_match_is_refused_and_changes_nothing(client, sessions):
    answer = client.post("/matches/77/analyse", headers={"Accept": "application/json"})
    assert answer.status_code == 400
    assert "match 77 is not a finished match" in answer.get_data(as_text=True)
    assert client.post("/matches/x/analyse").status_code in (400, 404)
    with sessions() as s:
        assert s.scalars(select(Analysis)).all() == []
