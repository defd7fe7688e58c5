"""Migration 0019_bot_names_case makes bot names unique whatever their case (issue 44), on
SQLite and PostgreSQL: bots that differ only in case are renamed first (the oldest keeps its
name, each later one becomes `<name>-<id>`), then `mybot` can no longer be stored beside
`MyBot`; tokens, ids and everything else of a renamed bot stay."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, exc, text

from db.migrate import downgrade, upgrade

BOT = ("INSERT INTO bots (id, name, kind, token_hash, created_at) VALUES "
       "(:id, :name, 'remote', :hash, '2026-12-01 10:00:00+00')")
LONG = "L" * 40


def test_case_duplicates_are_renamed_and_names_become_unique_whatever_the_case(
        database_url, capsys):
    upgrade(database_url, "0018_exercises")
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            for bot_id, name in ((1, "MyBot"), (2, "other"), (3, "mybot"), (4, "MYBOT"),
                                 (5, "mybot-4"), (6, LONG), (7, LONG.lower())):
                conn.execute(text(BOT), {"id": bot_id, "name": name, "hash": f"h{bot_id}"})
        upgrade(database_url)
        assert "bot 3 renamed 'mybot' -> 'mybot-3'" in capsys.readouterr().out
        with engine.connect() as conn:
            names = dict(conn.execute(text("SELECT id, name FROM bots")).all())
            hashes = dict(conn.execute(text("SELECT id, token_hash FROM bots")).all())
        # the oldest keeps its name; 'MYBOT-4' would be 'mybot-4' (bot 5's) in lower case
        assert names == {1: "MyBot", 2: "other", 3: "mybot-3", 4: "MYBOT-4x", 5: "mybot-4",
                         6: LONG, 7: "l" * 38 + "-7"}
        assert hashes == {i: f"h{i}" for i in range(1, 8)}  # tokens stay
        with pytest.raises(exc.IntegrityError), engine.begin() as conn:
            conn.execute(text(BOT), {"id": 8, "name": "OTHER", "hash": "h8"})
        with engine.begin() as conn:  # a new name still goes in
            conn.execute(text(BOT), {"id": 8, "name": "Other2", "hash": "h8"})
        downgrade(database_url, "0018_exercises")
        with engine.begin() as conn:  # back: case-sensitive again
            conn.execute(text(BOT), {"id": 9, "name": "OTHER", "hash": "h9"})
    finally:
        engine.dispose()
