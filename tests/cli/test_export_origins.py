"""Every match records where it came from, and `bummerl games export --origin X` (as
docs/match-record.md gives it) finds the matches of each origin, and only those: a ladder
match (CreateMatch with `ladder`, as the ladder's workers make it), `bummerl match create`
(manual), a challenge (the Challenge RPC), a tournament (`bummerl tournament create`, its legs
started by the events scheduler's steps) and a version test's duplicate pair (its legs made by
CreateMatch with the pair, as workers.pairs makes them). The dashboard's filters
(/matches?origin=, /api/matches?origin=) and /api/export?origin= find the same. 'people' is
reserved for the web table: the filter is accepted and finds nothing yet. Through a real
service, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from bummerl.v1 import bot_pb2
from servicekit import OPERATOR, Database, auth, running_service
from sqlalchemy import func, select

import engine
from cli.games import ORIGINS as cli_origins
from cli.main import main
from db.models import HOUSE, ORIGINS, RUNNING, Match
from db.pairs import PLAYING, DuplicatePair
from services.core import hooks
from services.core import matches as plain
from services.core.actions import submit_action
from services.ops import bots
from web import create_app
from workers import events
from workers.service import Service as WorkerService


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no house moves: the test plays every action
    monkeypatch.setattr(hooks, "on_match_end", [])
    if request.param == "postgres":  # a database of its own (the dashboard connects to it)
        url, _ = request.getfixturevalue("postgres_sessions")
    else:
        url = f"sqlite:///{tmp_path / 'bummerl.sqlite3'}"
    with running_service(Database(url)) as svc:
        yield svc


@pytest.fixture
def web(service):
    app = create_app({"DATABASE_URL": service.database.url, "TESTING": True})
    yield app.test_client()
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def finish(service, match_id: int) -> int:
    """Play match `match_id` to its end through the service's plain functions."""
    m, _, log = plain.match_hands(match_id, sessions=service.sessions)
    game = engine.Match.replay(m.seed, m.profile,
                               [(a.seat, engine.Action.from_text(a.action)) for a in log])
    while not game.is_over:
        seat, action = game.to_act, game.legal_actions()[-1]
        submit_action(match_id, seat, action, expected_seq=len(game.history),
                      sessions=service.sessions, config=service.config)
        game.apply(seat, action)
    return match_id


def pair(service, owner: str, a: int, b: int) -> int:
    with service.sessions.begin() as s:
        row = DuplicatePair(owner=owner, owner_id=1, round=1, board=1, seed=99, bot_a_id=a,
                            bot_b_id=b, profile="soft", move_ms=4000, bank_ms=9000,
                            rated=False, state=PLAYING)
        s.add(row)
        s.flush()
        return row.id


def export(capsys, service, origin: str) -> tuple[list[dict], str]:
    status = main(["games", "export", "--origin", origin, "--server", service.server.address])
    out, err = capsys.readouterr()
    assert status == 0, err
    return [json.loads(line) for line in out.splitlines()], err


def test_each_origin_is_recorded_and_found_by_its_export_filter(service, web, capsys):
    h1 = bots.register_bot("house-a", kind=HOUSE, house_strategy="random",
                           sessions=service.sessions)[0].id
    h2 = bots.register_bot("house-b", kind=HOUSE, house_strategy="random",
                           sessions=service.sessions)[0].id
    author, token = service.register("author")
    workers = WorkerService(service.server.address, OPERATOR)
    made: dict[str, list[int]] = {}
    made["ladder"] = [workers.create_match((h1, h2), "soft", ladder=True)]
    assert main(["match", "create", "house-a", "author", "--server", service.server.address,
                 "--operator-token", OPERATOR]) == 0
    made["manual"] = [int(capsys.readouterr().out.split("match id ")[1].split()[0])]
    reply = service.bots.Challenge(bot_pb2.ChallengeRequest(opponent="house-b", matches=2),
                                   metadata=auth(token), timeout=10)
    made["challenge"] = [m.match_id for m in reply.matches]
    pair_id = pair(service, "test", author, h1)
    made["test"] = [workers.create_pair_match(pair_id, leg) for leg in (0, 1)]
    for ids in made.values():
        for match_id in ids:
            finish(service, match_id)
    assert main(["tournament", "create", "--format", "gauntlet", "--bots", "house-a,house-b",
                 "--time-control", "2000+4000", "--operator-token", OPERATOR, "--server",
                 service.server.address]) == 0
    tournament_id = int(capsys.readouterr().out.split("tournament ")[1].split()[0])
    made["tournament"] = []
    for _ in range(6):  # each step starts what is due; the test plays it out
        if events.step(tournament_id, service.sessions, workers) == "finished":
            break
        with service.sessions() as s:
            running = list(s.scalars(select(Match.id).where(
                Match.state == RUNNING, Match.origin == "tournament",
                Match.event_id == tournament_id).order_by(Match.id)))
        for match_id in running:
            made["tournament"].append(finish(service, match_id))
    assert len(made["tournament"]) == 2  # one duplicate pair: its two legs
    for origin, ids in made.items():
        records, err = export(capsys, service, origin)
        assert [r["match_id"] for r in records] == ids, (origin, err)
        assert {r["origin"] for r in records} == {origin}
        page = web.get(f"/api/matches?origin={origin}").get_json()
        assert sorted(m["id"] for m in page["matches"]) == ids, origin
        assert f"<option selected>{origin}</option>" in web.get(
            f"/matches?origin={origin}").get_data(as_text=True)
        lines = web.get(f"/api/export?origin={origin}").get_data(as_text=True).splitlines()
        assert [json.loads(line)["match_id"] for line in lines] == ids, origin
    assert set(made) | {"people"} == set(ORIGINS) == set(cli_origins)
    records, err = export(capsys, service, "people")
    assert records == [] and "no finished match" in err
    assert web.get("/api/matches?origin=people").get_json()["matches"] == []
    assert web.get("/api/export?origin=people").get_data(as_text=True) == ""
    refused = web.get("/api/matches?origin=elsewhere")
    assert refused.status_code == 400 and "unknown origin 'elsewhere'" in refused.get_json()[
        "error"]
    with service.sessions() as s:  # nothing is left without an origin
        assert s.scalar(select(func.count()).where(Match.origin.is_(None))) == 0
