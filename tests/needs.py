"""What a test needs besides Python, as pytest markers (registered in pyproject.toml):

- `redis`: the real Redis server; `postgres`: the real PostgreSQL server (tests/conftest.py);
- `browser`: Chromium and chromedriver; `node`: Node.js and npm (the TypeScript bot, buf);
  `kubectl`: kubectl (the Kubernetes manifests); `podman`: podman with runc (the image);
- `services`: on every test with any of those, so `pytest -m "not services"` is the quick loop
  of a machine with none of them.

The server markers are set at collection (`mark`, from tests/conftest.py) by the fixtures a test
uses and by a `postgres` parameter (the `database` fixture's, or a module's own); a module that
looks for a tool itself carries the tool's marker (`pytestmark`), and a test that reaches a
server another way carries its marker by hand. Where a test reaches a server (the fixtures, the
chaos suite's `need`), `check` fails a test without the marker, so the markers cannot rot."""

from __future__ import annotations

import os

import pytest

# The servers the tests reach. Each pytest-xdist worker (scripts/test runs three) flushes a Redis
# database of its own: gw0 15, gw1 14, ...; PostgreSQL tests each make a database or schema of
# their own.
WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
REDIS_URL = os.environ.get("BUMMERL_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{15 - WORKER}")
POSTGRES_URL = os.environ.get(
    "BUMMERL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")

TOOLS = ("redis", "postgres", "browser", "node", "kubectl", "podman")
# The fixtures that reach a server: tests/conftest.py and tests/chaos/conftest.py.
FIXTURES = {
    "redis_url": "redis",
    "redis_proxy": "redis",
    "postgres_url": "postgres",
    "postgres_sessions": "postgres",
    "postgres_database": "postgres",
    "postgres_proxy": "postgres",
}

running: pytest.Item | None = None  # the test being run (tests/conftest.py sets it)


def mark(items: list[pytest.Item]) -> None:
    """Mark each test with what it needs, and `services` if it needs anything."""
    for item in items:
        needs = {FIXTURES[name] for name in getattr(item, "fixturenames", ()) if name in FIXTURES}
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(isinstance(value, str) and value == "postgres"
                                        for value in callspec.params.values()):
            needs.add("postgres")
        for name in sorted(needs):
            item.add_marker(name)
        if any(item.get_closest_marker(name) for name in TOOLS):
            item.add_marker("services")


def check(marker: str, what: str) -> None:
    """Fail the running test if it reaches `what` without the marker `marker`."""
    if running is not None and running.get_closest_marker(marker) is None:
        pytest.fail(f"{running.nodeid} reaches {what} but is not marked `{marker}` (see "
                    "tests/needs.py): `pytest -m \"not services\"` would run it without "
                    f"{what}", pytrace=False)
