"""Admission of streams: how many Play streams one bot, and how many WatchMatch streams one
peer address, may have open on one server at once (`Settings.max_play_streams`,
`max_watch_streams`). One over the limit is refused with RESOURCE_EXHAUSTED, naming the limit.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from services.core.errors import ResourceExhausted


def peer_address(peer: str) -> str:
    """The address of a gRPC peer without its port ("ipv4:1.2.3.4:5678" -> "ipv4:1.2.3.4")."""
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() else peer


class Limits:
    """Counts of open streams per key; `admit` raises ResourceExhausted over the limit."""

    def __init__(self) -> None:
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def admit(self, key: str, limit: int, what: str) -> Callable[[], None]:
        """Count a stream of `key` in; returns the function that counts it out (once)."""
        with self._lock:
            if self._open[key] >= limit:
                raise ResourceExhausted(
                    f"too many open {what} streams: {limit} at most "
                    "(close one, or ask the operator for a higher limit)", limit=limit)
            self._open[key] += 1
        released = threading.Event()

        def release() -> None:
            if released.is_set():
                return
            released.set()
            with self._lock:
                self._open[key] -= 1
                if self._open[key] <= 0:
                    del self._open[key]

        return release

    def open(self, key: str) -> int:
        with self._lock:
            return self._open[key]
