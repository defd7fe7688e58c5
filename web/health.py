"""`/healthz`: the dashboard runs and can read the database."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from sqlalchemy import text

from web.db import sessions

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Any:
    try:
        with sessions()() as s:
            s.execute(text("SELECT 1"))
    except Exception as e:  # noqa: BLE001  (reported, not raised: this is the health check)
        return jsonify(status="error", database=str(e).splitlines()[0]), 503
    return jsonify(status="ok", database="ok")
