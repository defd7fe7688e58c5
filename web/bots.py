"""A bot's page: who it is, its rating in each profile, its matches."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, render_template

from web import queries
from web.db import sessions
from web.params import page_arg, whole_number

bp = Blueprint("bots", __name__)


@bp.get("/bots/<bot_id>")
def show(bot_id: str) -> str:
    bot = queries.bot_detail(sessions(), whole_number(bot_id, "bot id"))
    page = page_arg()
    matches = queries.list_matches(sessions(), queries.MatchFilter(bot_id=bot["id"]), page,
                                   current_app.config["PAGE_SIZE"])
    return render_template("bot.html", bot=bot, live=matches["running"] > 0, **matches)


@bp.get("/api/bots/<bot_id>")
def api_show(bot_id: str) -> Any:
    return jsonify(queries.bot_detail(sessions(), whole_number(bot_id, "bot id")))
