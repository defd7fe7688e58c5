"""A TCP proxy a test controls, put in front of the shared Redis and PostgreSQL servers (which
are never stopped themselves): faults are made here, on the proxy's side of the wire. The chaos
suite (tests/chaos/), the database-outage tests and the health metrics test all use it.

Modes (`Proxy.set(mode)`):
- `pass`: bytes flow both ways.
- `refuse`: the listening socket is closed, so new connections are refused (ECONNREFUSED);
  existing ones go on.
- `pause`: connections are accepted and kept, bytes are held (a stopped server: nothing is
  answered, nothing is closed; on `pass` everything held is delivered).
- `blackhole`: packets lost on the network. Seen from the application the same as `pause`:
  nothing arrives and nothing is closed, and when the path heals TCP's retransmissions deliver
  what was sent (a proxy cannot drop segments below TCP; dropping bytes from the stream would
  corrupt it, which a real network never does).
`cut()` closes every existing connection with a reset, both sides.

Written here (a few dozen lines, threads and blocking sockets) rather than taken from a library:
toxiproxy needs its own server binary, which the CI machine does not have.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import threading
import time

PASS, REFUSE, BLACKHOLE, PAUSE = "pass", "refuse", "blackhole", "pause"


def _reset(sock: socket.socket) -> None:
    """Close abruptly (SO_LINGER 0), as a crashed peer looks to the other end. shutdown() first:
    close() alone leaves the connection open while a pump thread is blocked reading it."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


class Proxy:
    """Listens on 127.0.0.1:`port` (a free port below the ephemeral range, so it can be closed
    and opened again) and forwards to `target` (host, port)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.mode = PASS
        self._flowing = threading.Event()
        self._flowing.set()
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._listener: socket.socket | None = None
        self._closed = False
        self.port = self._listen(None)

    # -- control ---------------------------------------------------------------------------

    def set(self, mode: str) -> None:
        assert mode in (PASS, REFUSE, BLACKHOLE, PAUSE), mode
        with self._lock:
            self.mode = mode
        if mode == REFUSE:
            self._unlisten()
        elif self._listener is None:
            self._listen(self.port)
        if mode in (PAUSE, BLACKHOLE):
            self._flowing.clear()
        else:
            self._flowing.set()

    def cut(self) -> None:
        """Reset every open connection (both sides)."""
        with self._lock:
            pairs, self._pairs = self._pairs, set()
        for client, upstream in pairs:
            _reset(client)
            _reset(upstream)

    def connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def down(self) -> None:
        """The server is down: open connections reset, new ones refused."""
        self.set(REFUSE)
        self.cut()

    def restore(self) -> None:
        """Forward again, on fresh connections only: what was held while paused or black-holed
        is dropped with its connection (the client has given up on it by then)."""
        self.cut()
        self.set(PASS)

    def close(self) -> None:
        self._closed = True
        self._unlisten()
        self.cut()
        self._flowing.set()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------

    def _listen(self, port: int | None) -> int:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for attempt in range(200):
            candidate = port or random.randint(20000, 30000)
            try:
                listener.bind(("127.0.0.1", candidate))
                break
            except OSError:
                if port is not None and attempt > 50:
                    raise
                time.sleep(0.05 if port else 0)
        listener.listen(128)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True,
                         name=f"proxy-accept-{candidate}").start()
        return candidate

    def _unlisten(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed (refuse / close)
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._listener is not listener:  # refused meanwhile: too late to connect
                    _reset(client)
                    _reset(upstream)
                    continue
                self._pairs.add((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst, (client, upstream)),
                                 daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket,
              pair: tuple[socket.socket, socket.socket]) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self._flowing.wait()  # paused / black-holed: held until the proxy passes again
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._pairs.discard(pair)
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                src.close()
