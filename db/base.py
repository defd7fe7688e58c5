"""The shared database: declarative base, engine and session factory.

The database URL comes from `DATABASE_URL`; without it an SQLite file under `var/` in the
project directory is used (created on first use). PostgreSQL works with e.g.
`postgresql+psycopg://user@host:5432/bummerl`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import overload

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SQLITE = ROOT / "var" / "bummerl.sqlite3"

# Stable constraint names, so that Alembic migrations work the same on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of every table of bummerl."""

    metadata = MetaData(naming_convention=NAMING)


def database_url() -> str:
    """The configured database URL (`DATABASE_URL`, else the SQLite file under `var/`)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    DEFAULT_SQLITE.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_SQLITE}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: no fsync per commit; a crash of the process loses nothing, a power cut may
    # lose the last commits but never corrupts the file.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def make_engine(url: str | None = None) -> Engine:
    """A new SQLAlchemy engine for `url` (default: `database_url()`)."""
    url = url or database_url()
    # The gRPC server has a thread per open stream: at 100 streams more than 10 connections are
    # often in use at once, and each one over `pool_size` is opened (and, for SQLite, set up
    # with the pragmas) and closed again per use.
    pool = {"pool_size": 30, "max_overflow": 20}
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 10}, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, **pool)


def make_session_factory(url: str | None = None) -> sessionmaker[Session]:
    """A session factory bound to a new engine for `url` (default: `database_url()`)."""
    return sessionmaker(bind=make_engine(url), expire_on_commit=False)


@cache
def session_factory() -> sessionmaker[Session]:
    """The process-wide session factory for the configured database (created once)."""
    return make_session_factory()


def create_all(url_or_factory: str | sessionmaker[Session] | None = None) -> None:
    """Create every table that is missing (tests and quick starts; production uses Alembic)."""
    import db  # noqa: F401  (imports every model module, so the metadata is complete)

    if isinstance(url_or_factory, sessionmaker):
        engine = url_or_factory.kw["bind"]
    else:
        engine = make_engine(url_or_factory)
    Base.metadata.create_all(engine)


def utcnow() -> datetime:
    """Now, as an aware UTC datetime (the default of every timestamp column)."""
    return datetime.now(UTC)


@overload
def aware(moment: datetime) -> datetime: ...
@overload
def aware(moment: None) -> None: ...
def aware(moment: datetime | None) -> datetime | None:
    """`moment` as an aware UTC datetime: SQLite gives naive ones back, and they are UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)
