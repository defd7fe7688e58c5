"""Command-line values that start with '-': a bot token may (secrets.token_urlsafe can make
one), and argparse would take `--token -abc` for a missing value followed by an option."""

from __future__ import annotations

VALUE_OPTIONS = ("--token", "--operator-token")


def join_values(argv: list[str], options: tuple[str, ...] = VALUE_OPTIONS) -> list[str]:
    """`--token -abc` -> `--token=-abc` for each option in `options` (any other form is kept)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out.extend(argv[i:])
            break
        if arg in options and i + 1 < len(argv):
            out.append(f"{arg}={argv[i + 1]}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out
