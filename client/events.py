"""The kit's log lines: one per event, as text or as JSON.

Each event is a log record of the "bummerl.client" logger with two extra attributes: `event`
(its name: connected, reconnected, waiting, disconnected, match_started, hand_ended,
match_ended, refused, notice, draining, drain_confirmed, extra_match, drained, abandoned) and
`fields` (a dict of its values; `bot` is the bot that speaks: its registered name once
connected, its class name before). As text it is `TIME LEVEL [bot] message`; with `--log-json`
it is one JSON object per line:

    {"time": "2026-12-01T03:20:00.123Z", "level": "info", "event": "match_ended",
     "message": "match 7 ended: won vs randy, ...", "bot": "mybot", "match_id": 7, ...}

(its JSON Schema: docs/kit-log.schema.json; values are plain: numbers, booleans, lowercase
words such as a notice's kind "hello-refused").
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


def speaker(record: logging.LogRecord) -> str | None:
    """The bot a record of the kit speaks for, if it says."""
    return getattr(record, "bot", None) or (getattr(record, "fields", None) or {}).get("bot")


class TextFormatter(logging.Formatter):
    """`TIME LEVEL [bot] message`: with two bots in one terminal, each line says whose it is."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(message)s", "%H:%M:%S")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802  (logging's name)
        name = speaker(record)
        if name:
            record.message = f"[{name}] {record.message}"
        return super().formatMessage(record)


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
        name = speaker(record)
        if name:
            line["bot"] = name
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
    handler.setFormatter(JsonFormatter() if as_json else TextFormatter())
    kit = logging.getLogger("bummerl.client")
    kit.handlers[:] = [handler]
    kit.setLevel(level)
    kit.propagate = False
    logging.basicConfig(level=logging.WARNING)
