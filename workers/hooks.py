"""Wire the service's post-commit hooks to the queues (call `install()` once per process).

- `services.core.hooks.on_turn(match_id, seat, seq, turn)` → a `bummerl.move` task on `moves`, with
  the seat's strategy and observation (when the service had it at hand) in its message;
- `services.core.hooks.on_match_end(match_id)` → a `bummerl.rate` task (rates it if it is a ladder
  match), and with `BUMMERL_ANALYSE_ALL=1` a `bummerl.analyse` task on `batch` (its analysis);
- `services.core.hooks.on_analysis_requested(match_id)` (AdminService.AnalyseMatch) → a
  `bummerl.analyse` task on `batch`;
- `services.core.hooks.on_hosted_upload(version_id)` → a `bummerl.hosted_build` task on
  `hosting`; `on_hosted_changed(version_id)` (stopped, resumed) → a `bummerl.hosted_reconcile`;
- `services.core.analysts.position` ← `analysis.position.hint`: the values a person's hint
  shows (PeopleService.Hint), worked out in the service process from the seat's observation.

The hooks run after the service's commit, so a task never sees a state older than its trigger.
Installed by the engine service (`bummerl serve`, `bummerl up`), the one process that commits
match changes: every action or new match that hands the turn to a house bot, whoever asked for
it over gRPC (a remote bot, a worker's house move, the ladder's CreateMatch).
A message lost on the way is made good by the sweeper.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.core.hooks import HouseTurn

_installed = False


def on_turn(match_id: int, seat: int, seq: int, turn: HouseTurn) -> None:
    from workers.tasks import send_move

    send_move(match_id, seat, seq, strategy=turn.strategy or None, observation=turn.encoded(),
              person=turn.opponent_person, since=turn.committed)


def on_match_end(match_id: int) -> None:
    from workers.tasks import rate_match_task

    rate_match_task.apply_async((match_id,))
    if analyse_all():
        from workers.tasks import send_analysis

        send_analysis(match_id)


def on_analysis_requested(match_id: int) -> None:
    from workers.tasks import send_analysis

    send_analysis(match_id)


def on_hosted_upload(version_id: int) -> None:
    from workers.tasks import hosted_build_task

    hosted_build_task.apply_async((version_id,))


def on_hosted_changed(version_id: int) -> None:
    from workers.tasks import hosted_reconcile_task

    hosted_reconcile_task.apply_async()


def analyse_all() -> bool:
    """Whether every finished match is analysed (`BUMMERL_ANALYSE_ALL`, default off)."""
    return os.environ.get("BUMMERL_ANALYSE_ALL", "").strip().lower() in ("1", "true", "yes",
                                                                          "on")


def install() -> None:
    """Register the hooks with `services.core.hooks` (idempotent)."""
    global _installed
    if _installed:
        return
    from analysis.position import hint
    from services.core import analysts, hooks

    analysts.position.append(hint)  # a person's hint (services.core.analysts)
    hooks.on_turn.append(on_turn)
    hooks.on_match_end.append(on_match_end)
    hooks.on_analysis_requested.append(on_analysis_requested)
    hooks.on_hosted_upload.append(on_hosted_upload)
    hooks.on_hosted_changed.append(on_hosted_changed)
    _installed = True
