"""`bummerl db prune` (db.prune): what it keeps and drops, a dry run changes nothing, pages,
records and ratings lose nothing they need, running it again does nothing; on real matches,
SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from historykit import NOW, add_bots, add_match, history_database, rate, table_rows
from sqlalchemy import func, select

from cli.main import main as bummerl
from db import records
from db.models import (
    ABORTED,
    FINISHED,
    RUNNING,
    ActionArchive,
    ActionLog,
    Bot,
    Hand,
    Match,
    Refusal,
)
from db.prune import BadPrune, prune
from db.ratings import LadderMatch, Rating, RatingHistory
from web import create_app, queries

KEPT = (Match, Hand, Refusal, LadderMatch, Rating, RatingHistory, Bot)
PRUNE_MARKS = ("actions_pruned_at", "actions_archive")


@pytest.fixture(params=["sqlite", "postgres"])
def sessions(request, tmp_path):
    with history_database(request.param, request, tmp_path) as factory:
        yield factory


@pytest.fixture
def matches(sessions):
    """Old: a rated ladder match, a ladder match not yet rated, a challenge, an aborted match.
    Recent: a rated ladder match. And one running."""
    a, b, c = add_bots(sessions, ["house", "alpha", "beta"])
    old = NOW - timedelta(days=40)
    made = {
        "old rated": add_match(sessions, a, b, created=old, seed=1, ladder=True),
        "old unrated ladder": add_match(sessions, b, c, created=old, seed=2, ladder=True),
        "old challenge": add_match(sessions, c, a, created=old, seed=3, origin="challenge"),
        "old aborted": add_match(sessions, a, c, created=old, seed=4, fate=ABORTED, cut=12),
        "recent rated": add_match(sessions, b, a, created=NOW - timedelta(days=2), seed=5,
                                  ladder=True),
        "running": add_match(sessions, c, b, created=NOW, seed=6, fate=RUNNING, cut=20),
    }
    rate(sessions, made["old rated"])
    rate(sessions, made["recent rated"])
    with sessions.begin() as s:
        s.add(Refusal(match_id=made["old rated"], seq=3, seat=0, action="play QS",
                      rule="R5.2", message="must follow suit (R5.2)", created_at=old))
    return made


def actions_of(sessions, model, match_id):
    with sessions() as s:
        return [(r.id, r.seq, r.seat, r.action, r.request_id, r.think_ms) for r in s.scalars(
            select(model).where(model.match_id == match_id).order_by(model.seq))]


def kept(sessions):
    return {m.__tablename__: table_rows(sessions, m, PRUNE_MARKS if m is Match else ())
            for m in KEPT}


def everything(sessions):
    return {**kept(sessions), "matches": table_rows(sessions, Match),
            "actions": table_rows(sessions, ActionLog),
            "actions_archive": table_rows(sessions, ActionArchive)}


def service_log(sessions, match_id):
    """The action log the service's GetMatch and spectators read."""
    from services.core.matches import match_actions, match_hands

    _, _, log = match_hands(match_id, sessions=sessions)
    _, tail, _ = match_actions(match_id, 5, sessions=sessions)
    return [(a.seq, a.seat, a.action) for a in log], [a.seq for a in tail]


def pages(sessions, match_id):
    detail = queries.match_detail(sessions, match_id)
    for key in ("actions_archive", "actions_pruned_at"):
        detail.pop(key)
    return detail


def test_a_dry_run_counts_and_changes_nothing(sessions, matches):
    before = everything(sessions)
    done = prune(sessions.kw["bind"], 30, "table", dry_run=True)
    due = {matches["old rated"], matches["old challenge"]}
    with sessions() as s:
        logged = s.scalar(select(func.count()).select_from(ActionLog)
                          .where(ActionLog.match_id.in_(due)))
    assert (done.matches, done.actions, done.dry_run) == (2, logged, True) and logged > 0
    assert everything(sessions) == before


def test_table_archive_moves_old_settled_logs_and_keeps_everything_else(sessions, matches):
    bind = sessions.kw["bind"]
    due = [matches["old rated"], matches["old challenge"]]
    logs = {m: actions_of(sessions, ActionLog, m) for m in matches.values()}
    shown = {m: pages(sessions, m) for m in due}
    replays = {m: queries.hand_replay(sessions, m, 0) for m in due}
    exported = list(records.export(bind, records.ExportFilter()))
    served = {m: service_log(sessions, m) for m in due}
    rest = kept(sessions)

    done = prune(bind, 30, "table", now=NOW)
    assert (done.matches, done.actions) == (2, sum(len(logs[m]) for m in due))
    for name, m in matches.items():
        if m in due:  # moved whole, row for row
            assert actions_of(sessions, ActionLog, m) == []
            assert actions_of(sessions, ActionArchive, m) == logs[m]
        else:  # not due: too recent, running, aborted, or its rating pending
            assert actions_of(sessions, ActionLog, m) == logs[m], name
            assert actions_of(sessions, ActionArchive, m) == [], name
    assert kept(sessions) == rest  # results, hands, refusals, ladder rows, ratings, history
    with sessions() as s:
        marks = {m.id: (m.actions_archive, m.actions_pruned_at is not None)
                 for m in s.scalars(select(Match))}
    assert {m for m, (archive, _) in marks.items() if archive} == set(due)
    assert all(marks[m] == ("table", True) for m in due)
    for m in due:  # the pages and exports read the archive: the same as before
        assert pages(sessions, m) == shown[m]
        assert queries.match_detail(sessions, m)["actions_archive"] == "table"
        assert queries.hand_replay(sessions, m, 0) == replays[m]
    assert list(records.export(bind, records.ExportFilter())) == exported
    assert {m: service_log(sessions, m) for m in due} == served  # the service's GetMatch too

    again = everything(sessions)
    assert prune(bind, 30, "table", now=NOW).matches == 0  # idempotent
    assert everything(sessions) == again


def test_the_match_page_says_the_log_was_archived(sessions, matches):
    prune(sessions.kw["bind"], 30, "table", now=NOW)
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "TESTING": True})
    page = app.test_client().get(f"/matches/{matches['old rated']}")
    assert page.status_code == 200 and b"was archived on" in page.data
    assert b"play" in page.data  # the transcript, from the archive table
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def test_records_archive_writes_the_records_then_drops_the_logs(sessions, matches, tmp_path):
    bind = sessions.kw["bind"]
    due = [matches["old rated"], matches["old challenge"]]
    records_before = {r["match_id"]: r for r, _ in records.export(bind, records.ExportFilter())}
    hands_before = {m: queries.match_detail(sessions, m)["hands"] for m in due}
    rest = kept(sessions)
    ratings = table_rows(sessions, Rating)
    out = tmp_path / "archive"
    out.mkdir()

    done = prune(bind, 30, "records", out, batch=1, now=NOW)
    assert done.matches == 2 and len(done.files) == 2  # one file per batch
    written = [json.loads(line) for f in sorted(out.iterdir()) for line in f.open()]
    assert [r["match_id"] for r in written] == due
    assert written == [records_before[m] for m in due]  # the whole record, actions and all
    assert not list(out.glob("*.partial"))
    for m in due:
        assert actions_of(sessions, ActionLog, m) == []
        assert actions_of(sessions, ActionArchive, m) == []
        detail = queries.match_detail(sessions, m)
        assert detail["actions_archive"] == "records" and detail["table"] is None
        assert [{k: v for k, v in h.items() if k != "actions"} for h in detail["hands"]] == \
            [{k: v for k, v in h.items() if k != "actions"} for h in hands_before[m]]
        with pytest.raises(queries.Missing, match="archived as match records"):
            queries.hand_replay(sessions, m, 0)
        with pytest.raises(records.NoSuchThing, match="archived as match records"):
            records.finished_record(bind, m)
    assert kept(sessions) == rest and table_rows(sessions, Rating) == ratings
    exported = {r["match_id"] for r, _ in records.export(bind, records.ExportFilter())}
    assert exported == set(records_before) - set(due)  # their records are in the files
    assert prune(bind, 30, "records", out, now=NOW).matches == 0


def test_a_match_pruned_later_is_still_rated_once(sessions, matches):
    """The ladder match whose rating was pending keeps its log; once rated, it goes too."""
    from workers.ladder import rate_match

    bind = sessions.kw["bind"]
    prune(bind, 30, "table", now=NOW)
    pending = matches["old unrated ladder"]
    assert actions_of(sessions, ActionLog, pending)
    assert rate_match(pending, sessions)
    assert prune(bind, 30, "table", now=NOW).matches == 1
    assert not rate_match(pending, sessions)
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(RatingHistory)
                        .where(RatingHistory.match_id == pending)) == 2


def test_bad_requests_change_nothing(sessions, matches, tmp_path):
    bind = sessions.kw["bind"]
    before = everything(sessions)
    for args, message in [((30, "records"), "needs a directory"),
                          ((30, "records", tmp_path / "nope"), "is not a directory"),
                          ((30, "table", tmp_path), "with --archive records only"),
                          ((30, "files"), "unknown archive"),
                          ((-1, "table"), "days must be 0 or more")]:
        with pytest.raises(BadPrune, match=message):
            prune(bind, *args)
    assert everything(sessions) == before


def test_the_command(sessions, matches, capsys):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    before = everything(sessions)
    assert bummerl(["db", "prune", "--actions-older-than", "30", "--archive", "table",
                    "--dry-run", "--database-url", url]) == 0
    assert "dry run: 2 matches" in capsys.readouterr().out
    assert everything(sessions) == before
    assert bummerl(["db", "prune", "--actions-older-than", "30", "--archive", "records",
                    "--database-url", url]) == 1
    assert "needs a directory" in capsys.readouterr().err
    assert bummerl(["db", "prune", "--actions-older-than", "30", "--archive", "table",
                    "--database-url", url]) == 0
    assert "pruned 2 matches" in capsys.readouterr().out
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)
                        .where(Match.actions_archive.is_not(None), Match.state == FINISHED)) == 2
