"""Run a periodic step in one process at a time across the site.

With several workers (Kubernetes scales the move workers), two ladder ticks may run at once
when one takes longer than beat's period; both would see too few matches running and start
too many. `only_one(sessions, name)` takes a PostgreSQL advisory lock for the step (session
level, released at the end, or by the server if the process dies) and tells whether this
process got it. On SQLite (one machine, the embedded site) it is a no-op: True.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker


def lock_key(name: str) -> int:
    """A stable 31-bit key for `name` (PostgreSQL advisory locks are keyed by integers)."""
    return zlib.crc32(f"bummerl:{name}".encode()) & 0x7FFFFFFF


@contextmanager
def only_one(sessions: sessionmaker[Session], name: str) -> Iterator[bool]:
    """Yield True if this process holds the site-wide lock `name` (False: another has it)."""
    engine = sessions.kw["bind"]
    if engine.dialect.name != "postgresql":
        yield True
        return
    key = lock_key(name)
    with engine.connect() as connection:
        got = bool(connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}))
        connection.commit()
        try:
            yield got
        finally:
            if got:
                connection.scalar(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                connection.commit()
