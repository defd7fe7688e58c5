"""`db.base.ping`, the health check's (and so the database breaker's) question "does the
database answer": a busy engine whose every pooled connection is in use is not an unreachable
database (the ping has a connection of its own); a database that is gone is."""

from __future__ import annotations

import time

from sqlalchemy import create_engine

from db.base import ping


def test_a_busy_pool_is_not_an_unreachable_database(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'busy.sqlite3'}", pool_size=1,
                           max_overflow=0, pool_timeout=30)
    held = engine.connect()  # every connection of the pool in use (a storm of calls)
    try:
        start = time.monotonic()
        assert ping(engine, timeout=2.0) is None
        assert time.monotonic() - start < 1.0
        assert ping(engine, timeout=2.0) is None  # again, on the ping's own connection
    finally:
        held.close()
        engine.dispose()


def test_an_unreachable_database_is_said_so_and_dispose_closes_the_pings_connection(tmp_path):
    missing = tmp_path / "no-such-folder" / "x.sqlite3"
    engine = create_engine(f"sqlite:///{missing}")
    assert ping(engine, timeout=2.0) == "the database is unreachable"
    engine.dispose()
    good = create_engine(f"sqlite:///{tmp_path / 'ok.sqlite3'}")
    assert ping(good, timeout=2.0) is None
    good.dispose()  # the ping's own connection goes with the engine's
    assert ping(good, timeout=2.0) is None  # and a new one is made when asked again
    good.dispose()
