"""Server-sent event streams of the web's live pages (web/live.py) and tables
(web/tablefeed.py): one subscription queue each, read until its lifetime ends."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, current_app, jsonify


def refused(message: str) -> Any:
    """The 503 answer to a stream past its cap (`message` says what the page does instead)."""
    answer = jsonify(error=message, status=503)
    answer.status_code = 503
    answer.headers["Retry-After"] = "30"
    return answer


def respond(q: queue.Queue[str | None], event: str, unsubscribe: Callable[[], None]) -> Response:
    """The event stream of subscription `q`: each payload as an `event` event, a comment every
    `KEEPALIVE_SECONDS`; it ends after `STREAM_SECONDS` (the browser reconnects), on None, or
    after a payload that says `"final"`. `unsubscribe()` runs when it ends, however it ends."""
    keepalive = float(current_app.config["KEEPALIVE_SECONDS"])
    lifetime = float(current_app.config["STREAM_SECONDS"])

    def events() -> Iterator[str]:
        ends = time.monotonic() + lifetime
        try:
            yield "retry: 1000\n\n"
            while time.monotonic() < ends:
                try:
                    payload = q.get(timeout=keepalive)
                except queue.Empty:
                    yield ": keepalive\n\n"
                    continue
                if payload is None:
                    return
                yield f"event: {event}\ndata: {payload}\n\n"
                if json.loads(payload).get("final"):
                    return
        finally:
            unsubscribe()

    return Response(events(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
