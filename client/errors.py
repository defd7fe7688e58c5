"""Errors a person can act on: the message says what went wrong and what to do."""

from __future__ import annotations


class KitError(Exception):
    """Printed as one line by the command line (`bummerl ...`, `python -m client`)."""


class TokenRefused(KitError):
    """The service refused the bot's token (UNAUTHENTICATED or PERMISSION_DENIED)."""


class Unsupported(KitError):
    """The service does not support what the kit was asked to do (an older service)."""
