"""Apply the Alembic migrations: `python -m db.migrate [URL]` (default: DATABASE_URL / SQLite)."""

from __future__ import annotations

import sys
from pathlib import Path

from alembic import command
from alembic.config import Config

INI = Path(__file__).resolve().parent / "alembic.ini"


def config(url: str | None = None) -> Config:
    cfg = Config(str(INI))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Bring the database at `url` (default: the configured one) to `revision`."""
    command.upgrade(config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    command.downgrade(config(url), revision)


if __name__ == "__main__":
    upgrade(sys.argv[1] if len(sys.argv) > 1 else None)
