"""Ladder standings per rules profile (`db.standings`), live."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template

from web import queries
from web.db import sessions
from web.params import text_arg

bp = Blueprint("ratings", __name__)


@bp.get("/")
@bp.get("/standings")
def all_standings() -> str:
    profiles = queries.rated_profiles(sessions())
    tables = {p: queries.standings(sessions(), p) for p in profiles}
    return render_template("standings.html", tables=tables, live=True)


@bp.get("/standings/<profile>")
def standings(profile: str) -> str:
    queries.check_profile(profile)
    return render_template("standings.html", tables={profile: queries.standings(sessions(),
                                                                                 profile)},
                           live=True)


@bp.get("/api/standings")
def api_standings() -> Any:
    """`{"profiles": {profile: [row, ...]}}`; `?profile=soft` for one."""
    profile = text_arg("profile")
    profiles = [queries.check_profile(profile)] if profile else queries.rated_profiles(
        sessions())
    return jsonify(profiles={p: queries.standings(sessions(), p) for p in profiles})
