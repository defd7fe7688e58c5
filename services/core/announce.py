"""After a commit: the committed change of a match goes up to whoever listens, and its hooks go
to the dispatcher.

The core never imports the layers above it. The streams' fan-out (`services.live.notify`)
registers itself here with `listen` when it is imported, and gets every committed change as a
`Change` on the thread that committed; the workers' hooks (`services.core.hooks`, run by
`services.core.dispatch` on a thread of their own) learn of house turns and finished matches.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from db.base import aware
from db.models import FINISHED, HOUSE, PERSON, RUNNING, Match
from services.core import cache, dispatch, hooks, metrics
from services.core.connections import binds_of
from services.core.values import Change, MatchState

log = logging.getLogger(__name__)

Listener = Callable[[Change], object]
_listeners: list[Listener] = []


def listen(listener: Listener) -> None:
    """Call `listener` with every change committed in this process from now on (once, however
    often it is registered). It runs on the committing thread: it must only hand the change
    over, never block."""
    if listener not in _listeners:
        _listeners.append(listener)


def after_commit(site: str, m: Match, everyone: bool = True,
                 action: tuple[int, str] | None = None) -> None:
    """Announce a committed change of `m` on database `site` to the listeners (the streams of
    the match and of its bots: only the bot to act unless `everyone`), and hand the hooks to
    the dispatcher (never run on this thread). `action` (seat, action) is the action appended
    at `m.seq - 1`, if the change is one (other processes apply it to their cached game)."""
    announce(site, m, everyone, action)
    hand_over(site, m)


def announce(site: str, m: Match, everyone: bool = True,
             action: tuple[int, str] | None = None) -> None:
    """`after_commit`'s first half: the change, to the listeners."""
    if _listeners:
        change = Change(site, MatchState.of(m), everyone, action)
        for listener in _listeners:
            listener(change)


def hand_over(site: str, m: Match) -> None:
    """`after_commit`'s second half: hand the hooks to the dispatcher (a house bot's turn, a
    match's end) and count a match's end."""
    if m.state == RUNNING and m.to_act is not None and m.bot(m.to_act).kind == HOUSE:
        dispatch.on_turn(m.id, m.to_act, m.seq, house_turn(site, m))
    if m.state != RUNNING:
        metrics.match_ended(m.end_reason)
    if m.state == FINISHED:
        dispatch.on_match_end(m.id)


def house_turn(site: str, m: Match) -> hooks.HouseTurn:
    """The house bot's turn in `m` (committed, house seat to act) with the seat's observation
    of the cached game, if this process holds it at `m.seq` and nobody is changing it now: the
    worker then needs no GetObservation round trip. Only the observation is built here, on the
    committing thread (a named tuple); its encoding waits for a dispatcher thread."""
    seat = m.to_act
    assert seat is not None
    obs = None
    try:
        for bind in binds_of(site):
            obs = cache.observe_cached(cache.bind_key(bind, m.id), m.seq, seat)
            if obs is not None:
                break
    except Exception:  # noqa: BLE001  (never fail the committed change: the worker asks)
        log.exception("the observation of house turn %s/%s was not at hand", m.id, m.seq)
    return hooks.HouseTurn(m.bot(seat).house_strategy or "", m.seq, obs, aware(m.deadline_at),
                           m.bot(1 - seat).kind == PERSON, time.time())
