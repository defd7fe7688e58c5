"""Fixtures of the chaos suite: TCP proxies (tests/faultproxy.py) in front of the shared Redis
and PostgreSQL servers, so faults are made on the wire and the servers themselves never stop."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator

import pytest
from faultproxy import Proxy
from needs import POSTGRES_URL, REDIS_URL, check


def need(port: int, what: str) -> None:
    """Skip (fail under BUMMERL_REQUIRE_SERVICES=1) unless the server answers."""
    check({6379: "redis", 5432: "postgres"}[port], what)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return
    except OSError:
        pass
    message = f"chaos suite: {what} is not answering on 127.0.0.1:{port}"
    if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: this test must run)")
    pytest.skip(message + "; start it (or run .ci/run) to run the chaos suite")


def through(url: str, port: int) -> str:
    """`url` with its host and port replaced by the proxy's."""
    from sqlalchemy.engine import make_url

    if url.startswith("redis"):
        rest = url.split("://", 1)[1]
        db = rest.split("/", 1)[1] if "/" in rest else "0"
        return f"redis://127.0.0.1:{port}/{db}"
    return make_url(url).set(host="127.0.0.1", port=port).render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def redis_proxy() -> Iterator[Proxy]:
    need(6379, "Redis")
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    proxy = Proxy(("127.0.0.1", 6379))
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database for the module (direct URL), dropped afterwards."""
    need(5432, "PostgreSQL")
    from workers.testing import fresh_postgres

    with fresh_postgres(POSTGRES_URL) as url:
        yield url


@pytest.fixture(scope="module")
def postgres_proxy() -> Iterator[Proxy]:
    need(5432, "PostgreSQL")
    proxy = Proxy(("127.0.0.1", 5432))
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def broker_prefix() -> str:
    return f"c{uuid.uuid4().hex[:10]}:"
