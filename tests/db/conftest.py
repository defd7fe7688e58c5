"""The database a migration test upgrades and downgrades: an empty SQLite file, or an empty
schema of its own in the test PostgreSQL database (dropped afterwards)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, text


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path):  # type: ignore[no-untyped-def]
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'migrated.sqlite3'}"
        return
    url = request.getfixturevalue("postgres_url")
    schema = f"m_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    yield f"{url}?options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()
