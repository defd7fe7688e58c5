"""In-process change notification: streams wait for keys like "match:7" or "bot:3".

The database stays the authority: a woken stream re-reads it. Waits also time out, so changes
made by another process (e.g. a worker submitting a house move) are picked up by polling.
"""

from __future__ import annotations

import threading
from collections import defaultdict

_cond = threading.Condition()
_versions: defaultdict[str, int] = defaultdict(int)


def notify(*keys: str) -> None:
    with _cond:
        for key in keys:
            _versions[key] += 1
        _cond.notify_all()


def version(key: str) -> int:
    with _cond:
        return _versions[key]


def wait(key: str, seen: int, timeout: float) -> int:
    """Wait until `key` changes from version `seen` (or `timeout` s); returns the version."""
    with _cond:
        _cond.wait_for(lambda: _versions[key] != seen, timeout)
        return _versions[key]
