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


# The test files that take longest (scripts/test lists the slowest steps), costliest first: they
# start first, so that the suite's processes end together instead of one running these alone
# at the end (pytest-xdist hands out files in the order they are collected).
SLOW_FIRST = [
    "image/test_image.py", "cli/test_games_export.py", "workers/test_events_site.py",
    "workers/test_levels.py", "cli/test_doc_commands.py", "cli/test_up.py",
    "hosting/test_hosted_flow.py", "hosting/test_sandbox_podman.py", "hosting/test_hosted_doc.py",
    "hosting/test_hosted_image.py", "chaos/test_chaos_faults.py", "bench/test_bench_crowd.py",
    "cli/test_readme_walkthrough.py",
    "cli/test_up_piped.py", "analysis/test_position.py", "bench/test_bench_kit.py",
    "chaos/test_chaos_worker_broker.py", "kit/test_envs_installed.py",
    "kit/test_envs_openspiel_installed.py", "bench/test_bench_events.py",
    "bench/test_bench_hosted.py", "bench/test_bench_people.py", "bench/test_bench_service.py",
    "bench/test_bench_vu.py", "workers/test_champion.py", "services/test_fuzz.py",
    "bench/test_bench_export.py", "web/test_web_people_up.py",
]


def slow_rank(item: pytest.Item) -> int:
    """Where the item's file stands in SLOW_FIRST (the rest after, in their order)."""
    path = item.path.relative_to(DATA.parent).as_posix() if item.path.is_relative_to(
        DATA.parent) else ""
    return SLOW_FIRST.index(path) if path in SLOW_FIRST else len(SLOW_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The markers of what each test needs (tests/needs.py), before `-m` selects by them; the
    slowest files first (SLOW_FIRST)."""
    needs.mark(items)
    items.sort(key=slow_rank)  # (stable: each file's tests keep their order)


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
