"""`bummerl exercises cut` (docs/analysis.md "Exercises"), as written there: on a database with
analysed matches it stores their exercises and prints what it did; again, it adds nothing; a
bad --limit is refused and changes nothing."""

from __future__ import annotations

import json

from exercisekit import analyse, finished_matches
from sqlalchemy import func, select

from cli.main import main as bummerl
from db.base import make_session_factory
from db.exercises import Exercise
from db.migrate import upgrade


def test_exercises_cut_stores_the_exercises_of_analysed_matches(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'ex.sqlite3'}"
    upgrade(url)
    sessions = make_session_factory(url)
    ids = finished_matches(sessions, 6)
    analyse(sessions, ids)  # as the workers' bummerl.analyse stores them
    assert bummerl(["exercises", "cut", "--limit", "0", "--database-url", url]) == 1
    assert "bad --limit 0" in capsys.readouterr().err
    assert bummerl(["exercises", "cut", "--database-url", url]) == 0
    done = json.loads(capsys.readouterr().out)
    with sessions() as s:
        stored = s.scalar(select(func.count()).select_from(Exercise))
        cut_from = set(s.scalars(select(Exercise.match_id)))
    assert done["matches"] == len(ids) and done["exercises"] == stored >= 1
    assert cut_from <= set(ids)
    assert bummerl(["exercises", "cut", "--database-url", url]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again == {"matches": len(ids) - len(cut_from), "exercises": 0}
    sessions.kw["bind"].dispose()
