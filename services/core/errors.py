"""Errors of the service's plain functions (the gRPC layer maps each to its status code), and
how a client's input is quoted in their messages."""

from __future__ import annotations


class ServiceError(Exception):
    """An error a caller can act on; `code` is the gRPC status code name, `rule` a RULES.md id."""

    code = "INTERNAL"

    def __init__(self, message: str, rule: str | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.details = details


class InvalidArgument(ServiceError):
    code = "INVALID_ARGUMENT"


class FailedPrecondition(ServiceError):
    """The request is well formed but the match's state does not allow it (cites a rule)."""

    code = "FAILED_PRECONDITION"


class NotFound(ServiceError):
    code = "NOT_FOUND"


class AlreadyExists(ServiceError):
    code = "ALREADY_EXISTS"


class Unauthenticated(ServiceError):
    code = "UNAUTHENTICATED"


class PermissionDenied(ServiceError):
    code = "PERMISSION_DENIED"


class Aborted(ServiceError):
    """A stale or concurrent submit: fetch the state again and retry."""

    code = "ABORTED"


class ResourceExhausted(ServiceError):
    """Over a limit of the service (e.g. too many open streams); says which and how many."""

    code = "RESOURCE_EXHAUSTED"


class Unavailable(ServiceError):
    """The service cannot answer now (e.g. its database is down); safe to retry."""

    code = "UNAVAILABLE"


class RefusedRequest:
    """A message of a request stream that failed a check of the request guard
    (services.api.limits): a bidirectional handler that answers each message on its own (the
    Play stream) is handed this in its place, to refuse that message and go on."""

    def __init__(self, request: object, error: InvalidArgument) -> None:
        self.request = request  # the message, as parsed
        self.error = error  # names the field (`error.details["field"]`) and its limit


MAX_QUOTE = 100  # characters of a client's input quoted in a message
MAX_MESSAGE = 500  # characters of any message a client sees (fits the 16 KiB trailers)


def cut(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text`, at most `limit` characters: a longer text is cut and ends with '…'."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(value: object, limit: int = MAX_QUOTE) -> str:
    """A client's input as quoted in a message: its repr, at most `limit` characters ('…' and
    the full length when cut)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    try:
        size = f" ({len(value)} {'characters' if isinstance(value, str) else 'items'})"  # type: ignore[arg-type]
    except TypeError:
        size = ""
    return text[: limit - 1] + "…" + size
