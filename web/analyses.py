"""Analyses on the dashboard (docs/analysis.md): a hand's decisions on its replay page (each
one's loss and the better action, exact and estimated apart), a bot's losses per version on
its page, `/api/matches/<id>/analysis`, and the "analyse" button.

The button is the dashboard's one write: `POST /matches/<id>/analyse` adds a request row
(`db.analyses.request`: one per finished match, so it is harmless to press twice) through a
session of its own (the pages' sessions are read-only, `web.db.read_only`); the workers' sweeper
sends it to the `bummerl.analyse` task at its next sweep. The dashboard never imports workers/.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, current_app, jsonify, redirect, request, url_for
from sqlalchemy.orm import Session, sessionmaker

from db import analyses
from web.db import sessions
from web.params import whole_number
from web.queries import Invalid, Missing

bp = Blueprint("analyses", __name__)


def of_match(factory: sessionmaker[Session], match_id: int) -> dict[str, Any] | None:
    """The match's analysis row as `{"state", "error", "document"}`, or None (never asked)."""
    with factory() as s:
        row = analyses.state_of(s, match_id)
        if row is None:
            return None
        return {"state": row.state, "error": row.error,
                "document": json.loads(row.document) if row.document else None}


def of_hand(factory: sessionmaker[Session], match_id: int, number: int,
            names: list[str]) -> dict[str, Any] | None:
    """What the replay page of hand `number` shows: the row's state and the hand's decisions
    (each with `who`, the deciding bot's name)."""
    found = of_match(factory, match_id)
    if found is None or found["document"] is None:
        return found
    doc = found.pop("document")
    found["decisions"] = [{**d, "who": names[d["seat"]]} for d in doc["decisions"]
                          if d["hand"] == number]
    found["budget"] = doc["budget"]
    return found


def losses(factory: sessionmaker[Session], bot_id: int) -> list[dict[str, Any]]:
    with factory() as s:
        return analyses.losses_by_version(s, bot_id)


def _writer() -> sessionmaker[Session]:
    """A writable session factory for analysis requests (made once per app)."""
    factory = current_app.extensions.get("bummerl.analysis_requests")
    if factory is None:
        from db.base import make_session_factory

        factory = make_session_factory(current_app.config["DATABASE_URL"])
        current_app.extensions["bummerl.analysis_requests"] = factory
    return factory  # type: ignore[no-any-return]


@bp.post("/matches/<match_id>/analyse")
def ask(match_id: str) -> Any:
    """Ask for the match's analysis; back to the page it was asked from (`next`: a path)."""
    number = whole_number(match_id, "match id")
    try:
        with _writer().begin() as s:
            state = analyses.request(s, number)
    except ValueError as e:
        raise Invalid(str(e)) from None
    back = request.form.get("next", "")
    if not back.startswith("/") or back.startswith("//"):
        back = url_for("matches.show", match_id=number)
    if request.accept_mimetypes.best == "application/json":
        return jsonify({"match_id": number, "state": state})
    return redirect(back, code=303)


@bp.get("/api/matches/<match_id>/analysis")
def api_show(match_id: str) -> Any:
    number = whole_number(match_id, "match id")
    found = of_match(sessions(), number)
    if found is None:
        raise Missing(f"match {number} has not been analysed: POST /matches/{number}/analyse "
                      "asks for it")
    return jsonify({"match_id": number, **found})
