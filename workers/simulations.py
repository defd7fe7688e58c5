"""Batch simulations in the database: create one, run a chunk, aggregate, stop early.

The flow: `create_simulation` writes the simulation and all its chunks (state `pending`);
`dispatch` marks up to `window` chunks as enqueued and, after the commit, sends their ids to the
`batch` queue; `run_chunk` plays a chunk in-process and records its exact totals in the same
transaction that marks it done, but only if it was still pending (so nothing is counted twice),
then finishes the simulation, stops it (SPRT decided) or dispatches more chunks. Chunk ids are
enqueued by the `send` each is given (on a site: `workers.tasks.send_chunks`).
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from bots import make_bot
from bots.batch import play_deals
from bots.stats import Sprt, summary
from db.base import aware, session_factory
from db.batch import (
    CHUNK_CANCELLED,
    CHUNK_DONE,
    CHUNK_PENDING,
    SIM_DONE,
    SIM_RUNNING,
    SIM_STOPPED,
    Simulation,
    SimulationChunk,
)
from db.progress import TOTAL_FIELDS, sprt_of, totals_of
from db.progress import progress as db_progress
from engine import Profile
from workers import metrics

log = logging.getLogger(__name__)

Sender = Callable[[list[int]], None]  # enqueues chunk ids (workers.tasks.send_chunks)


def rowcount(result: object) -> int:
    """Rows an UPDATE changed."""
    assert isinstance(result, CursorResult)
    return result.rowcount


def now() -> datetime:
    return datetime.now(UTC)


def window() -> int:
    return int(os.environ.get("BUMMERL_BATCH_WINDOW", "16"))


def default_chunk(strategy_a: str, strategy_b: str) -> int:
    """Deals per chunk: a chunk should take about a second (search bots are ~100× slower;
    champion thinks 100 ms a move, about 2 s a deal)."""
    if "champion" in (strategy_a, strategy_b):
        return 2
    return 20 if "rdeep" in (strategy_a, strategy_b) else 500


def create_simulation(strategy_a: str, strategy_b: str, deals: int, seed: int | None = None,
                      profile: str = "soft", chunk_deals: int | None = None,
                      sprt: Sprt | None = None,
                      sessions: sessionmaker[Session] | None = None) -> int:
    """Write a simulation and its chunks; returns its id. Call `dispatch` to start it."""
    make_bot(strategy_a), make_bot(strategy_b)  # unknown strategy names fail here
    Profile(profile)
    chunk_deals = chunk_deals or default_chunk(strategy_a, strategy_b)
    if deals < 1 or chunk_deals < 1:
        raise ValueError("deals and chunk size must be positive")
    sessions = sessions or session_factory()
    seed = random.randrange(2**31) if seed is None else seed
    with sessions.begin() as s:
        sim = Simulation(strategy_a=strategy_a, strategy_b=strategy_b, profile=profile, seed=seed,
                         deals=deals, chunk_deals=chunk_deals, state=SIM_RUNNING, deals_done=0,
                         created_at=now(), progress_at=now())
        if sprt is not None:
            sim.sprt_elo0, sim.sprt_elo1 = sprt.elo0, sprt.elo1
            sim.sprt_alpha, sim.sprt_beta = sprt.alpha, sprt.beta
        s.add(sim)
        s.flush()
        for number, first in enumerate(range(0, deals, chunk_deals)):
            s.add(SimulationChunk(simulation_id=sim.id, number=number, first_deal=first,
                                  deals=min(chunk_deals, deals - first), state=CHUNK_PENDING,
                                  attempts=0, **dict.fromkeys(TOTAL_FIELDS, 0)))
        return sim.id


def _mark_enqueued(s: Session, sim_id: int, limit: int, fresh_only: bool) -> list[int]:
    """Mark up to `limit` pending chunks as enqueued now (fresh: never enqueued); their ids."""
    query = select(SimulationChunk.id).where(SimulationChunk.simulation_id == sim_id,
                                             SimulationChunk.state == CHUNK_PENDING)
    if fresh_only:
        query = query.where(SimulationChunk.enqueued_at.is_(None))
    ids = list(s.scalars(query.order_by(SimulationChunk.number).limit(limit)))
    if ids:
        s.execute(update(SimulationChunk).where(SimulationChunk.id.in_(ids))
                  .values(enqueued_at=now()))
    return ids


def _in_flight(s: Session, sim_id: int) -> int:
    return s.scalar(select(func.count()).where(
        SimulationChunk.simulation_id == sim_id, SimulationChunk.state == CHUNK_PENDING,
        SimulationChunk.enqueued_at.is_not(None))) or 0


def dispatch(sim_id: int, sessions: sessionmaker[Session] | None = None, *,
             send: Sender) -> list[int]:
    """Enqueue fresh chunks up to the window (after the commit); the ids sent."""
    sessions = sessions or session_factory()
    with sessions.begin() as s:
        ids = _mark_enqueued(s, sim_id, max(0, window() - _in_flight(s, sim_id)), True)
    send(ids)
    return ids


def run_chunk(chunk_id: int, sessions: sessionmaker[Session] | None = None, *,
              send: Sender) -> bool:
    """Play chunk `chunk_id` and record it. Idempotent: True only if this call counted it."""
    sessions = sessions or session_factory()
    with sessions.begin() as s:
        chunk = s.get(SimulationChunk, chunk_id)
        if chunk is None or chunk.state != CHUNK_PENDING:
            return False
        sim = s.get(Simulation, chunk.simulation_id)
        if sim is None or sim.state != SIM_RUNNING:
            return False
        chunk.attempts += 1
        job = (sim.id, sim.strategy_a, sim.strategy_b, sim.seed, chunk.first_deal, chunk.deals,
               sim.profile)
    sim_id, strategy_a, strategy_b, seed, first, count, profile = job
    started = time.perf_counter()
    totals = play_deals(strategy_a, strategy_b, seed, first, count, profile)
    metrics.deals_played(count, time.perf_counter() - started)
    to_send: list[int] = []
    with sessions.begin() as s:
        # Lock the simulation row first (PostgreSQL row lock; SQLite's write lock), so that
        # concurrent chunk completions of one simulation are serialised.
        locked = s.execute(update(Simulation)
                           .where(Simulation.id == sim_id, Simulation.state == SIM_RUNNING)
                           .values(progress_at=now()))
        if rowcount(locked) == 0:
            return False  # finished or stopped meanwhile: this chunk no longer counts
        marked = s.execute(update(SimulationChunk)
                           .where(SimulationChunk.id == chunk_id,
                                  SimulationChunk.state == CHUNK_PENDING)
                           .values(state=CHUNK_DONE, done_at=now(), **totals.as_dict()))
        if rowcount(marked) == 0:
            return False  # another run of this chunk counted it already
        s.execute(update(Simulation).where(Simulation.id == sim_id)
                  .values(deals_done=Simulation.deals_done + count))
        to_send = _after_chunk(s, sim_id)
    send(to_send)
    return True


def _after_chunk(s: Session, sim_id: int) -> list[int]:
    """Finish, stop early, or pick the next chunks to send. Runs under the simulation lock."""
    sim = s.execute(select(Simulation).where(Simulation.id == sim_id)
                    .execution_options(populate_existing=True)).scalar_one()
    pending = s.scalar(select(func.count()).where(SimulationChunk.simulation_id == sim_id,
                                                  SimulationChunk.state == CHUNK_PENDING)) or 0
    totals = totals_of(s, sim_id)
    sprt = sprt_of(sim)
    decision = sprt.decide(totals) if sprt is not None else None
    if pending == 0 or decision is not None:
        sim.state = SIM_DONE if pending == 0 else SIM_STOPPED
        sim.decision = decision
        sim.finished_at = now()
        sim.result = json.dumps(summary(totals, sprt))
        if pending:
            s.execute(update(SimulationChunk)
                      .where(SimulationChunk.simulation_id == sim_id,
                             SimulationChunk.state == CHUNK_PENDING)
                      .values(state=CHUNK_CANCELLED))
        log.info("simulation %s %s after %s deals", sim_id, sim.state, totals.pairs)
        return []
    return _mark_enqueued(s, sim_id, max(0, window() - _in_flight(s, sim_id)), True)


def redispatch_stalled(stale_seconds: float, sessions: sessionmaker[Session] | None = None,
                       *, send: Sender) -> list[int]:
    """Sweeper part: re-enqueue the owed chunks of running simulations without progress for
    `stale_seconds` (their messages were lost with a worker, or never sent); the ids sent."""
    sessions = sessions or session_factory()
    cutoff = now().timestamp() - stale_seconds
    ids: list[int] = []
    with sessions.begin() as s:
        for sim in s.scalars(select(Simulation).where(Simulation.state == SIM_RUNNING)):
            if aware(sim.progress_at).timestamp() > cutoff:
                continue
            sim.progress_at = now()
            ids += _mark_enqueued(s, sim.id, window(), False)
    send(ids)
    if ids:
        log.warning("sweeper: re-enqueued %d stalled chunk(s): %s", len(ids), ids)
    return ids



def progress(sim_id: int, sessions: sessionmaker[Session] | None = None) -> dict:
    """State, progress and the result table so far (`db.progress`)."""
    return db_progress(sim_id, sessions or session_factory())
