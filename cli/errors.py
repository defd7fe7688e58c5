"""One line for each error of a `bummerl` command: what went wrong and what to do.

`report(error, args)` prints it to stderr as `error: ...` and returns the exit status (1); with
`--debug` the traceback comes first. Every command's errors take this one path (none prints
its own); a bad command line alone adds "(see `bummerl ... --help`)" (cli.main.Parser), since
--help answers only that. Refused tokens are answered with the command's flags and
environment variables, never the service's words about gRPC metadata.

`ready_channel(server, wait_s)` opens a channel and waits (bounded, with
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


OPERATOR_FLAGS = "--operator-token or $BUMMERL_OPERATOR_TOKEN"
BOT_FLAGS = "--token or $BUMMERL_TOKEN"


def token_hint(args: argparse.Namespace) -> str:
    """Where this command takes the token the service wants, for a person to act on.

    `token_kind` (a parser default) says which: "operator", "bot", or "either" (a bot's own
    token or the operator's, e.g. `bummerl test`)."""
    kind = getattr(args, "token_kind", "")
    if kind == "operator":
        return f"pass the server's operator token with {OPERATOR_FLAGS}"
    if kind == "either":
        return (f"pass your bot's token with {BOT_FLAGS} (its own), or the operator token "
                f"with {OPERATOR_FLAGS} (any)")
    return f"pass the token `bummerl bot register` printed, with {BOT_FLAGS}"


def given_token(args: argparse.Namespace) -> str:
    kind = getattr(args, "token_kind", "")
    if kind == "operator":
        return str(getattr(args, "operator_token", "") or "")
    if kind == "either":
        return str(getattr(args, "token", "") or getattr(args, "operator_token", "") or "")
    return str(getattr(args, "token", "") or "")


def describe(error: BaseException, args: argparse.Namespace) -> str:
    """The one line for `error` (without the `error: ` prefix)."""
    if isinstance(error, KitError):
        return str(error)
    import grpc

    if isinstance(error, grpc.RpcError) and hasattr(error, "code"):
        code = error.code()
        details = (error.details() or "").strip() if hasattr(error, "details") else ""
        server = getattr(args, "server", "?")
        kind = getattr(args, "token_kind", "") or "bot"
        what = "token" if kind == "either" else f"{kind} token"
        if code == grpc.StatusCode.UNAVAILABLE:
            return f"the bummerl service at {server} is unavailable ({details}): {SERVER_HINT}"
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"the service at {server} did not answer in time: try again later"
        if code == grpc.StatusCode.UNAUTHENTICATED:
            # The service's own words speak of gRPC metadata; a person at a terminal has flags.
            why = "none was given" if not given_token(args) else "it is not one the service knows"
            return f"the service refused the {what} ({why}): {token_hint(args)}"
        if code == grpc.StatusCode.PERMISSION_DENIED:
            return f"the service refused the {what} ({details}): {token_hint(args)}"
        if code == grpc.StatusCode.ALREADY_EXISTS:
            return details or "it exists already"
        if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.RESOURCE_EXHAUSTED):
            return details or f"the service answered {code.name}"
        return f"the service answered {code.name}: {details}"
    return (f"unexpected error: {type(error).__name__}: {error} "
            "(run again with --debug to see where)")


def report(error: BaseException, args: argparse.Namespace) -> int:
    if getattr(args, "debug", False):
        traceback.print_exception(error)
    print(f"error: {describe(error, args)}", file=sys.stderr)
    return 1


def console() -> Any:
    """A Rich console for a command's output whose closed pipe ends the command like any
    other's (cli.main: quietly, status 141); Rich's own answer is SystemExit(1)."""
    from rich.console import Console

    class PipedConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipedConsole()
