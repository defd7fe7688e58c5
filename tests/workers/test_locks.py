"""One ladder tick at a time across workers (a PostgreSQL advisory lock)."""

from __future__ import annotations

from db.base import make_session_factory
from workers import ladder
from workers.locks import only_one


def test_one_tick_at_a_time(postgres_sessions):
    url, sessions = postgres_sessions
    other = make_session_factory(url)  # another process's engine
    try:
        with only_one(sessions, "ladder-tick") as mine:
            assert mine
            with only_one(other, "ladder-tick") as theirs:
                assert not theirs
            with only_one(other, "something-else") as theirs:
                assert theirs
            assert ladder.tick(other) == {}  # skipped: this one holds the lock
        with only_one(other, "ladder-tick") as theirs:
            assert theirs  # released
        assert ladder.tick(other) == {"soft": []}  # runs (no bots: nothing to start)
    finally:
        other.kw["bind"].dispose()


def test_sqlite_needs_no_lock(tmp_path):
    sessions = make_session_factory(f"sqlite:///{tmp_path / 'l.sqlite3'}")
    with only_one(sessions, "ladder-tick") as mine, only_one(sessions, "ladder-tick") as again:
        assert mine and again
    sessions.kw["bind"].dispose()
