"""A match's lock in the service process (services.core.cache.match_lock / try_lock) excludes every
other holder: the fast path, the old path, readers of the cached game and the bus's follower
all rely on it to keep the cached game equal to the action log."""

from __future__ import annotations

import threading
import time

from services.core import cache


def test_one_thread_at_a_time_inside_a_matchs_lock():
    key = (id(object()), 1)
    inside = worst = 0
    count = threading.Lock()

    def work() -> None:
        nonlocal inside, worst
        for _ in range(100):
            with cache.match_lock(key):
                with count:
                    inside += 1
                    worst = max(worst, inside)
                time.sleep(0.0002)
                with count:
                    inside -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert worst == 1


def test_try_lock_fails_while_the_lock_is_held_and_succeeds_after():
    key = (id(object()), 2)
    with cache.match_lock(key):
        assert cache.try_lock(key) is None
        assert cache.observe_cached(key, 0, 0) is None  # never waits, never reads
    holder = cache.try_lock(key)
    assert holder is not None
    try:
        taken = threading.Event()

        def other() -> None:
            with cache.match_lock(key):
                taken.set()

        t = threading.Thread(target=other)
        t.start()
        assert not taken.wait(0.2)  # the event loop's holder excludes the blocking path too
    finally:
        holder.lock.release()
    t.join(5)
    assert taken.is_set()
