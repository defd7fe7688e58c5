"""Callbacks other parts of bummerl register to learn about matches (e.g. the workers).

Each list holds plain callables; they run in the process that made the change, right after the
database commit (outside the match's lock), and an exception in one is logged and does not undo
anything. A hook should be quick: enqueue the work (as the workers do) rather than do it inline.

- `on_turn(match_id, seat, seq, turn)`: a house bot (`bots.kind == "house"`) must act in
  `match_id` as `seat` at `seq`; `turn` (a `HouseTurn`) is what the service knew of it when the
  turn began: the seat's strategy and, when the match's game was at hand, the seat's
  observation, so the move can be decided without asking the service again. Submit the move
  with `services.core.actions.submit_action(match_id, seat, action, expected_seq=seq,
  request_id=...)` (or over gRPC, as the workers do). Also called for every house turn pending
  when the server starts (`services.core.actions.resume_all`).
- `on_match_end(match_id)`: the match finished (played out or forfeited).
- `on_analysis_requested(match_id)`: an operator asked for the finished match's analysis
  (AdminService.AnalyseMatch; docs/analysis.md).
- `on_hosted_upload(version_id)`: a hosted version was uploaded (HostingService; `db.hosted`):
  build it.
- `on_hosted_changed(version_id)`: a hosted version was stopped or resumed: start or stop its
  container now rather than at the supervisor's next round.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bummerl import wire

if TYPE_CHECKING:
    import engine

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HouseTurn:
    """A house bot's turn as the service committed it: what the bot needs to decide."""

    strategy: str  # the seat's house strategy (bots.house_strategy)
    seq: int
    observation: engine.Observation | None  # the seat's, at `seq` (None: not at hand)
    deadline: datetime | None  # when the seat must have acted
    opponent_person: bool = False  # a person plays the other seat (PeopleService)
    committed: float | None = None  # time.time() when the change was committed (None: unknown)

    def encoded(self) -> str | None:
        """The observation as the service would answer GetObservation for it (a serialized
        `GetObservationResponse`: observation, seq, deadline), base64 text for a task message;
        None without an observation. Built on a dispatcher thread, not the committing one."""
        if self.observation is None:
            return None
        reply = wire.observation_response(self.observation, self.seq, self.deadline)
        return base64.b64encode(reply.SerializeToString()).decode("ascii")


on_turn: list[Callable[[int, int, int, HouseTurn], object]] = []
on_match_end: list[Callable[[int], object]] = []
on_analysis_requested: list[Callable[[int], object]] = []
on_hosted_upload: list[Callable[[int], object]] = []
on_hosted_changed: list[Callable[[int], object]] = []


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
