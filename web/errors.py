"""Error pages: 404, 400, 409 and 413 name what is wrong; under /api/ and /healthz they are JSON."""

from __future__ import annotations

from typing import Any

from flask import Flask, current_app, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from web.queries import Conflict, Invalid, Missing


def wants_json() -> bool:
    return request.path.startswith("/api/") or request.path == "/healthz"


def error_response(status: int, title: str, message: str) -> Any:
    if wants_json():
        return jsonify(error=message, status=status), status
    return render_template("error.html", status=status, title=title, message=message), status


def install(app: Flask) -> None:
    @app.errorhandler(Missing)
    def missing(e: Missing) -> Any:
        return error_response(404, "Not found", str(e))

    @app.errorhandler(Invalid)
    def invalid(e: Invalid) -> Any:
        return error_response(400, "Bad request", str(e))

    @app.errorhandler(Conflict)
    def conflict(e: Conflict) -> Any:
        return error_response(409, "Not yet", str(e))

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(e: RequestEntityTooLarge) -> Any:
        cap = current_app.config.get("MAX_CONTENT_LENGTH")
        return error_response(413, "Request too large", g.get("too_large") or (
            f"the request's body is larger than this site takes (at most {cap} bytes); "
            "nothing was done"))

    @app.errorhandler(HTTPException)
    def http(e: HTTPException) -> Any:
        status = e.code or 500
        message = e.description or ""
        if status == 404:
            message = f"there is no page at {request.path}"
        return error_response(status, e.name, message)
