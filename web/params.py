"""Reading the query string, path parts and JSON bodies of a request, with clear errors.

Every integer a request carries goes through here and is checked to its range: a bad one is a
400 naming its field, an id that cannot exist (0, negative, past int64) a 404, never a 500 from
the database or a protobuf field. Only ASCII digits count: `int()` and `str.isdigit` also take
other scripts' digits (`１２`), which no id is written in.
"""

from __future__ import annotations

import json
from typing import Any

from flask import request

from web.queries import Invalid, Missing

INT64 = (-(2**63), 2**63 - 1)  # what a database column and a protobuf int64 hold
MAX_ID = INT64[1]  # ids run from 1 to this
MAX_JSON_DEPTH = 32  # arrays and objects nested in a JSON body, at most
ASCII_DIGITS = frozenset("0123456789")


def _shown(value: str) -> str:
    return repr(value if len(value) <= 24 else value[:24] + "…")


def whole_number(value: str, what: str, low: int = INT64[0], high: int = INT64[1]) -> int:
    """`value` (ASCII digits, an optional leading '-') as an int from `low` to `high`, or
    Invalid naming `what`."""
    digits = value[1:] if value.startswith("-") else value
    if not digits or not set(digits) <= ASCII_DIGITS:
        raise Invalid(f"{what} must be a whole number, not {_shown(value)}")
    if len(digits) > 20 or not low <= int(value) <= high:
        raise Invalid(f"{what} must be from {low} to {high}, not {_shown(value)}")
    return int(value)


def ident(value: str, what: str, low: int = 1) -> int:
    """A path part naming a row (`what`: "match id", "hand number", ...): Invalid unless ASCII
    digits, Missing for a number no row can have (below `low`, past int64)."""
    digits = value[1:] if value.startswith("-") else value
    if not digits or not set(digits) <= ASCII_DIGITS:
        raise Invalid(f"{what} must be a whole number, not {_shown(value)}")
    if len(digits) > 20 or not low <= int(value) <= MAX_ID:
        raise Missing(f"{what} {_shown(value)} names nothing here: {what}s run from {low} "
                      f"to {MAX_ID}")
    return int(value)


def int_arg(name: str, default: int | None = None, what: str | None = None,
            low: int = INT64[0], high: int = INT64[1]) -> int | None:
    """The query argument `name` as an int (`default` when absent or empty)."""
    value = request.args.get(name, "").strip()
    return whole_number(value, what or name, low, high) if value else default


def page_arg() -> int:
    """The `page` query argument (1 when absent)."""
    value = int_arg("page", 1, what="page number")
    return 1 if value is None else value


def text_arg(name: str) -> str | None:
    """The query argument `name`, or None when absent or empty."""
    return request.args.get(name, "").strip() or None


def json_depth(text: str) -> int:
    """How deep `text`'s arrays and objects nest (brackets inside strings not counted), read
    without recursion; it stops counting one past MAX_JSON_DEPTH."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def json_body() -> dict[str, Any]:
    """The request's JSON object ({} for an empty body); Invalid for anything else: not JSON,
    not an object, nested deeper than MAX_JSON_DEPTH. The body's size is capped before it is
    read (MAX_CONTENT_LENGTH: a 413)."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("the body must be JSON in UTF-8") from None
    if json_depth(text) > MAX_JSON_DEPTH:
        raise Invalid(f"the JSON body nests arrays and objects deeper than {MAX_JSON_DEPTH} "
                      "levels")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        raise Invalid("the body must be a JSON object, e.g. {\"action\": \"play TH\"}") from None
    if not isinstance(body, dict):
        raise Invalid(f"the body must be a JSON object, not a JSON {type(body).__name__}")
    return body


def json_int(body: dict[str, Any], name: str, low: int = INT64[0],
             high: int = INT64[1]) -> int | None:
    """The integer field `name` of a JSON body (None when absent), checked to its range."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise Invalid(f'"{name}" must be a whole number, not {_shown(json.dumps(value))}')
    if not low <= value <= high:
        raise Invalid(f'"{name}" must be from {low} to {high}, not {value}')
    return value
