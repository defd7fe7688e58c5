"""Shared fixtures: paths, the real Redis / PostgreSQL servers the integration tests use, and the
hooks that mark what each test needs (tests/needs.py)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import needs
import pytest
from leftovers import Leftovers
from needs import POSTGRES_URL, REDIS_URL

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"

# tests/ mirrors the code (tests/services/ holds the tests of services/, and so on), in folders
# that are not packages. With the repository root on sys.path, `import services` always finds
# the real package, from any working directory (a folder without __init__.py only becomes a
# namespace package when no package of that name is found). Test modules import what they share
# by module name (`from test_web_pages import play`, as when tests/ was one folder): every folder
# with tests is on sys.path too, so that works whichever folders are collected (test file names
# are unique across tests/). The helpers here (servicekit, ...) are found because pytest puts
# this file's folder on sys.path.
for _folder in [ROOT, *sorted({p.parent for p in DATA.parent.glob("*/test_*.py")})]:
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))


def _answering(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _need(port: int, what: str, marker: str) -> None:
    needs.check(marker, what)
    if _answering(port):
        return
    message = f"{what} is not answering on 127.0.0.1:{port}"
    if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: this test must run)")
    pytest.skip(message + "; start it (or run .ci/run) to run this test")


_leftovers = Leftovers()


def pytest_configure(config: pytest.Config) -> None:
    """Every write of the site's local state goes to a temporary folder (tests/leftovers.py)."""
    _leftovers.start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if it left files in the checkout (tests/leftovers.py)."""
    left = _leftovers.finish()
    if left:
        print("\nthe run left files in the checkout (tests must write only into temporary "
              "folders): " + ", ".join(left))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The markers of what each test needs (tests/needs.py), before `-m` selects by them."""
    needs.mark(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item):  # type: ignore[no-untyped-def]
    needs.running = item
    try:
        return (yield)
    finally:
        needs.running = None


@pytest.fixture
def redis_url() -> str:
    """URL of the real Redis server (database 15, flushed before the test)."""
    _need(6379, "Redis", "redis")
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    return REDIS_URL


@pytest.fixture
def postgres_url() -> str:
    """URL of the real PostgreSQL test database."""
    _need(5432, "PostgreSQL", "postgres")
    return POSTGRES_URL


@pytest.fixture
def postgres_sessions(postgres_url: str):
    """A fresh PostgreSQL database with every table: yields (url, session factory)."""
    from db.base import make_session_factory
    from db.schema import create_all
    from workers.testing import fresh_postgres

    with fresh_postgres(postgres_url) as url:
        sessions = make_session_factory(url)
        create_all(sessions)
        yield url, sessions
        sessions.kw["bind"].dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path):
    """A fresh, empty database of each kind (`servicekit.fresh_database`: an SQLite file, or
    a new PostgreSQL database dropped after); a service started on it migrates it. A module
    whose tests use it without a service overrides it with one that makes the tables."""
    from servicekit import fresh_database

    with fresh_database(request.param, request, tmp_path) as db:
        yield db
