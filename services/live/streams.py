"""Admission of streams: how many Play streams one bot, and how many WatchMatch streams one
peer address, may have open on one server at once (`Settings.max_play_streams`,
`max_watch_streams`). One over the limit is refused with RESOURCE_EXHAUSTED, naming the limit.

`Holders`: which Play stream holds each bot's version and kind of matches. Two processes of one
bot, version and kind (a second `bummerl bot run` left running) would both be sent its turns
and race each other's answers (the loser's refused as stale, turn after turn); a stream whose
Hello names its program (`Hello.instance`) takes over from the one holding the same key, which
is told why and ended (services.live.play). Streams that name no program are left as they are.
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


# What a Play stream holds: its bot's id, the version its Hello said, challenges only, and what
# it took of Hello.accepts_people.
HoldKey = tuple[int, str, bool, int]


class Holders:
    """The newest Play stream of each `HoldKey` (on this server); `take` hands back the one it
    replaces."""

    def __init__(self) -> None:
        self._holders: dict[HoldKey, object] = {}
        self._lock = threading.Lock()

    def take(self, key: HoldKey, stream: object) -> object | None:
        """`stream` holds `key` from now on; the stream that held it before, if any."""
        with self._lock:
            previous = self._holders.get(key)
            self._holders[key] = stream
        return previous if previous is not stream else None

    def leave(self, key: HoldKey, stream: object) -> None:
        """`stream` ended: it holds `key` no more (unless another took it meanwhile)."""
        with self._lock:
            if self._holders.get(key) is stream:
                del self._holders[key]
