"""Ladder standings per rules profile (`db.standings`), live."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, render_template, url_for

from web import live, queries
from web.db import sessions
from web.params import text_arg

bp = Blueprint("ratings", __name__)


def _shown() -> int | None:
    """Rows of each table the HTML shows: `STANDINGS_ROWS`, or every one with `?all=1` (a
    ladder of thousands of bots renders in seconds; the JSON always has every row)."""
    return None if text_arg("all") == "1" else int(current_app.config["STANDINGS_ROWS"])


def _tables(profile: str | None) -> dict[str, list[dict[str, Any]]]:
    profiles = [queries.check_profile(profile)] if profile else queries.rated_profiles(
        sessions())
    return {p: queries.standings(sessions(), p, with_change=True) for p in profiles}


def _states(tables: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ladder's state in each profile shown (why it is idle, if it is)."""
    return {p: queries.ladder_state(sessions(), p) for p in tables}


@bp.get("/")
@bp.get("/standings")
def all_standings() -> str:
    tables = _tables(None)
    return render_template("standings.html", tables=tables, states=_states(tables),
                           shown=_shown(),
                           events_url=url_for("ratings.events", all=text_arg("all")))


@bp.get("/standings/<profile>")
def standings(profile: str) -> str:
    tables = _tables(profile)
    return render_template("standings.html", tables=tables, states=_states(tables),
                           shown=_shown(),
                           events_url=url_for("ratings.events", profile=profile,
                                              all=text_arg("all")))


@bp.get("/events/standings")
def events() -> Any:
    """The live standings (`?profile=soft` for one profile)."""
    profile = text_arg("profile")
    _tables(profile)  # an unknown profile is a 404 here
    shown = _shown()

    def render() -> dict[str, Any]:
        tables = _tables(profile)
        return {"html": {"live-standings": render_template(
                    "_standings_live.html", tables=tables, states=_states(tables),
                    shown=shown)},
                "final": False}

    return live.stream(f"standings:{profile or ''}:{shown}", render)


@bp.get("/api/standings")
def api_standings() -> Any:
    """`{"profiles": {profile: [row, ...]}, "ladder": {profile: state}}` (the state: running,
    target, free, idle, reason, next_match); `?profile=soft` for one."""
    tables = _tables(text_arg("profile"))
    return jsonify(profiles=tables, ladder=_states(tables))
