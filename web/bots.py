"""A bot's page: who it is, its rating in each profile, its matches (and, for its authors
only, its hosted versions: web.hosted)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, render_template

from web import analyses, charts, hosted, people_queries, queries
from web.db import sessions
from web.params import ident, int_arg, page_arg

bp = Blueprint("bots", __name__)


@bp.get("/bots/<bot_id>")
def show(bot_id: str) -> str:
    bot = queries.bot_detail(sessions(), ident(bot_id, "bot id"))
    page = page_arg()
    matches = queries.list_matches(sessions(), queries.MatchFilter(bot_id=bot["id"]), page,
                                   current_app.config["PAGE_SIZE"],
                                   before=int_arg("before", what="match id"))
    sessions_ = sessions()
    history = queries.rating_history(sessions_, bot["id"])
    chart_of = {p: charts.rating_chart(points, f"{bot['name']}: rating in {p} over time")
                for p, points in history.items()}
    return render_template("bot.html", bot=bot, charts=chart_of,
                           people=people_queries.bot_against_people(bot["id"]),
                           opponents=queries.opponents(sessions_, bot["id"]),
                           versions=queries.versions(sessions_, bot["id"]),
                           forfeits=queries.forfeits(sessions_, bot["id"]),
                           speed=queries.move_times(sessions_, bot["id"]),
                           analysis_losses=analyses.losses(sessions_, bot["id"]),
                           hosting=hosted.section(bot), upload_bytes=hosted.ARCHIVE_BYTES,
                           **matches)


@bp.get("/api/bots/<bot_id>")
def api_show(bot_id: str) -> Any:
    bot = queries.bot_detail(sessions(), ident(bot_id, "bot id"))
    bot["rating_history"] = queries.rating_history(sessions(), bot["id"])
    bot["opponents"] = queries.opponents(sessions(), bot["id"])
    bot["versions"] = queries.versions(sessions(), bot["id"])
    bot["forfeits"] = queries.forfeits(sessions(), bot["id"])
    bot["move_times"] = queries.move_times(sessions(), bot["id"])
    bot["analysis_losses"] = analyses.losses(sessions(), bot["id"])
    bot["against_people"] = people_queries.bot_against_people(bot["id"])
    return jsonify(bot)
