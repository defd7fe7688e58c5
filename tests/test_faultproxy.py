"""The fault injector itself: each mode of tests/faultproxy.py does what the scenarios rely on."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from faultproxy import BLACKHOLE, PASS, PAUSE, REFUSE, Proxy


@pytest.fixture
def echo() -> Iterator[tuple[str, int]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(100):
                conn.sendall(data)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()
    server.close()


def connect(proxy: Proxy) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    conn.settimeout(5)
    return conn


def test_pass_cut_refuse(echo):
    proxy = Proxy(echo)
    try:
        conn = connect(proxy)
        conn.sendall(b"one")
        assert conn.recv(10) == b"one"
        proxy.set(REFUSE)
        proxy.cut()
        assert conn.recv(10) == b"", "a cut connection is closed"
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        proxy.set(PASS)
        again = connect(proxy)
        again.sendall(b"two")
        assert again.recv(10) == b"two"
    finally:
        proxy.close()


@pytest.mark.parametrize("mode", [PAUSE, BLACKHOLE])
def test_pause_and_blackhole_hold_bytes_until_healed(echo, mode):
    proxy = Proxy(echo)
    try:
        conn = connect(proxy)
        proxy.set(mode)
        conn.sendall(b"held")
        conn.settimeout(1)
        with pytest.raises(TimeoutError):
            conn.recv(10)  # nothing answers, nothing closes
        fresh = connect(proxy)  # a new connection is accepted and gets nothing either
        fresh.sendall(b"new")
        fresh.settimeout(0.5)
        with pytest.raises(TimeoutError):
            fresh.recv(10)
        proxy.set(PASS)
        conn.settimeout(5)
        fresh.settimeout(5)
        time.sleep(0.1)
        assert conn.recv(10) == b"held"
        assert fresh.recv(10) == b"new"
    finally:
        proxy.close()


def paired(proxy: Proxy, count: int = 1) -> None:
    """Wait until the proxy's thread has accepted and paired `count` connections."""
    deadline = time.monotonic() + 5
    while proxy.connections() < count:
        assert time.monotonic() < deadline, "the proxy did not pair the connection"
        time.sleep(0.01)


def closed(conn: socket.socket) -> bool:
    """The peer closed or reset the connection (it sends nothing more)."""
    try:
        return conn.recv(10) == b""
    except ConnectionResetError:
        return True


def test_down_and_restore_drop_what_was_held(echo):
    """`down()` is a stopped server (reset, refused); `restore()` after a black hole gives fresh
    connections only: the old ones, whose bytes were held, are reset rather than replayed."""
    with Proxy(echo) as proxy:
        conn = connect(proxy)
        paired(proxy)
        proxy.down()
        assert closed(conn)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        proxy.restore()
        held = connect(proxy)
        paired(proxy)
        proxy.set(BLACKHOLE)
        held.sendall(b"lost")
        proxy.restore()
        assert closed(held), "reset or closed, never the held bytes"
        fresh = connect(proxy)
        fresh.sendall(b"new")
        assert fresh.recv(10) == b"new"
