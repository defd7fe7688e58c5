"""The whole schema: every module that defines tables is imported here, so `Base.metadata` is
complete (Alembic's migrations and `create_all` rely on it). Add new table modules here."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from db import (  # noqa: F401  (tables join the metadata)
    analyses,
    authors,
    batch,
    events,
    exercises,
    hosted,
    models,
    pairs,
    people,
    ratings,
    versiontests,
)
from db.base import Base, make_engine

metadata = Base.metadata


def create_all(url_or_factory: str | sessionmaker[Session] | None = None) -> None:
    """Create every table that is missing (tests and quick starts; production uses Alembic)."""
    if isinstance(url_or_factory, sessionmaker):
        engine = url_or_factory.kw["bind"]
    else:
        engine = make_engine(url_or_factory)
    metadata.create_all(engine)
