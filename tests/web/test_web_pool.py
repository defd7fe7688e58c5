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


def client_of(address: str, **config: object):
    from flask import Flask

    from web.service_client import Client

    app = Flask(__name__)
    app.config.update(SERVICE_ADDRESS=address, WEB_TOKEN="web-secret", **config)
    return Client(app)


def start_guest(client, outcomes: list[str]) -> None:
    from bummerl.v1 import people_pb2

    from web.service_client import Refused

    began = time.monotonic()
    try:
        client.call("StartGuest", people_pb2.StartGuestRequest(name="g"))
    except Refused as e:
        outcomes.append(f"{time.monotonic() - began:.1f} {e.code} {e.message}")


def test_calls_past_service_calls_wait_their_turn_not_their_deadline(silent_service):
    """SERVICE_CALLS in flight at once: 4 calls with 2 slots take two rounds of the deadline;
    each one still gets its whole deadline at the service (the turn's wait is not part of it)."""
    client = client_of(silent_service, SERVICE_CALLS=2, SERVICE_TIMEOUT_SECONDS=1)
    outcomes: list[str] = []
    calls = [threading.Thread(target=start_guest, args=(client, outcomes)) for _ in range(4)]
    began = time.monotonic()
    for t in calls:
        t.start()
    for t in calls:
        t.join(30)
    took = time.monotonic() - began
    client.close()
    assert len(outcomes) == 4 and all("DEADLINE_EXCEEDED" in o for o in outcomes), outcomes
    assert took >= 1.9, f"4 calls with 2 slots and a 1 s deadline ended in {took:.1f} s"


def test_a_call_that_waits_too_long_for_its_turn_is_refused_as_busy(silent_service):
    client = client_of(silent_service, SERVICE_CALLS=1, SERVICE_TIMEOUT_SECONDS=3,
                       SERVICE_QUEUE_SECONDS=0.3)
    outcomes: list[str] = []
    first = threading.Thread(target=start_guest, args=(client, outcomes))
    first.start()
    time.sleep(0.2)
    start_guest(client, outcomes)  # the slot is taken for 3 s
    assert len(outcomes) == 1 and "UNAVAILABLE" in outcomes[0], outcomes
    assert "is busy: this call waited 0.3 s for its turn; nothing was done" in outcomes[0]
    first.join(10)
    client.close()


def test_shutdown_of_a_server_whose_trigger_is_closed_still_closes_it(tmp_path):
    """A CI teardown found the loop's trigger closed already (EBADF on waking it): shutdown
    then closes the server itself instead of raising."""
    from web.server import shutdown, waitress_server

    url = f"sqlite:///{tmp_path / 'web.sqlite3'}"
    create_all(make_session_factory(url))
    server = waitress_server("127.0.0.1", 0, {"DATABASE_URL": url, "WEB_TOKEN": "web-secret"})
    server.trigger.close()
    shutdown(server)
    assert not server._map
