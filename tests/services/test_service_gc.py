"""The server process's garbage collection is tuned for latency (services.api.server.tune_gc): the
objects made while it was set up are frozen out of later collections and the young generation
is collected far less often, so full collections (40-75 ms pauses of the event loop under the
bench's load) become rare (docs/scaling.md, "What limits one replica")."""

from __future__ import annotations

import gc

from services.api import server


def test_tune_gc_freezes_what_exists_and_raises_the_thresholds():
    before = gc.get_threshold()
    try:
        kept = [object() for _ in range(10)], {"a": [1, 2]}  # long-lived, set up before
        server.tune_gc()
        assert gc.get_threshold() == server.GC_THRESHOLDS
        assert gc.get_threshold()[0] >= 10 * 700  # the young generation: 700 by default
        assert gc.get_freeze_count() > 1000  # the modules' functions, types, ... at least
        assert not any(o is kept for o in gc.get_objects())  # out of every collection now
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
