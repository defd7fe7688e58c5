"""In-process fan-out of committed changes: a change of a match goes at once to the streams
that wait for it (the Play streams of its two bots, its WatchMatch streams).

Keys name a database ("site") and a subject: `key(site, "bot", 3)`, `key(site, "match", 7)`.
A subscriber is a callable taking a `Change` (the match's summary after the change, so a Play
stream can send the next turn without reading the database) or None ("something may have
changed: read the database", e.g. after the change bus reconnected). Callbacks run on the
thread that committed (or the bus's listener): they must only hand the change over (e.g.
`loop.call_soon_threadsafe`), never block.

Every change committed in this process comes here (`publish`, registered with
`services.core.announce` when this module is imported), and `publish` also hands it to the
change bus (`services.live.bus`), which delivers it to the other processes serving the same
database; the bus hands what it hears to `deliver`. The database stays the authority: a change
lost on the way is found by the streams' slow safety-net reads.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

from services.core import announce
from services.core.values import Change
from services.live import bus

Callback = Callable[[Change | None], object]
_lock = threading.Lock()
_subscribers: defaultdict[str, dict[int, Callback]] = defaultdict(dict)


key = bus.key  # a subject: `key(site, "bot", 3)`
keys_of = bus.keys_of  # the subjects of a change


def subscribe(key: str, callback: Callback, on_ready: Callable[[], object] | None = None
              ) -> Callable[[], None]:
    """Call `callback` for every change of `key` until the returned function is called. The
    change bus listens to `key`'s channel meanwhile; `on_ready` is called once it does."""
    token = id(callback)
    with _lock:
        _subscribers[key][token] = callback
    bus.want(key, on_ready)
    done = [False]  # (not a threading.Event: a stream's every byte counts in a crowd)

    def unsubscribe() -> None:
        with _lock:
            if done[0]:
                return
            done[0] = True
            subs = _subscribers.get(key)
            if subs is not None:
                subs.pop(token, None)
                if not subs:
                    del _subscribers[key]
        bus.unwant(key)

    return unsubscribe


def deliver(change: Change) -> None:
    """Hand `change` to this process's subscribers."""
    with _lock:
        callbacks = [cb for k in keys_of(change) for cb in _subscribers.get(k, {}).values()]
    for callback in callbacks:
        callback(change)


def resync() -> None:
    """Tell every subscriber to read the database (changes may have been missed)."""
    with _lock:
        callbacks = [cb for subs in _subscribers.values() for cb in subs.values()]
    for callback in callbacks:
        callback(None)


def publish(change: Change) -> None:
    """Deliver a change committed in this process here and, if configured, on the bus."""
    deliver(change)
    bus.publish(change)


announce.listen(publish)
