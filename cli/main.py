"""The `bummerl` command. Each subcommand is a module of this package with a
`register(subparsers)` function that adds its parser and sets `func` (taking the parsed
arguments, returning the exit status); modules are found by name, so adding one needs no edit
here.

Errors are answered with one line, `error: ...`, saying what went wrong and what to do, and
exit status 1; `--debug` (anywhere on the line) shows the traceback too (see `cli.errors`). A
bad command line also points at `--help`. When the reader of the output goes away (`bummerl
tournament list | head -2`) the command stops quietly with status 141, as a Unix tool ended by
SIGPIPE does (`client.errors.closed_pipe`).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import NoReturn

import cli
from client.argv import join_values


class Parser(argparse.ArgumentParser):
    """argparse, answering a bad command line like any other error: one line saying what is
    wrong and where to look, exit status 1 (not argparse's usage text and status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="bummerl", description="Schnapsen bot ladders: rules engine, service and tools.")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (may also follow the command)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(cli.__path__), key=lambda m: m.name):
        if info.name == "main" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def innermost(parser: argparse.ArgumentParser,
              args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command `args` were parsed for: `bummerl tournament list`'s."""
    for action in parser._actions:  # argparse keeps its subcommands only there
        if isinstance(action, argparse._SubParsersAction) and action.dest:
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return innermost(chosen, args)
    return parser


def main(argv: list[str] | None = None) -> int:
    from client.errors import closed_pipe

    try:
        try:
            status = run(argv)
        except SystemExit:  # argparse's --help and usage errors
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # a closed pipe is found here, not in the flush at exit
    except BrokenPipeError:
        return closed_pipe()
    return status


def run(argv: list[str] | None) -> int:
    from cli.errors import report

    argv = join_values(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # said by the subcommand's parser, so the hint names its --help
        innermost(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    args.debug = debug
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        status = args.func(args)
    except BrokenPipeError:
        raise
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001  (one line for a person; --debug shows the rest)
        return report(e, args)
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
