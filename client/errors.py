"""Errors a person can act on: the message says what went wrong and what to do."""

from __future__ import annotations


class KitError(Exception):
    """Printed as one line by the command line (`bummerl ...`, `python -m client`)."""


class TokenRefused(KitError):
    """The service refused the bot's token (UNAUTHENTICATED or PERMISSION_DENIED)."""


class Unsupported(KitError):
    """The service does not support what the kit was asked to do (an older service)."""


CLOSED_PIPE = 141  # 128 + SIGPIPE: the status a shell reports for `cat` cut short by `head`


def closed_pipe() -> int:
    """What a command does when the reader of its stdout went away (`bummerl ... | head`): stop
    quietly, like a Unix tool ended by SIGPIPE, and return the status to exit with.

    Python ignores SIGPIPE and raises BrokenPipeError instead; as its docs advise ("Note on
    SIGPIPE"), stdout is pointed at /dev/null so the flush at exit cannot raise again (restoring
    SIGPIPE's default would also kill the process on a gRPC socket's closed peer)."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no stdout to point anywhere
        pass
    return CLOSED_PIPE
