"""The Alembic migrations build the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

import db
from db.migrate import downgrade, upgrade

OWN_TABLES = {"bots", "matches", "hands", "actions", "duplicate_pairs", "tournaments",
              "tournament_entries", "tournament_byes",
              "people", "person_invites", "people_ratings", "people_rated",
              "exercises", "exercise_solves"}


def _table_of(diff) -> str | None:
    item = diff[0] if isinstance(diff, list) else diff
    for part in item[1:]:
        name = getattr(part, "name", None)
        table = getattr(part, "table", None)
        if table is not None:
            return table.name
        if isinstance(part, str) and part in OWN_TABLES:
            return part
        if name in OWN_TABLES:
            return name
    return None


def test_migrations_match_the_models(database_url):
    upgrade(database_url)
    engine = create_engine(database_url)
    with engine.connect() as conn:
        assert set(inspect(conn).get_table_names()) >= OWN_TABLES
        diffs = compare_metadata(MigrationContext.configure(conn), db.Base.metadata)
    own = [d for d in diffs if _table_of(d) in OWN_TABLES]
    assert own == []
    downgrade(database_url)
    with engine.connect() as conn:
        assert not OWN_TABLES & set(inspect(conn).get_table_names())
    engine.dispose()


def test_waiting_for_the_migrations(tmp_path):
    from db import migrate

    url = f"sqlite:///{tmp_path / 'wait.sqlite3'}"
    assert not migrate.is_current(url)
    assert migrate.main([url, "--wait", "0.1"]) == 1  # nothing migrated: it gives up
    assert migrate.main([url]) == 0
    assert migrate.is_current(url) and migrate.main([url, "--wait", "5"]) == 0


def test_a_moves_update_of_its_match_row_can_be_a_hot_update(database_url):
    """No column a move changes is indexed (the deadline was), and on PostgreSQL the matches
    table leaves room on its pages: each action's update of its row can then be a heap-only
    tuple update, without new entries in the table's indexes (migration 0006)."""
    from services.core.store import CHANGING

    upgrade(database_url)
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            indexed = {column for index in inspect(conn).get_indexes("matches")
                       for column in index["column_names"]}
            # (a duplicate pair's key, pair_id and pair_leg, is set once, at creation)
            assert indexed == {"state", "bot0_id", "bot1_id", "pair_id", "pair_leg",
                               "finished_at", "id"}, indexed
            # each changes once, when the match ends (finished_at: the exports' order, 0009)
            assert indexed & set(CHANGING) == {"state", "finished_at"}
            if conn.dialect.name == "postgresql":
                options = conn.execute(text(
                    "SELECT reloptions FROM pg_class WHERE oid = 'matches'::regclass")).scalar()
                assert options == ["fillfactor=80"], options
    finally:
        engine.dispose()
        downgrade(database_url)


def test_the_readme_s_wait_command_as_written(tmp_path):
    """README: `python -m db.migrate --wait` (no SECONDS: the default, 600 s), as the init
    containers run it; `--wait SECONDS` also, and a URL given before it."""
    import os
    import subprocess
    import sys

    from db import migrate

    assert migrate.build_parser().parse_args(["--wait"]).wait == migrate.WAIT_SECONDS
    assert migrate.build_parser().parse_args(["--wait", "900"]).wait == 900
    url = f"sqlite:///{tmp_path / 'readme.sqlite3'}"
    env = {**os.environ, "DATABASE_URL": url}
    root = Path(__file__).resolve().parents[2]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "db.migrate", *args], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)

    assert run("--wait", "0.1").returncode == 1  # not migrated yet: gives up after 0.1 s
    assert run().returncode == 0
    done = run("--wait")
    assert done.returncode == 0, done.stderr
    assert run(url, "--wait").returncode == 0
