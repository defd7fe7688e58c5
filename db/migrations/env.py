"""Alembic environment: the URL is `sqlalchemy.url` when set (db.migrate sets it), else
DATABASE_URL / the default SQLite file (db.base.database_url)."""

from __future__ import annotations

from alembic import context

from db.base import MIGRATION_TIMEOUTS, database_url, make_engine
from db.schema import metadata

config = context.config
target_metadata = metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url") or database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    # no statement time-out: a migration may rewrite a large table
    engine = make_engine(config.get_main_option("sqlalchemy.url") or database_url(),
                         timeouts=MIGRATION_TIMEOUTS)
    with engine.connect() as connection:
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
