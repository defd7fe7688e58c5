"""In-process fan-out of committed changes: a change of a match goes at once to the streams
that wait for it (the Play streams of its two bots, its WatchMatch streams).

Keys name a database ("site") and a subject: `key(site, "bot", 3)`, `key(site, "match", 7)`.
A subscriber is a callable taking a `Change` (the match's summary after the change, so a Play
stream can send the next turn without reading the database) or None ("something may have
changed: read the database", e.g. after the change bus reconnected). Callbacks run on the
thread that committed (or the bus's listener): they must only hand the change over (e.g.
`loop.call_soon_threadsafe`), never block.

`publish` also hands a change made here to the change bus (`services.bus`), which delivers it
to the other processes serving the same database. The database stays the authority: a change
lost on the way is found by the streams' slow safety-net reads.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from services import bus

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from services.matches import MatchState


class Change(NamedTuple):
    """A committed change of a match: its state after it, and where it happened (a named
    tuple: one is made for every action)."""

    site: str  # the database (see `site_of`)
    match: MatchState  # the match's summary after the change
    everyone: bool = True  # False: only the bot to act needs to hear of it
    action: tuple[int, str] | None = None  # (seat, action) appended at seq - 1, if one was


Callback = Callable[["Change | None"], object]
_lock = threading.Lock()
_subscribers: defaultdict[str, dict[int, Callback]] = defaultdict(dict)
_sites: dict[int, str] = {}
_binds: defaultdict[str, list[Engine]] = defaultdict(list)


def site_of(bind: Engine) -> str:
    """A short name of the database `bind` is connected to (the SQLite file; PostgreSQL's
    address, database and schema): processes on the same database share it, others not."""
    site = _sites.get(id(bind))
    if site is None:
        if bind.dialect.name == "sqlite":
            ident = "sqlite:" + os.path.realpath(bind.url.database or ":memory:")
        else:  # as the server itself names it (the schema may come from connect options)
            from sqlalchemy import text

            with bind.connect() as connection:
                row = connection.execute(text(
                    "SELECT inet_server_addr(), inet_server_port(), current_database(), "
                    "current_schema()")).one()
            ident = f"{bind.dialect.name}:" + "/".join(map(str, row))
        site = hashlib.sha256(ident.encode()).hexdigest()[:16]
        with _lock:
            _sites[id(bind)] = site
            _binds[site].append(bind)
    return site


def binds_of(site: str) -> list[Engine]:
    """The engines of this process on database `site`."""
    with _lock:
        return list(_binds.get(site, ()))


def key(site: str, kind: str, ident: int) -> str:
    return f"{site}/{kind}:{ident}"


def subscribe(key: str, callback: Callback) -> Callable[[], None]:
    """Call `callback` for every change of `key` until the returned function is called."""
    token = id(callback)
    with _lock:
        _subscribers[key][token] = callback

    def unsubscribe() -> None:
        with _lock:
            subs = _subscribers.get(key)
            if subs is not None:
                subs.pop(token, None)
                if not subs:
                    del _subscribers[key]

    return unsubscribe


def keys_of(change: Change) -> list[str]:
    m = change.match
    keys = [key(change.site, "match", m.id)]
    if change.everyone or m.to_act is None:
        keys += [key(change.site, "bot", m.bot0_id), key(change.site, "bot", m.bot1_id)]
    else:
        keys.append(key(change.site, "bot", m.bot1_id if m.to_act else m.bot0_id))
    return keys


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
