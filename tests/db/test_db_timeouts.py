"""The bounds on waits for PostgreSQL (db.base.DbTimeouts), on the real server: the statement
time-out in the server, the answer time-out in the client (the connection is dropped and the
next call works), the settings from the environment; SQLite is unaffected."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import exc, text

from db.base import MIGRATION_TIMEOUTS, DbTimeouts, make_engine
from services.core import failures


def test_timeouts_come_from_the_environment(monkeypatch):
    assert DbTimeouts.from_env() == DbTimeouts()
    monkeypatch.setenv("BUMMERL_DB_STATEMENT_MS", "2500")
    monkeypatch.setenv("BUMMERL_DB_ANSWER_S", "4.5")
    timeouts = DbTimeouts.from_env()
    assert (timeouts.statement_ms, timeouts.answer_s, timeouts.connect_s) == (2500, 4.5, 5)
    args = timeouts.connect_args()
    assert args["options"] == "-c statement_timeout=2500" and args["tcp_user_timeout"] == 4500
    assert args["keepalives"] == 1 and args["connect_timeout"] == 5
    assert "options" not in MIGRATION_TIMEOUTS.connect_args()


def test_sqlite_is_unaffected(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    with engine.connect() as connection:
        assert connection.execute(text("SELECT 1")).scalar() == 1
    engine.dispose()


def test_the_server_cancels_a_long_statement(postgres_url):
    engine = make_engine(postgres_url, timeouts=DbTimeouts(statement_ms=300),
                         connect_args={"application_name": "bummerl-test"})
    with engine.connect() as connection:
        assert connection.execute(text("SHOW statement_timeout")).scalar() == "300ms"
        start = time.monotonic()
        with pytest.raises(exc.OperationalError) as info:
            connection.execute(text("SELECT pg_sleep(5)"))
        assert time.monotonic() - start < 3
    assert failures.failure_of(info.value).code == "UNAVAILABLE"
    engine.dispose()


def test_the_client_stops_waiting_and_recovers(postgres_url):
    # no server-side bound: only the client's answer time-out can end the wait
    engine = make_engine(postgres_url, timeouts=DbTimeouts(statement_ms=0, answer_s=1.0))
    with engine.connect() as connection:
        start = time.monotonic()
        with pytest.raises(exc.OperationalError) as info:
            connection.execute(text("SELECT pg_sleep(4)"))
        assert time.monotonic() - start < 3
        assert info.value.connection_invalidated  # dropped, never handed out again
    failure = failures.failure_of(info.value)
    assert failure.code == "UNAVAILABLE" and "answer" not in failure.message
    with engine.connect() as connection:  # a new connection
        assert connection.execute(text("SELECT 1")).scalar() == 1
    engine.dispose()


def test_the_urls_own_options_are_kept_beside_the_timeouts(postgres_url):
    """A DATABASE_URL's `options` (here an operator's choice of asynchronous commit) reach
    every connection of the service, the event loop's committer's too, instead of being
    replaced by the statement time-out's."""
    import asyncio

    from services.core.committers import LoopCommit

    separator = "&" if "?" in postgres_url else "?"
    url = f"{postgres_url}{separator}options=-csynchronous_commit%3Doff"
    engine = make_engine(url, timeouts=DbTimeouts(statement_ms=700))
    with engine.connect() as connection:
        assert connection.execute(text("SHOW synchronous_commit")).scalar() == "off"
        assert connection.execute(text("SHOW statement_timeout")).scalar() == "700ms"

    async def on_the_loop() -> tuple[str, str]:
        commit = LoopCommit(engine)
        connection = await commit._connection()
        try:
            values = []
            for name in ("synchronous_commit", "statement_timeout"):
                cursor = await connection.execute(f"SHOW {name}")
                values.append((await cursor.fetchone())[0])
            return values[0], values[1]
        finally:
            await connection.close()

    assert asyncio.run(on_the_loop()) == ("off", "700ms")
    engine.dispose()
