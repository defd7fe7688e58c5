"""Reading the query string and path parts of a request, with clear errors."""

from __future__ import annotations

from flask import request

from web.queries import Invalid


def whole_number(value: str, what: str) -> int:
    """`value` as an int, or Invalid naming `what`."""
    try:
        return int(value)
    except ValueError:
        raise Invalid(f"{what} must be a whole number, not {value!r}") from None


def int_arg(name: str, default: int | None = None, what: str | None = None) -> int | None:
    """The query argument `name` as an int (`default` when absent or empty)."""
    value = request.args.get(name, "").strip()
    return whole_number(value, what or name) if value else default


def page_arg() -> int:
    """The `page` query argument (1 when absent)."""
    value = int_arg("page", 1, what="page number")
    return 1 if value is None else value


def text_arg(name: str) -> str | None:
    """The query argument `name`, or None when absent or empty."""
    return request.args.get(name, "").strip() or None
