"""People's pages: the leaderboard of people, a person's page (rating, record, history) and the
download of their games as match records (as `/api/export` gives a bot's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template
from sqlalchemy import Engine

from db import records
from web import people_queries, queries
from web.db import sessions
from web.params import ident, int_arg, page_arg

bp = Blueprint("people", __name__)


@bp.get("/people")
def leaderboard() -> str:
    return render_template("people.html", board=people_queries.leaderboard())


@bp.get("/api/people")
def api_leaderboard() -> Any:
    return jsonify(people_queries.leaderboard())


@bp.get("/people/<person_id>")
def show(person_id: str) -> str:
    person = people_queries.person(ident(person_id, "person id"))
    matches = queries.list_matches(sessions(), queries.MatchFilter(bot_id=person["bot_id"]),
                                   page_arg(), current_app.config["PAGE_SIZE"],
                                   before=int_arg("before", what="match id"))
    return render_template("person.html", person=person, **matches)


@bp.get("/api/people/<person_id>")
def api_show(person_id: str) -> Any:
    return jsonify(people_queries.person(ident(person_id, "person id")))


@bp.get("/people/<person_id>/games")
def games(person_id: str) -> Response:
    """The person's finished games as match records, one JSON line each (a download)."""
    person = people_queries.person(ident(person_id, "person id"))
    bind = sessions().kw["bind"]
    assert isinstance(bind, Engine)
    where = records.ExportFilter(bot_id=person["bot_id"]).check()
    held = records.tally(bind, where, None)

    def lines() -> Iterator[str]:
        for page in records.pages(bind, where, None, None):
            for record, _ in page:
                yield json.dumps(record, separators=(",", ":")) + "\n"

    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in person["name"])
    return Response(lines(), mimetype="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="bummerl-games-{safe}.jsonl"',
        "X-Bummerl-Total": str(held.total)})
