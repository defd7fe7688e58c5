"""`services.core.dispatch`: post-commit hooks run on a few threads of their own, so one hook
that blocks (a broker round trip that hangs) holds up neither the committing thread nor the
hooks handed over after it."""

from __future__ import annotations

import threading
import time

from services.core import dispatch, hooks


def turn() -> hooks.HouseTurn:
    return hooks.HouseTurn("random", 1, None, None, committed=time.time())


def test_a_blocked_hook_does_not_hold_up_the_next_ones(monkeypatch):
    release = threading.Event()
    ran: list[tuple[int, str]] = []
    others = threading.Event()

    def hook(match_id: int, seat: int, seq: int, t: hooks.HouseTurn) -> None:
        if match_id == 1:
            release.wait(30)  # a send that hangs
        ran.append((match_id, threading.current_thread().name))
        if len(ran) == dispatch.THREADS - 1:
            others.set()

    monkeypatch.setattr(hooks, "on_turn", [hook])
    assert dispatch.THREADS > 1
    began = time.monotonic()
    for match_id in range(1, dispatch.THREADS + 1):
        dispatch.on_turn(match_id, 0, 1, turn())
    assert time.monotonic() - began < 1  # handing over never waits for a hook
    try:
        assert others.wait(10), ran  # the ones after the blocked one ran meanwhile
        assert 1 not in [m for m, _ in ran]
    finally:
        release.set()
    assert dispatch.flush(10)
    assert sorted(m for m, _ in ran) == list(range(1, dispatch.THREADS + 1))
    assert all(name.startswith("bummerl-hooks-") for _, name in ran)
