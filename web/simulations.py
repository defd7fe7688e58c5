"""Batch simulations: progress and result tables."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template

from web import live, queries
from web.db import sessions
from web.params import ident

bp = Blueprint("simulations", __name__)


@bp.get("/simulations")
def index() -> str:
    sims = queries.list_simulations(sessions())
    return render_template("simulations.html", simulations=sims,
                           live=any(s["state"] == "running" for s in sims))


@bp.get("/events/simulations")
def events() -> Any:
    """The live list of simulations."""
    def render() -> dict[str, Any]:
        sims = queries.list_simulations(sessions())
        return {"html": {"live-simulations": render_template("_simulations_live.html",
                                                             simulations=sims)},
                "final": False}

    return live.stream("simulations", render)


@bp.get("/simulations/<sim_id>")
def show(sim_id: str) -> str:
    sim = queries.simulation_detail(sessions(), ident(sim_id, "simulation id"))
    return render_template("simulation.html", sim=sim, live=sim["state"] == "running")


@bp.get("/events/simulations/<sim_id>")
def show_events(sim_id: str) -> Any:
    """The live progress and result table of one simulation."""
    number = ident(sim_id, "simulation id")
    queries.simulation_detail(sessions(), number)  # 404 before the stream starts

    def render() -> dict[str, Any]:
        sim = queries.simulation_detail(sessions(), number)
        return {"html": {"live-simulation": render_template("_simulation_live.html", sim=sim)},
                "final": sim["state"] != "running"}

    return live.stream(f"simulation:{number}", render)


@bp.get("/api/simulations/<sim_id>")
def api_show(sim_id: str) -> Any:
    return jsonify(queries.simulation_detail(sessions(), ident(sim_id,
                                                                      "simulation id")))
