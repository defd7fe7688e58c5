"""The shared database package: `db.base` (engine, sessions), the table modules, and
`db.schema`, which imports every table module (so `import db` gives the whole schema)."""

from db import schema  # noqa: F401  (every table module, so the metadata is complete)
from db.base import Base, database_url, make_session_factory, session_factory

__all__ = ["Base", "database_url", "make_session_factory", "session_factory"]
