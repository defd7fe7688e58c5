"""Events (tournaments): the list with each one's progress, and one tournament's page (its
crosstable, standings with tie-breaks, rounds with their pairings, byes and forfeits, and
progress with an ETA), live; JSON twins under /api/. A finished or cancelled event keeps its
page (no longer live)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template

from db.events import T_RUNNING
from web import live
from web.db import sessions
from web.params import ident
from web.tournament_queries import list_tournaments, tournament_detail

bp = Blueprint("tournaments", __name__)


@bp.get("/tournaments")
def index() -> str:
    items = list_tournaments(sessions())
    return render_template("tournaments.html", tournaments=items,
                           live=any(t["state"] == T_RUNNING for t in items))


@bp.get("/events/tournaments")
def index_events() -> Any:
    """The live list of tournaments."""
    def render() -> dict[str, Any]:
        return {"html": {"live-tournaments": render_template(
            "_tournaments_live.html", tournaments=list_tournaments(sessions()))},
                "final": False}

    return live.stream("tournaments", render)


@bp.get("/tournaments/<tournament_id>")
def show(tournament_id: str) -> str:
    t = tournament_detail(sessions(), ident(tournament_id, "tournament id"))
    return render_template("tournament.html", t=t, live=t["state"] == T_RUNNING)


@bp.get("/events/tournaments/<tournament_id>")
def show_events(tournament_id: str) -> Any:
    """The live part of a tournament's page; the stream ends once the event is over."""
    number = ident(tournament_id, "tournament id")
    tournament_detail(sessions(), number)  # 404 before the stream starts

    def render() -> dict[str, Any]:
        t = tournament_detail(sessions(), number)
        return {"html": {"live-tournament": render_template("_tournament_live.html", t=t)},
                "final": t["state"] != T_RUNNING}

    return live.stream(f"tournament:{number}", render)


@bp.get("/api/tournaments")
def api_index() -> Any:
    """`{"tournaments": [...]}`: the latest, running first, each with its progress."""
    return jsonify(tournaments=list_tournaments(sessions()))


@bp.get("/api/tournaments/<tournament_id>")
def api_show(tournament_id: str) -> Any:
    return jsonify(tournament_detail(sessions(), ident(tournament_id, "tournament id")))
