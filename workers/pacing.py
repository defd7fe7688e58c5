"""Sends held until their time: the house's pace against a person.

A house bot answering a person answers `BUMMERL_HOUSE_MIN_THINK_MS` after the person's action
(`workers.moves.min_think_seconds`). The process that commits the person's action (the engine
service, where the hooks run) holds the move's message here and sends it `LEAD_S` before its
time: the worker takes it at once, decides, and submits at the time the message names
(`not_before`; it holds its slot for at most that lead). Not Celery's countdown: a worker
holding many countdown messages raises its prefetch only "eventually" (late answers at p99).

One daemon thread per process keeps the held sends in a heap by due time and hands each one,
when due, to a few sender threads (`SENDERS`): a send is a broker round trip, and in a busy
service one that waits (for the broker, for the interpreter's lock) must not hold up the ones
due after it (sent one after the other, at 50 open tables on a slow 2-core machine, the sends
fell up to 0.7 s behind their time). A send that fails is logged; the sweeper re-sends a house
turn left waiting (`workers.moves.redispatch_house_turns`). Sends held when the process ends are
lost with it; a restarted service sends every pending house turn again
(`services.core.actions.resume_all`).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

LEAD_S = 0.05  # a house move's message leaves this long before its answer is due
SENDERS = 4  # threads that send the held messages once due

_held: list[tuple[float, int, Callable[[], object]]] = []
_order = itertools.count()  # ties keep the order they were held in
_wake = threading.Condition()
_thread: threading.Thread | None = None
_due: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()  # for the senders


def at(when: float | None, send: Callable[[], object]) -> None:
    """Call `send()` at `when` (a `time.time()`), on a sender thread; at once (on this thread)
    if `when` is None."""
    global _thread
    if when is None:
        send()
        return
    with _wake:
        heapq.heappush(_held, (when, next(_order), send))
        if _thread is None:  # daemons: a process that ends does not wait for a send
            _thread = threading.Thread(target=_run, name="bummerl-pacer", daemon=True)
            _thread.start()
            for n in range(SENDERS):
                threading.Thread(target=_send, name=f"bummerl-sender-{n}", daemon=True).start()
        _wake.notify()


def ahead_of(due: float | None, send: Callable[[], object]) -> None:
    """Call `send()` `LEAD_S` before `due` (a `time.time()`; a message whose task waits until
    then), on a sender thread; at once if `due` is None."""
    at(None if due is None else due - LEAD_S, send)


def held() -> int:
    """How many sends are waiting for their time."""
    with _wake:
        return len(_held)


def _run() -> None:
    while True:
        with _wake:
            while not _held or _held[0][0] > time.time():
                _wake.wait(None if not _held else _held[0][0] - time.time())
            _, _, send = heapq.heappop(_held)
        _due.put(send)


def _send() -> None:
    while True:
        send = _due.get()
        try:
            send()
        except Exception:  # noqa: BLE001  (the sweeper re-sends a house turn left waiting)
            log.exception("a held send failed")
