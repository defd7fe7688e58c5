"""waitress's thread pool (web/server.py): a table's page may have a request waiting for a busy
engine service besides its open stream, and those waits must not queue the operators' pages
behind them."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from db.base import make_session_factory
from db.schema import create_all

TABLES = 2


@pytest.fixture
def silent_service():
    """An address that accepts connections and never answers: a gRPC call to it waits for its
    deadline, as a person's request does when the service is busy."""
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(64)
    yield f"127.0.0.1:{hole.getsockname()[1]}"
    hole.close()


def post_guest(base: str, name: str) -> None:
    with contextlib.suppress(urllib.error.HTTPError):  # the service's time-out, after the wait
        urllib.request.urlopen(urllib.request.Request(
            base + "/guest", data=f"name={name}".encode(), method="POST"), timeout=30).read()


def test_requests_waiting_for_the_service_leave_the_operators_pages_served(tmp_path,
                                                                          silent_service):
    from web.server import shutdown, url_of, waitress_server

    url = f"sqlite:///{tmp_path / 'web.sqlite3'}"
    create_all(make_session_factory(url))
    server = waitress_server("127.0.0.1", 0, {
        "DATABASE_URL": url, "SERVICE_ADDRESS": silent_service, "SERVICE_TIMEOUT_SECONDS": 4,
        "WEB_TOKEN": "web-secret", "WTF_CSRF_ENABLED": False, "MAX_STREAMS": 1,
        "TABLE_STREAMS": TABLES}, threads=1)
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    base = url_of(server).rstrip("/")
    # One request per table and one more for each stream it could hold: every table's share of
    # the pool waits on the service (past the ordinary and live-page threads).
    waiting = [threading.Thread(target=post_guest, args=(base, f"guest{i}"), daemon=True)
               for i in range(2 * TABLES)]
    try:
        for t in waiting:
            t.start()
        time.sleep(0.8)  # they reach the service and wait
        assert all(t.is_alive() for t in waiting), "the guests' requests did not wait"
        began = time.monotonic()
        with urllib.request.urlopen(base + "/standings", timeout=30) as page:
            assert page.status == 200
        took = time.monotonic() - began
        assert took < 2.0, f"/standings waited {took:.1f} s behind the service's callers"
    finally:
        for t in waiting:
            t.join(10)
        shutdown(server)
        serving.join(5)
