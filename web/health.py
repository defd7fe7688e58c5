"""`/healthz`: the dashboard runs and can read the database."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify

from db.base import ping
from web.db import sessions

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Any:
    problem = ping(sessions().kw["bind"])  # bounded: answers within ~2 s, safe text
    if problem:
        return jsonify(status="error", database=problem), 503
    return jsonify(status="ok", database="ok")
