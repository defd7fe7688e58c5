"""The position analyst the service asks for a person's hint (issue 31; docs/analysis.md
"Hints and exercises for people").

The service cannot import the analysis (analysis/ uses the workers' endgame solver, and the
workers use the service: an import circle), so, like the post-commit hooks, the analyst is
registered by whoever runs the service: `workers.hooks:install` (the default `BUMMERL_HOOKS`)
adds `analysis.position.hint`. Without one a hint is UNAVAILABLE, saying so.

A hint takes CPU in the service process (about 0.1 s on an idle core, more while the stock is
open); at most `HINTS_AT_ONCE` run at once, and a person asking while that many run is told to
try again (RESOURCE_EXHAUSTED). Answers are kept per observation (`CACHE`): asking twice at the
same turn costs nothing.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from services.core.errors import ResourceExhausted, Unavailable

if TYPE_CHECKING:
    import engine

HINTS_AT_ONCE = 2
CACHE = 256

position: list[Callable[[engine.Observation], dict[str, Any]]] = []
_slots = threading.BoundedSemaphore(HINTS_AT_ONCE)
_cache: OrderedDict[str, dict[str, Any]] = OrderedDict()
_lock = threading.Lock()


def value_position(obs: engine.Observation) -> dict[str, Any]:
    """The registered analyst's values of `obs`'s legal actions (see the module docstring)."""
    if not position:
        raise Unavailable("no position analyst is installed in this service (BUMMERL_HOOKS "
                          "should include workers.hooks:install): hints are not available")
    key = json.dumps(obs.to_dict(), sort_keys=True)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    if not _slots.acquire(timeout=5):
        raise ResourceExhausted(f"{HINTS_AT_ONCE} hints are being worked out: try again in a "
                                "moment", retry_after=2)
    try:
        found = position[0](obs)
    finally:
        _slots.release()
    with _lock:
        _cache[key] = found
        while len(_cache) > CACHE:
            _cache.popitem(last=False)
    return found
