"""The release horizon of exports (db.records): a finished leg of a duplicate pair whose other
leg has not ended holds its mirror's decks, so no export path gives it (db.records, gRPC
ExportMatches, /api/export, `bummerl games export`) and no cursor passes it; once the other
leg ends, a reader resuming from its old cursor gets both legs and everything after. By id it
is refused (FAILED_PRECONDITION, 409), and the dashboard shows no seed or deals of it. Matches
outside pairs, and a pair decided without its other leg, are not held back. On SQLite and
PostgreSQL, through a real service."""

from __future__ import annotations

import json

import grpc
import pytest
from bummerl.v1 import match_pb2
from servicekit import Database, running_service
from sqlalchemy import update

import engine
from cli.main import main
from db import records
from db.base import make_session_factory
from db.pairs import FORFEITED, PLAYING, VOID, DuplicatePair
from services.core import hooks
from services.core import matches as plain
from services.core.actions import abort_match, submit_action
from services.core.pairs import create_pair_match
from web import create_app


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no house moves: the tests submit every action
    monkeypatch.setattr(hooks, "on_match_end", [])
    if request.param == "postgres":
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


def plain_match(service, seats: list[int], seed: int) -> int:
    return finish(service, plain.create_match(seats, seed=seed, sessions=service.sessions,
                                              config=service.config).id)


def pair_of(service, a: int, b: int, seed: int = 4242, board: int = 1) -> int:
    with service.sessions.begin() as s:
        pair = DuplicatePair(owner="tournament", owner_id=7, round=1, board=board, seed=seed,
                             bot_a_id=a, bot_b_id=b, profile="soft", move_ms=4000,
                             bank_ms=9000, rated=False, state=PLAYING)
        s.add(pair)
        s.flush()
        return pair.id


def leg(service, pair_id: int, number: int) -> int:
    return create_pair_match(pair_id, number, sessions=service.sessions,
                             config=service.config).id


def set_pair(service, pair_id: int, state: str) -> None:
    with service.sessions.begin() as s:
        s.execute(update(DuplicatePair).where(DuplicatePair.id == pair_id).values(state=state))


def exported(service, after: records.Cursor | None = None, **where) -> list[int]:
    return [r["match_id"] for r, _ in records.export(service.sessions.kw["bind"],
                                                      records.ExportFilter(**where), after,
                                                      page=2)]


def grpc_export(service, **request) -> tuple[list[match_pb2.ExportMatchesResponse], str]:
    """The replies and the trailing `bummerl-withheld` of one ExportMatches."""
    call = service.matches.ExportMatches(match_pb2.ExportMatchesRequest(**request), timeout=30)
    replies = list(call)
    return replies, dict(call.trailing_metadata())["bummerl-withheld"]


def bummerl(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_leg_is_withheld_by_every_path_until_its_mirror_ends(service, web, capsys):
    (a, _), (b, _), (c, _) = (service.register(n) for n in ("anna", "bert", "cleo"))
    bind = service.sessions.kw["bind"]
    before = plain_match(service, [a, c], seed=1)
    pair = pair_of(service, a, b)
    first = finish(service, leg(service, pair, 0))  # leg 1 is not made yet (the pair is open)
    later = plain_match(service, [b, c], seed=2)  # finished after the withheld leg
    outside = plain_match(service, [c, a], seed=3)

    # db.records: the export stops before the leg, and says what it holds back.
    assert exported(service) == [before]
    tally = records.tally(bind, records.ExportFilter())
    assert (tally.total, tally.withheld) == (1, 3)
    assert tally.horizon is not None and tally.horizon.match_id == first
    ((_, cursor),) = records.export(bind, records.ExportFilter())
    assert cursor.match_id == before  # the cursor is not past the leg
    assert exported(service, cursor) == []
    with pytest.raises(records.Withheld, match="other leg is still running"):
        records.tally(bind, records.ExportFilter(match_id=first))
    with pytest.raises(records.Withheld, match=f"duplicate pair {pair}"):
        records.finished_record(bind, first)
    # cleo's matches hold no pair's leg: all of them, whatever finished after the leg
    assert exported(service, bot_id=c) == [before, later, outside]
    assert records.tally(bind, records.ExportFilter(bot_id=c)).withheld == 0
    # bert's: the leg is the first of them, so nothing yet
    assert exported(service, bot_id=b) == []

    # gRPC: the same, the trailing metadata says how many were held back; by id: refused.
    replies, withheld = grpc_export(service)
    assert [json.loads(r.record_json)["match_id"] for r in replies] == [before]
    assert replies[0].total == 1 and replies[0].cursor == cursor.text() and withheld == "3"
    assert grpc_export(service, cursor=cursor.text()) == ([], "3")
    with pytest.raises(grpc.RpcError) as refused:
        grpc_export(service, match_id=first)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "other leg is still running" in refused.value.details()
    got = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=first)).match
    assert got.state == match_pb2.MATCH_STATE_FINISHED and got.seed == 0  # (a leg: never)
    assert service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=before)).match.seed == 1

    # The dashboard: the same records and counts; by id a 409; its seat pages a 404.
    answer = web.get("/api/export")
    assert [json.loads(line)["match_id"] for line in answer.get_data(as_text=True).splitlines()] \
        == [before]
    assert answer.headers["X-Bummerl-Total"] == "1"
    assert answer.headers["X-Bummerl-Withheld"] == "3"
    answer = web.get(f"/api/export?match={first}")
    assert answer.status_code == 409 and "other leg" in answer.get_json()["error"]
    assert web.get(f"/api/matches/{first}/seats/0").status_code == 404
    shown = web.get(f"/api/matches/{first}").get_json()  # leg 1 not made yet: no seed shown
    assert shown["state"] == "finished" and shown["seed"] is None and shown["pair_in_play"]
    assert web.get(f"/api/matches/{first}/hands/0").status_code == 404

    # The CLI: one record, and it says how many are withheld and which cursor gets them.
    server = ("--server", service.server.address, "--no-progress")
    status, out, err = bummerl(capsys, "games", "export", *server)
    assert status == 0, err
    assert [json.loads(line)["match_id"] for line in out.splitlines()] == [before]
    assert "3 matches withheld until their pair's other leg ends" in err
    assert f"--cursor {cursor.text()}" in err
    status, out, err = bummerl(capsys, "games", "export", "--cursor", cursor.text(), *server)
    assert status == 0 and out == "" and "3 matches withheld" in err

    # Leg 1 runs: still withheld. Once it has finished (before the scheduler settles the
    # pair), the old cursor gets both legs and what finished between them, in order.
    second = leg(service, pair, 1)
    assert exported(service, cursor) == []
    assert records.tally(bind, records.ExportFilter(), cursor).withheld == 3
    finish(service, second)
    assert exported(service, cursor) == [first, later, outside, second]
    replies, withheld = grpc_export(service, cursor=cursor.text())
    assert [json.loads(r.record_json)["match_id"] for r in replies] == \
        [first, later, outside, second]
    assert replies[0].total == 4 and withheld == "0"
    assert records.finished_record(bind, first)["seed"] == 4242
    assert web.get(f"/api/export?match={first}").status_code == 200
    assert web.get(f"/api/matches/{first}").get_json()["seed"] == 4242
    status, out, err = bummerl(capsys, "games", "export", "--cursor", cursor.text(), *server)
    assert len(out.splitlines()) == 4 and "withheld" not in err


def test_legs_played_at_once_hold_back_whichever_ends_first(service):
    (a, _), (b, _) = service.register("anna"), service.register("bert")
    pair = pair_of(service, a, b, seed=77)
    zero, one = leg(service, pair, 0), leg(service, pair, 1)
    finish(service, one)
    assert exported(service) == []
    assert exported(service, match_id=one) == []
    finish(service, zero)
    assert exported(service) == [one, zero]


@pytest.mark.parametrize("decided", [FORFEITED, VOID])
def test_a_pair_decided_without_its_other_leg_releases_the_finished_one(service, decided):
    (a, _), (b, _) = service.register("anna"), service.register("bert")
    pair = pair_of(service, a, b, seed=78)
    first = finish(service, leg(service, pair, 0))
    assert exported(service) == []
    set_pair(service, pair, decided)  # leg 1 is never made: nothing mirrors leg 0
    assert exported(service) == [first]


def test_a_forfeited_pair_still_withholds_while_its_other_leg_runs(service):
    (a, _), (b, _) = service.register("anna"), service.register("bert")
    pair = pair_of(service, a, b, seed=79)
    zero, one = leg(service, pair, 0), leg(service, pair, 1)
    finish(service, zero)
    set_pair(service, pair, FORFEITED)  # (the caller aborts the running leg afterwards)
    assert exported(service) == []
    abort_match(one, "bert withdrew", sessions=service.sessions)
    assert exported(service) == [zero]


def test_a_leg_that_finishes_while_an_export_runs_is_not_sent(service):
    (a, _), (b, _), (c, _) = (service.register(n) for n in ("anna", "bert", "cleo"))
    done = [plain_match(service, [a, c], seed=s) for s in (11, 12, 13)]
    pair = pair_of(service, a, b, seed=80)
    running = leg(service, pair, 0)
    pages = records.pages(service.sessions.kw["bind"], records.ExportFilter(), page=2)
    assert [r["match_id"] for r, _ in next(pages)] == done[:2]
    finish(service, running)  # finishes last: the next page would reach it
    after = plain_match(service, [a, c], seed=14)
    assert [r["match_id"] for page in pages for r, _ in page] == [done[2]]
    sessions = make_session_factory(service.database.url)
    try:  # a fresh process's view: the same
        assert [r["match_id"] for r, _ in records.export(sessions.kw["bind"],
                                                          records.ExportFilter())] == done
    finally:
        sessions.kw["bind"].dispose()
    assert after not in exported(service)
