"""A batch simulation's progress and its result table so far, read from `simulations` and
`simulation_chunks` (shared by the workers, the command line and the dashboard)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from bots.stats import Sprt, Totals, summary
from db.batch import CHUNK_DONE, Simulation, SimulationChunk

TOTAL_FIELDS = ("pairs", "net", "net_sq", "wins_a", "wins_sq", "points_a", "points_b")


def totals_of(s: Session, sim_id: int) -> Totals:
    """The exact totals of a simulation's done chunks."""
    row = s.execute(select(*(func.coalesce(func.sum(getattr(SimulationChunk, f)), 0)
                             for f in TOTAL_FIELDS))
                    .where(SimulationChunk.simulation_id == sim_id,
                           SimulationChunk.state == CHUNK_DONE)).one()
    return Totals(**{f: int(v) for f, v in zip(TOTAL_FIELDS, row, strict=True)})


def sprt_of(sim: Simulation) -> Sprt | None:
    if sim.sprt_elo0 is None or sim.sprt_elo1 is None:
        return None
    return Sprt(sim.sprt_elo0, sim.sprt_elo1, sim.sprt_alpha or 0.05, sim.sprt_beta or 0.05)


def progress(sim_id: int, sessions: sessionmaker[Session]) -> dict[str, Any]:
    """State, progress and the result table so far (live while running); KeyError if none."""
    with sessions() as s:
        sim = s.get(Simulation, sim_id)
        if sim is None:
            raise KeyError(f"no simulation {sim_id}")
        totals = totals_of(s, sim_id)
        return {
            "id": sim.id, "state": sim.state, "strategy_a": sim.strategy_a,
            "strategy_b": sim.strategy_b, "profile": sim.profile, "seed": sim.seed,
            "deals": sim.deals, "deals_done": sim.deals_done, "decision": sim.decision,
            "result": json.loads(sim.result) if sim.result else summary(totals, sprt_of(sim)),
        }
