"""The dashboard's handle on the shared database (one session factory per app)."""

from __future__ import annotations

from flask import current_app
from sqlalchemy.orm import Session, sessionmaker


def sessions() -> sessionmaker[Session]:
    """The session factory of the current app (made by `web.create_app`)."""
    factory: sessionmaker[Session] = current_app.extensions["bummerl.sessions"]
    return factory
