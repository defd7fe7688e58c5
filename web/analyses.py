"""Analyses on the dashboard (docs/analysis.md): a hand's decisions on its replay page (each
one's loss and the better action, exact and estimated apart), a bot's losses per version on
its page, `/api/matches/<id>/analysis`, and the "analyse" button.

The button writes nothing itself: `POST /matches/<id>/analyse` asks the engine service
(AdminService.AnalyseMatch, with the operator token `BUMMERL_OPERATOR_TOKEN` at
`BUMMERL_SERVICE_ADDRESS`), which adds a request row (`db.analyses`) and, after its commit,
fires the hook on which the workers enqueue `bummerl.analyse`. The dashboard never imports
workers/.
"""

from __future__ import annotations

import json
import os
from typing import Any

from flask import Blueprint, current_app, jsonify, redirect, request, url_for
from sqlalchemy.orm import Session, sessionmaker

from db import analyses
from web.db import sessions
from web.params import whole_number
from web.queries import Conflict, Invalid, Missing
from web.security import local_path

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


def operator_token() -> str | None:
    return (current_app.config.get("OPERATOR_TOKEN")
            or os.environ.get("BUMMERL_OPERATOR_TOKEN") or None)


def ask_service(match_id: int) -> str:
    """AdminService.AnalyseMatch for the match: its analysis's state; Invalid/Missing/Conflict
    from the service's answer, Unreachable when it cannot be asked."""
    import grpc
    from bummerl.v1 import admin_pb2, admin_pb2_grpc

    from web.health import service_address

    token = operator_token()
    if not token:
        raise Conflict("the dashboard has no operator token to ask the service for an "
                       "analysis: set BUMMERL_OPERATOR_TOKEN (or run `bummerl analyse "
                       f"{match_id}`)")
    with grpc.insecure_channel(service_address()) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        try:
            reply = stub.AnalyseMatch(admin_pb2.AnalyseMatchRequest(match_id=match_id),
                                      metadata=(("authorization", f"Bearer {token}"),),
                                      timeout=10)
        except grpc.RpcError as e:
            code, details = e.code(), e.details() or str(e.code())
            if code == grpc.StatusCode.NOT_FOUND:
                raise Missing(details) from None
            if code == grpc.StatusCode.FAILED_PRECONDITION:
                raise Invalid(details) from None
            raise Conflict(f"the engine service at {service_address()} could not take the "
                           f"request ({code.name}: {details})") from None
    return str(reply.state)


@bp.post("/matches/<match_id>/analyse")
def ask(match_id: str) -> Any:
    """Ask for the match's analysis; back to the page it was asked from (`next`: a path)."""
    number = whole_number(match_id, "match id")
    state = ask_service(number)
    back = local_path(request.form.get("next", "")) or url_for("matches.show", match_id=number)
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
