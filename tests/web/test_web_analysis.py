"""Analyses on the dashboard: an operator asks a real engine service (AdminService.AnalyseMatch
with the operator token, as `bummerl analyse` does), which adds the request row and fires the
hook the workers enqueue on (the replay page's button is for a person who played in the match:
tests/web/test_web_input.py); the replay shows each decision's loss and the better action (exact
and estimated in columns of their own), a bot's page its losses per match by version and kind;
bad requests are named and change nothing."""

from __future__ import annotations

import html
import importlib.util
import json
import re
from pathlib import Path

import pytest
from bummerl.v1 import admin_pb2, admin_pb2_grpc
from servicekit import OPERATOR, auth, fresh_database, running_service
from sqlalchemy import select

from db.analyses import Analysis, losses_by_version
from db.models import Match
from services.core import hooks
from services.core import matches as plain
from web import create_app
from workers.analysis import analyse_match
from workers.testing import wait_until

ROOT = Path(__file__).resolve().parents[2]


def bench_export():
    spec = importlib.util.spec_from_file_location("bench_export", ROOT / "bench" / "export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def service(tmp_path, request, monkeypatch):
    asked: list[int] = []
    monkeypatch.setattr(hooks, "on_analysis_requested", [asked.append])
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        svc.asked = asked
        yield svc


@pytest.fixture
def sessions(service):
    return service.sessions


def csrf(client) -> dict[str, str]:
    """The CSRF header of `client`'s session (every POST needs it: web/security.py), read from
    a page's form as a browser's would be."""
    page = client.get("/login").get_data(as_text=True)
    return {"X-CSRFToken": re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)}


def make_client(service, **config):
    app = create_app({"DATABASE_URL": service.database.url, "PAGE_SIZE": 3, "TESTING": True,
                      "SERVICE_ADDRESS": service.server.address, **config})
    return app, app.test_client()


@pytest.fixture
def client(service):
    app, client = make_client(service)
    yield client
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def test_ask_then_read_the_analysis_on_the_replay_and_the_bot_page(client, sessions, service):
    bench_export().fill(sessions.kw["bind"], 3, seed=4)
    with sessions() as s:
        m = s.scalars(select(Match).where(Match.state == "finished", Match.end_reason == "played")
                      .order_by(Match.seq).limit(1)).one()
        match_id, bot_id, version = m.id, m.bot0_id, m.version0
    page = f"/matches/{match_id}/hands/0"
    text = client.get(page).get_data(as_text=True)
    # an anonymous visitor gets no button (only a person who played in it may ask, web/
    # analyses.py; tests/web/test_web_input.py): operators ask through AdminService
    assert "analyse this match" not in text and f"bummerl analyse {match_id}" in text
    assert client.get(f"/api/matches/{match_id}/analysis").status_code == 404
    admin = admin_pb2_grpc.AdminServiceStub(service.channel)
    for _ in range(2):  # what `bummerl analyse` asks
        reply = admin.AnalyseMatch(admin_pb2.AnalyseMatchRequest(match_id=match_id),
                                   metadata=auth(OPERATOR))
        assert reply.state == "requested"  # one row only
    assert "Analysis requested" in client.get(page).get_data(as_text=True)
    with sessions() as s:
        assert [r.match_id for r in s.scalars(select(Analysis))] == [match_id]
    # each ask of a requested analysis fires the hook (the workers' task is idempotent)
    wait_until(lambda: service.asked == [match_id, match_id], 10, what="the hooks")

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


def test_an_anonymous_request_is_refused_and_changes_nothing(client, sessions, service):
    assert client.post("/matches/77/analyse").status_code == 400  # no CSRF token
    (a, _), (b, _) = service.register("mybot"), service.register("randy")
    running = plain.create_match([a, b], seed=1, sessions=sessions, config=service.config)
    for match_id in (77, running.id):
        answer = client.post(f"/matches/{match_id}/analyse",
                             headers={"Accept": "application/json", **csrf(client)})
        assert answer.status_code == 401 and "log in first" in answer.get_data(as_text=True)
    assert client.post("/matches/x/analyse", headers=csrf(client)).status_code == 400
    with sessions() as s:
        assert s.scalars(select(Analysis)).all() == []
    assert service.asked == []
