"""The `bummerl` command. Each subcommand is a module of this package with a
`register(subparsers)` function that adds its parser and sets `func` (taking the parsed
arguments, returning the exit status); modules are found by name, so adding one needs no edit
here.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bummerl", description="Schnapsen bot ladders: rules engine, service and tools.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(cli.__path__), key=lambda m: m.name):
        if info.name == "main" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    status = args.func(args)
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
