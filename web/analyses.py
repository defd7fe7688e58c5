"""Analyses on the dashboard (docs/analysis.md): a hand's decisions on its replay page (each
one's loss and the better action, exact and estimated apart), a bot's losses per version on
its page, `/api/matches/<id>/analysis`, and the "analyse" button.

The button writes nothing itself: `POST /matches/<id>/analyse` asks the engine service
(PeopleService.RequestReview, for the signed-in person, who must have played in the match:
anonymous visitors are a 401, others a 403; at most `ANALYSE_LIMIT` asks per person, then a 429
with Retry-After), which adds a request row (`db.analyses`) and, after its commit, fires the
hook on which the workers enqueue `bummerl.analyse`. Operators ask with `bummerl analyse N`.
The dashboard never imports workers/.
"""

from __future__ import annotations

import json
import time
from typing import Any

from flask import Blueprint, current_app, jsonify, make_response, redirect, request, url_for
from limits import RateLimitItem, parse_many, storage, strategies
from sqlalchemy.orm import Session, sessionmaker

from db import analyses
from web.accounts import current, person_id
from web.db import sessions
from web.errors import error_response
from web.params import ident
from web.queries import Missing
from web.security import local_path
from web.service_client import Refused, client

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


def _limiter() -> tuple[list[RateLimitItem], strategies.MovingWindowRateLimiter]:
    """The app's limit of analyses asked per person (`ANALYSE_LIMIT`, counted where the log-in
    attempts are: `RATELIMIT_STORAGE_URI`)."""
    app = current_app
    found = app.extensions.get("bummerl.analyse_limit")
    if found is None:
        found = app.extensions["bummerl.analyse_limit"] = (
            parse_many(app.config["ANALYSE_LIMIT"]),
            strategies.MovingWindowRateLimiter(storage.storage_from_string(
                app.config.get("RATELIMIT_STORAGE_URI", "memory://"))))
    return found  # type: ignore[no-any-return]


def too_many(person: int) -> Any | None:
    """Count an analysis asked by `person`: None while within `ANALYSE_LIMIT`, else the 429
    (with Retry-After) to answer."""
    items, window = _limiter()
    for item in items:
        if not window.hit(item, "analyse", str(person)):
            reset = window.get_window_stats(item, "analyse", str(person)).reset_time
            wait = max(1, int(reset - time.time()) + 1)
            answer = error_response(429, "Too many analyses asked",
                                    f"you asked for too many analyses (at most {item}): try "
                                    f"again in {wait} s")
            body, status = answer
            response = make_response(body, status)
            response.headers["Retry-After"] = str(wait)
            return response
    return None


def ask_service(match_id: int, person: int) -> str:
    """PeopleService.RequestReview for `person`'s finished match: its analysis's state (the
    service refuses a person who held no seat of it, 403, and a match not over, 409)."""
    from bummerl.v1 import people_pb2

    answer = client().call("RequestReview", people_pb2.RequestReviewRequest(
        person_id=person, match_id=match_id))
    return str(answer.state)


@bp.post("/matches/<match_id>/analyse")
def ask(match_id: str) -> Any:
    """Ask for the match's analysis; back to the page it was asked from (`next`: a path).
    Only a signed-in person who played in the match may (the web has no operators' sign-in:
    operators run `bummerl analyse N`), at most `ANALYSE_LIMIT` times."""
    number = ident(match_id, "match id")
    if current() is None:
        raise Refused(401, "UNAUTHENTICATED", "only a person who played in this match may ask "
                      "for its analysis here: log in first (operators: `bummerl analyse "
                      f"{number}`)")
    person = person_id()
    refused = too_many(person)
    if refused is not None:
        return refused
    state = ask_service(number, person)
    back = local_path(request.form.get("next", "")) or url_for("matches.show", match_id=number)
    if request.accept_mimetypes.best == "application/json":
        return jsonify({"match_id": number, "state": state})
    return redirect(back, code=303)


@bp.get("/api/matches/<match_id>/analysis")
def api_show(match_id: str) -> Any:
    number = ident(match_id, "match id")
    found = of_match(sessions(), number)
    if found is None:
        raise Missing(f"match {number} has not been analysed: POST /matches/{number}/analyse "
                      "asks for it")
    return jsonify({"match_id": number, **found})
