"""The hook dispatcher: post-commit hooks (`services.core.hooks`) run on a few background threads
of the process (`THREADS`), never on the thread that committed (a bot's stream or request).

A committed change hands its trigger over with `on_turn` / `on_match_end`, which never block:
the queue is bounded (`MAX_PENDING`); when it is full the trigger is dropped and logged, and
the workers' sweeper (which re-enqueues every house turn that waits too long) makes it good.
So a hook that blocks (e.g. enqueuing a Celery task while Redis is down) delays later hooks,
never a submit's answer nor the turns pushed to the bots. Hooks start in the order they were
handed over, up to `THREADS` at once: a hook is mostly a broker round trip (a house move's
message), and one thread, at 50 open tables on a 2-core machine, let them queue for over a
second at p99.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time

from services.core import hooks

log = logging.getLogger(__name__)

MAX_PENDING = 10000
THREADS = 8  # hooks running at once
_queue: queue.Queue[tuple[list, tuple[object, ...]]] = queue.Queue(MAX_PENDING)  # type: ignore[type-arg]
_started = False  # the threads run (started with the first hook handed over)
_guard = threading.Lock()
_dropped = 0


def _run() -> None:
    while True:
        callbacks, args = _queue.get()
        try:
            hooks.fire(callbacks, *args)
        finally:
            _queue.task_done()


def _submit(callbacks: list, *args: object) -> None:  # type: ignore[type-arg]
    global _started, _dropped
    if not callbacks:
        return
    if not _started:
        with _guard:
            if not _started:
                for n in range(THREADS):
                    threading.Thread(target=_run, daemon=True, name=f"bummerl-hooks-{n}").start()
                _started = True
    try:
        _queue.put_nowait((callbacks, args))
    except queue.Full:
        _dropped += 1
        log.warning("hook dispatcher full (%d pending): %r dropped; the sweeper catches up",
                    MAX_PENDING, args)


def on_turn(match_id: int, seat: int, seq: int, turn: hooks.HouseTurn) -> None:
    """Run the `hooks.on_turn` callbacks soon, on a dispatcher thread."""
    _submit(hooks.on_turn, match_id, seat, seq, turn)


def on_match_end(match_id: int) -> None:
    """Run the `hooks.on_match_end` callbacks soon, on a dispatcher thread."""
    _submit(hooks.on_match_end, match_id)


def flush(timeout: float = 2.0) -> bool:
    """Wait (at most `timeout` s) until every handed-over trigger has run; True if so."""
    end = time.monotonic() + timeout
    while _queue.unfinished_tasks:
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


atexit.register(flush)  # a short-lived process (a CLI command) still fires its hooks


def on_analysis_requested(match_id: int) -> None:
    """Run the `hooks.on_analysis_requested` callbacks soon, on a dispatcher thread."""
    _submit(hooks.on_analysis_requested, match_id)
