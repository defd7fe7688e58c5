"""The shared database package: `db.base` (engine, sessions) and the table modules.

Every module that defines tables is imported here, so `db.base.Base.metadata` is complete
(Alembic and `create_all` rely on it). Add new table modules to the list below.
"""

from db import batch, models, ratings  # noqa: F401
from db.base import Base, database_url, make_session_factory, session_factory

__all__ = ["Base", "database_url", "make_session_factory", "session_factory"]
