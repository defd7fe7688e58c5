"""The kit's log lines: one per event, as text or as JSON.

Each event is a log record of the "bummerl.client" logger with two extra attributes: `event`
(its name: connected, reconnected, disconnected, match_started, hand_ended, match_ended,
refused, notice, draining, drained, abandoned) and `fields` (a dict of its values). As text it is
`TIME LEVEL message`; with `--log-json` it is one JSON object per line:

    {"time": "2026-12-01T03:20:00.123Z", "level": "info", "event": "match_ended",
     "message": "match 7 ended: won vs randy, ...", "match_id": 7, "won": true, ...}
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any


def event(logger: logging.Logger, level: int, name: str, message: str, *args: Any,
          **fields: Any) -> None:
    """Log one event line: `message % args`, with `name` and `fields` for JSON output."""
    logger.log(level, message, *args, extra={"event": name, "fields": fields})


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see the module doc)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "event": getattr(record, "event", "log"),
            "message": record.getMessage(),
        }
        for key, value in (getattr(record, "fields", None) or {}).items():
            line.setdefault(key, value)
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure(*, verbose: bool = False, quiet: bool = False, as_json: bool = False) -> None:
    """Send the kit's log lines to stderr: INFO by default (every event), DEBUG with `verbose`
    (each turn and answer too), WARNING with `quiet` (refusals, lost connections, errors)."""
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if as_json else logging.Formatter(
        "%(asctime)s %(levelname)-7s %(message)s", "%H:%M:%S"))
    kit = logging.getLogger("bummerl.client")
    kit.handlers[:] = [handler]
    kit.setLevel(level)
    kit.propagate = False
    logging.basicConfig(level=logging.WARNING)
