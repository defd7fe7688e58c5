"""Helpers for the workers' integration tests: a fresh PostgreSQL database, waiting."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from celery import Celery
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

T = TypeVar("T")


@contextmanager
def fresh_postgres(server_url: str) -> Iterator[str]:
    """A new empty database on the server of `server_url`, dropped afterwards; its URL."""
    name = f"bummerl_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def wait_until(condition: Callable[[], T], timeout: float, every: float = 0.1,
               what: str = "condition") -> T:
    """Poll `condition` until it returns something truthy; that value. AssertionError on
    time-out."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


def redis_site(redis_url: str) -> tuple[Celery, dict[str, str]]:
    """A Celery app for this test's own corner of a shared Redis (a unique key prefix), and the
    environment that puts worker processes in the same corner."""
    from workers.app import make_app

    prefix = f"t{uuid.uuid4().hex[:10]}:"
    env = {"BUMMERL_BROKER_URL": redis_url, "BUMMERL_BROKER_PREFIX": prefix}
    return make_app(redis_url, prefix), env
