"""One line for each error of a `bummerl` command: what went wrong and what to do.

`report(error, args)` prints it to stderr and returns the exit status (1); with `--debug` the
traceback comes first. `ready_channel(server, wait_s)` opens a channel and waits (bounded, with
progress on stderr) until the service answers, or says it cannot reach it.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from typing import Any

from client.errors import KitError

SERVER_HINT = "is it running (`bummerl serve`)? Check --server or $BUMMERL_SERVER"


def ready_channel(server: str, wait_s: float = 30.0, *, tls: bool = False,
                  ca: str | None = None) -> Any:
    """A channel to `server` once it accepts connections (over TLS with `tls`, trusting the PEM
    file `ca` if given); KitError after `wait_s` seconds."""
    import grpc

    from client.connect import channel as open_channel

    channel = open_channel(server, tls=tls, ca=ca)
    ready = grpc.channel_ready_future(channel)
    started = time.monotonic()
    waited = 0
    while True:
        try:
            ready.result(timeout=1.0)
            if waited:
                print(file=sys.stderr)
            return channel
        except grpc.FutureTimeoutError:
            waited = int(time.monotonic() - started)
            if waited >= wait_s:
                if waited:
                    print(file=sys.stderr)
                channel.close()
                raise KitError(f"cannot reach the bummerl service at {server} after "
                               f"{waited} s: {SERVER_HINT}") from None
            print(f"\rwaiting for the service at {server} ... {waited} s", end="",
                  file=sys.stderr, flush=True)


def describe(error: BaseException, args: argparse.Namespace) -> str:
    """The one line for `error`."""
    if isinstance(error, KitError):
        return str(error)
    import grpc

    if isinstance(error, grpc.RpcError) and hasattr(error, "code"):
        code = error.code()
        details = (error.details() or "").strip() if hasattr(error, "details") else ""
        server = getattr(args, "server", "?")
        if code == grpc.StatusCode.UNAVAILABLE:
            return f"the bummerl service at {server} is unavailable ({details}): {SERVER_HINT}"
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"the service at {server} did not answer in time: try again later"
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            if getattr(args, "token_kind", "") == "operator":
                return (f"the service refused the operator token ({details}): pass "
                        "--operator-token or set $BUMMERL_OPERATOR_TOKEN to the server's "
                        "operator token")
            return (f"the service refused the bot token ({details}): pass the token "
                    "`bummerl bot register` printed, with --token or $BUMMERL_TOKEN")
        if code == grpc.StatusCode.ALREADY_EXISTS:
            return details or "it exists already"
        if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.RESOURCE_EXHAUSTED):
            return f"{details} (see --help)"
        return f"the service answered {code.name}: {details}"
    return (f"unexpected error: {type(error).__name__}: {error} "
            "(run again with --debug to see where)")


def report(error: BaseException, args: argparse.Namespace) -> int:
    if getattr(args, "debug", False):
        traceback.print_exception(error)
    print(f"error: {describe(error, args)}", file=sys.stderr)
    return 1
