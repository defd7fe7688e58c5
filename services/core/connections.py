"""The service's ways to the database: the session factory (the given one, else the configured
default), its engine, the name of the database it reaches (its "site"), and connections for a
read, an autocommit write, or an SQLite write transaction."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text
from sqlalchemy.orm import Session, sessionmaker

from db import base

_guard = threading.Lock()


def factory_of(sessions: sessionmaker[Session] | None) -> sessionmaker[Session]:
    """`sessions`, or the default session factory (DATABASE_URL) when None."""
    if sessions is not None:
        return sessions
    return base.session_factory()


def bound_engine(sessions: sessionmaker[Session] | None) -> Engine:
    """The engine the session factory is bound to (for plain Core reads, no ORM session)."""
    bind = factory_of(sessions).kw["bind"]
    assert isinstance(bind, Engine)
    return bind


@contextmanager
def autocommit(bind: Engine) -> Iterator[Connection]:
    """A connection in autocommit mode: each statement commits itself, without the BEGIN and
    COMMIT (or ROLLBACK) round trips (PostgreSQL: a read, or a write of one statement)."""
    with bind.connect() as connection:
        yield connection.execution_options(isolation_level="AUTOCOMMIT")


@contextmanager
def reading(bind: Engine) -> Iterator[Connection]:
    """A connection for a read of one statement, in autocommit mode: one statement sees one
    consistent snapshot anyway, and PostgreSQL is spared the BEGIN and ROLLBACK round trips.
    (The SQLite driver runs a lone SELECT outside a transaction already.)"""
    if bind.dialect.name == "sqlite":
        with bind.connect() as connection:
            yield connection
    else:
        with autocommit(bind) as connection:
            yield connection


_sqlite_writers: dict[int, threading.Lock] = {}


@contextmanager
def writing(db: Session | Engine) -> Iterator[None]:
    """Serialise this process's write transactions on an SQLite database (one writer at a time
    anyway): no busy-waiting, and no read-to-write upgrade conflicts. Other databases: no-op."""
    bind = db.get_bind() if isinstance(db, Session) else db
    if bind.dialect.name != "sqlite":
        yield
        return
    with _guard:
        lock = _sqlite_writers.setdefault(id(bind), threading.Lock())
    with lock:
        yield


_sites: dict[int, str] = {}
_binds: defaultdict[str, list[Engine]] = defaultdict(list)


def site_of(bind: Engine) -> str:
    """A short name of the database `bind` is connected to (the SQLite file; PostgreSQL's
    address, database and schema): processes on the same database share it, others not."""
    site = _sites.get(id(bind))
    if site is None:
        if bind.dialect.name == "sqlite":
            ident = "sqlite:" + os.path.realpath(bind.url.database or ":memory:")
        else:  # as the server itself names it (the schema may come from connect options)
            with bind.connect() as connection:
                row = connection.execute(text(
                    "SELECT inet_server_addr(), inet_server_port(), current_database(), "
                    "current_schema()")).one()
            ident = f"{bind.dialect.name}:" + "/".join(map(str, row))
        site = hashlib.sha256(ident.encode()).hexdigest()[:16]
        with _guard:
            _sites[id(bind)] = site
            _binds[site].append(bind)
    return site


def binds_of(site: str) -> list[Engine]:
    """The engines of this process on database `site`."""
    with _guard:
        return list(_binds.get(site, ()))
