"""Callbacks other parts of bummerl register to learn about matches (e.g. the workers).

Each list holds plain callables; they run in the process that made the change, right after the
database commit (outside the match's lock), and an exception in one is logged and does not undo
anything. A hook should be quick: enqueue the work (as the workers do) rather than do it inline.

- `on_turn(match_id, seat, seq)`: a house bot (`bots.kind == "house"`) must act in `match_id`
  as `seat`; submit its move with `services.actions.submit_action(match_id, seat, action,
  expected_seq=seq, request_id=...)`. Also called for every house turn pending when the server
  starts (`services.actions.resume_all`).
- `on_match_end(match_id)`: the match finished (played out or forfeited).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

on_turn: list[Callable[[int, int, int], object]] = []
on_match_end: list[Callable[[int], object]] = []


def fire(callbacks: list, *args: object) -> None:  # type: ignore[type-arg]
    for callback in list(callbacks):
        try:
            callback(*args)
        except Exception:  # noqa: BLE001  (a hook must never break the service)
            log.exception("hook %r failed for %r", callback, args)


def install(spec: str) -> None:
    """Call the installers named in `spec`: comma-separated "module:function" (e.g. the
    workers' "workers.hooks:install"); one that cannot be imported is logged and skipped."""
    import importlib

    for item in filter(None, (part.strip() for part in spec.split(","))):
        module_name, _, function = item.partition(":")
        try:
            installer = getattr(importlib.import_module(module_name), function or "install")
        except (ImportError, AttributeError) as e:
            log.warning("hooks %r not installed: %s", item, e)
            continue
        installer()
