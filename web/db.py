"""The dashboard's handle on the shared database (one session factory per app)."""

from __future__ import annotations

from typing import Any

from flask import current_app
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session, sessionmaker


def sessions() -> sessionmaker[Session]:
    """The session factory of the current app (made by `web.create_app`)."""
    factory: sessionmaker[Session] = current_app.extensions["bummerl.sessions"]
    return factory


def read_only(engine: Engine) -> None:
    """Make every connection of `engine` refuse writes (the dashboard only reads): SQLite's
    `query_only`, PostgreSQL's read-only transactions."""
    if engine.dialect.name == "sqlite":
        statement = "PRAGMA query_only=ON"
    elif engine.dialect.name == "postgresql":
        statement = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"
    else:
        return

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(statement)
        cursor.close()
        if engine.dialect.name == "postgresql":
            dbapi_connection.commit()

    event.listen(engine, "connect", on_connect)
