"""Matches: the list (running first, filtered, paginated), one match with its hands and its
action log as a transcript; JSON twins under /api/."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, render_template, request

from web import queries
from web.db import sessions
from web.params import int_arg, page_arg, text_arg, whole_number

bp = Blueprint("matches", __name__)


def _page() -> dict[str, Any]:
    where = queries.MatchFilter(state=text_arg("state"), bot_id=int_arg("bot", what="bot id"),
                                profile=text_arg("profile"))
    page = page_arg()
    per_page = current_app.config["PAGE_SIZE"]
    result = queries.list_matches(sessions(), where, page, per_page)
    result["filter"] = {"state": where.state, "bot": where.bot_id, "profile": where.profile}
    return result


@bp.get("/matches")
def index() -> str:
    result = _page()
    bot = queries.bot_exists(sessions(), result["filter"]["bot"]).name \
        if result["filter"]["bot"] is not None else None
    args = {k: v for k, v in request.args.items() if k != "page" and v}
    live = result["filter"]["state"] != "finished"
    return render_template("matches.html", live=live, bot_name=bot, args=args,
                           states=queries.STATES, profiles=queries.PROFILES, **result)


@bp.get("/matches/<match_id>")
def show(match_id: str) -> str:
    match = queries.match_detail(sessions(), whole_number(match_id, "match id"))
    return render_template("match.html", match=match, live=match["state"] == "running")


@bp.get("/api/matches")
def api_index() -> Any:
    """`?state=running|finished&bot=ID&profile=soft&page=N`: one page, running first."""
    return jsonify(_page())


@bp.get("/api/matches/<match_id>")
def api_show(match_id: str) -> Any:
    return jsonify(queries.match_detail(sessions(), whole_number(match_id, "match id")))
