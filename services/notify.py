"""In-process change notification: streams wait for keys like "match:7" or "bot:3".

The database stays the authority: a woken stream re-reads it. Waits also time out, so changes
made by another process (e.g. a worker submitting a house move) are picked up by polling.
"""

from __future__ import annotations

import threading
from collections import defaultdict

_lock = threading.Lock()
_conditions: dict[str, threading.Condition] = {}
_versions: defaultdict[str, int] = defaultdict(int)


def _condition(key: str) -> threading.Condition:
    condition = _conditions.get(key)
    if condition is None:
        condition = _conditions.setdefault(key, threading.Condition(_lock))
    return condition


def notify(*keys: str) -> None:
    with _lock:
        for key in keys:
            _versions[key] += 1
            condition = _conditions.get(key)
            if condition is not None:
                condition.notify_all()


def version(key: str) -> int:
    with _lock:
        return _versions[key]


def wait(key: str, seen: int, timeout: float) -> int:
    """Wait until `key` changes from version `seen` (or `timeout` s); returns the version."""
    with _lock:
        _condition(key).wait_for(lambda: _versions[key] != seen, timeout)
        return _versions[key]
