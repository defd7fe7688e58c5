"""db.waits: releasing an engine's waits wakes a thread blocked reading a socket that will never
answer, refuses new waits until resumed, and leaves the exempt ones (the health check's ping)
alone. Real sockets (a connected pair); the end-to-end behaviour with PostgreSQL behind a
black-holing proxy is in test_db_outage.py."""

from __future__ import annotations

import socket
import threading
import time

from db.waits import Waits, exempt


def blocked_reader(waits: Waits, sock: socket.socket, got: list[object]) -> threading.Thread:
    def read() -> None:
        with waits.waiting(sock.fileno()) as allowed:
            got.append(allowed)
            got.append(sock.recv(10))  # nothing is ever sent: blocks until released

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_release_wakes_a_blocked_wait_and_refuses_new_ones_until_resumed():
    waits = Waits()
    quiet, peer = socket.socketpair()
    got: list[object] = []
    try:
        reader = blocked_reader(waits, quiet, got)
        time.sleep(0.2)
        assert reader.is_alive() and got == [True]  # waiting
        started = time.monotonic()
        assert waits.release() == 1
        reader.join(timeout=2)
        assert not reader.is_alive() and got == [True, b""], got  # woke: the end of the stream
        assert time.monotonic() - started < 1
        with waits.waiting(peer.fileno()) as allowed:
            assert not allowed  # refused while released
        with exempt(), waits.waiting(peer.fileno()) as allowed:
            assert allowed  # the ping goes on
        assert waits.resume() and not waits.resume()
        with waits.waiting(peer.fileno()) as allowed:
            assert allowed
        assert waits.release() == 0  # nothing registered any more
    finally:
        quiet.close()
        peer.close()


def test_an_exempt_wait_is_not_released():
    waits = Waits()
    quiet, peer = socket.socketpair()
    got: list[object] = []
    try:
        def read() -> None:
            with exempt(), waits.waiting(quiet.fileno()):
                got.append(quiet.recv(10))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        time.sleep(0.1)
        assert waits.release() == 0
        time.sleep(0.2)
        assert reader.is_alive() and got == []
        peer.sendall(b"answer")
        reader.join(timeout=2)
        assert got == [b"answer"]
    finally:
        quiet.close()
        peer.close()
