"""Celery tasks. Thin: each takes ids (a house move also what it needs to decide), and is
idempotent.

- `bummerl.move` (queue `moves`; `people` when it answers a person): a house bot's move in a
  live match, computed here (from the
  seat's observation in the message, else asked for over gRPC) and submitted to the engine
  service over gRPC with the house token, the expected sequence number and a request id derived
  from (match, seq): a duplicate or late message never applies a second action (workers.moves).
- `bummerl.chunk` (queue `batch`): one chunk of a batch simulation; counted once.
- `bummerl.analyse` (queue `batch`): the analysis of one finished match (workers.analysis),
  then the exercises cut from it (workers.exercises).
- `bummerl.cut_exercises` (queue `batch`): exercises from every analysed match that has none
  yet (workers.exercises).
- `bummerl.ladder_tick`, `bummerl.sweep`, `bummerl.rate` (queue `moves`): the scheduler's work.
- `bummerl.versiontests_tick` (queue `moves`): the version tests' pairs (workers.versiontests).
- `bummerl.hosted_build`, `bummerl.hosted_reconcile` (queue `hosting`): a hosted version's build
  and validation match, and the supervisor's round that keeps the live ones running
  (workers.hosted).
- `bummerl.events_tick` (queue `moves`, beat): one `bummerl.event_step` per running tournament,
  which pairs its rounds and starts, settles and rates its duplicate pairs (workers.events);
  `bummerl.rate` (a match ended) also sends a step for a tournament's match.

All run with `acks_late` and `reject_on_worker_lost` (workers.app): a message is acknowledged only
after its task ran, and a worker process that dies mid-task puts it back on the queue.

This registry imports the implementations, never the other way round: the ones that enqueue a
task (a chunk's successors, the sweeper's re-sends) are given a sender from here (`send_move`,
`send_chunks`).
"""

from __future__ import annotations

import os
import time
from typing import Any

from workers.app import PEOPLE, app

MOVE_LIMIT = float(os.environ.get("BUMMERL_MOVE_TASK_LIMIT", "60"))
CHUNK_LIMIT = float(os.environ.get("BUMMERL_CHUNK_TASK_LIMIT", "900"))


@app.task(name="bummerl.move", acks_late=True, reject_on_worker_lost=True,
          soft_time_limit=MOVE_LIMIT, time_limit=MOVE_LIMIT + 10)
def play_move_task(match_id: int, seat: int, seq: int, strategy: str | None = None,
                   observation: str | None = None, not_before: float | None = None) -> None:
    from workers.moves import play_house_move

    play_house_move(match_id, seat, seq, strategy=strategy, observation=observation,
                    not_before=not_before)


@app.task(name="bummerl.chunk", acks_late=True, reject_on_worker_lost=True,
          soft_time_limit=CHUNK_LIMIT, time_limit=CHUNK_LIMIT + 30)
def run_chunk_task(chunk_id: int) -> None:
    from workers.simulations import run_chunk

    run_chunk(chunk_id, send=send_chunks)


@app.task(name="bummerl.analyse", acks_late=True, reject_on_worker_lost=True,
          soft_time_limit=CHUNK_LIMIT, time_limit=CHUNK_LIMIT + 30)
def analyse_match_task(match_id: int) -> str:
    from workers.analysis import analyse_match

    result = analyse_match(match_id)
    if result == "done":  # exercises for people from its exact decisions (workers.exercises)
        from workers.exercises import cut_match

        try:
            cut_match(match_id)
        except Exception:  # noqa: BLE001  (the analysis is kept; `bummerl exercises cut` retries)
            import logging

            logging.getLogger(__name__).exception("no exercises cut from match %s", match_id)
    return result


@app.task(name="bummerl.cut_exercises", acks_late=True, reject_on_worker_lost=True,
          soft_time_limit=CHUNK_LIMIT, time_limit=CHUNK_LIMIT + 30)
def cut_exercises_task(limit: int | None = None) -> dict[str, int]:
    from workers.exercises import cut_all

    return cut_all(limit=limit)


@app.task(name="bummerl.ladder_tick", acks_late=True, reject_on_worker_lost=True,
          time_limit=120)
def ladder_tick_task() -> None:
    from workers.ladder import tick

    tick()


@app.task(name="bummerl.rate", acks_late=True, reject_on_worker_lost=True,
          time_limit=60)
def rate_match_task(match_id: int) -> None:
    from workers.events import after_match
    from workers.ladder import rate_match
    from workers.people import rate_people_match

    rate_match(match_id)
    rate_people_match(match_id)  # a rated game with a person: the people's pool only
    after_match(match_id, send=send_event_step)  # a tournament's leg: its next step now


@app.task(name="bummerl.events_tick", acks_late=True, reject_on_worker_lost=True,
          time_limit=60)
def events_tick_task() -> None:
    from workers.events import tick

    tick(send=send_event_step)


@app.task(name="bummerl.event_step", acks_late=True, reject_on_worker_lost=True,
          time_limit=120)
def event_step_task(tournament_id: int) -> None:
    from workers.events import step

    step(tournament_id)


@app.task(name="bummerl.sweep", acks_late=True, reject_on_worker_lost=True,
          time_limit=120)
def sweep_task() -> None:
    from workers.sweeper import sweep

    sweep(send_chunks=send_chunks, send_move=send_move, send_analysis=send_analysis)


@app.task(name="bummerl.versiontests_tick", acks_late=True,
          reject_on_worker_lost=True, time_limit=120)
def versiontests_tick_task() -> None:
    from workers.versiontests import tick

    tick()


@app.task(name="bummerl.hosted_build", acks_late=True,
          reject_on_worker_lost=True, time_limit=3600)
def hosted_build_task(version_id: int) -> str | None:
    from workers.hosted import build

    state = build(version_id)
    if state is not None:
        hosted_reconcile_task.apply_async()  # a version just live starts now
    return state


@app.task(name="bummerl.hosted_reconcile", acks_late=True,
          reject_on_worker_lost=True, time_limit=300)
def hosted_reconcile_task() -> list[str]:
    from workers.hosted import reconcile_once

    return reconcile_once(send_build=hosted_build_task.apply_async)


def send_move(match_id: int, seat: int, seq: int, *, strategy: str | None = None,
              observation: str | None = None, person: bool = False,
              since: float | None = None) -> None:
    """Enqueue a house move (call after the commit that made it owed), with what the service
    knows of the turn (the seat's strategy and its observation as `HouseTurn.encoded()`;
    `person`: a person plays the other seat, and `since` is when the turn was committed:
    `move_message`)."""
    args, kwargs, options = move_message(match_id, seat, seq, strategy=strategy,
                                         observation=observation, person=person, since=since)
    play_move_task.apply_async(args, kwargs, **options)


def move_message(match_id: int, seat: int, seq: int, *, strategy: str | None = None,
                 observation: str | None = None, person: bool = False,
                 since: float | None = None
                 ) -> tuple[tuple[int, int, int], dict[str, Any], dict[str, Any]]:
    """The arguments, keyword arguments and sending options of a `bummerl.move` message. A
    house bot answering a person (`person`) keeps a believable pace: the message, sent at once
    on the `people` queue, says when it is due (`not_before`, `BUMMERL_HOUSE_MIN_THINK_MS` after
    the person's action was committed (`since`, a time.time(); now if None or later: the hooks
    run a little after the commit), this clock's time); the task decides at once and submits
    then, never earlier. The people's workers run a thread pool, so a task waiting for its time
    is a sleeping thread (`bummerl worker -Q people` runs threads by default)."""
    from workers.moves import min_think_seconds

    extra: dict[str, Any] = {k: v for k, v in (("strategy", strategy),
                                               ("observation", observation)) if v}
    options: dict[str, Any] = {}
    if person:  # latency-bound: its own queue and workers (workers.app)
        options["queue"] = PEOPLE
        if min_think_seconds() > 0:
            now = time.time()
            extra["not_before"] = min(now, since or now) + min_think_seconds()
    # The message's readable copy of the arguments (its header, and the worker's logs) leaves
    # the observation out: a message holds it once.
    shown = {**extra, "observation": f"<{len(observation)} chars>"} if observation else extra
    options["kwargsrepr"] = repr(shown)
    return (match_id, seat, seq), extra, options


def send_chunks(chunk_ids: list[int]) -> None:
    """One `bummerl.chunk` task per id on the `batch` queue."""
    for chunk_id in chunk_ids:
        run_chunk_task.apply_async((chunk_id,))


def send_analysis(match_id: int) -> None:
    """A `bummerl.analyse` task for the match on the `batch` queue (after the commit that
    finished the match or asked for its analysis)."""
    analyse_match_task.apply_async((match_id,))


def send_event_step(tournament_id: int) -> None:
    """One `bummerl.event_step` for the tournament, expiring after a period (the next tick
    sends another)."""
    from workers.events import every_s

    event_step_task.apply_async((tournament_id,), expires=every_s())
