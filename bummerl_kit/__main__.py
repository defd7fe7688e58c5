"""Run a bot: `bummerl-kit FILE.py:Class --server HOST:PORT --token TOKEN` (or `python -m
bummerl_kit ...`), with the flags of `python -m client` (client/__main__.py), which it runs.
Without a server: `bummerl-kit practice FILE.py:Class` (against the house levels),
`bummerl-kit replay FILE.jsonl`, `bummerl-kit analyse FILE.jsonl` (bummerl_kit/offline.py;
`bummerl-kit COMMAND --help` gives each one's options).

The bot may be given as a file (mybot.py:MyBot) or a module (looked up from the current folder);
the token may come from $BUMMERL_TOKEN instead. Ctrl-C once: finish the running matches, then
exit; twice: leave now.
"""

from __future__ import annotations

import argparse
import sys

from bummerl_kit.offline import COMMANDS
from bummerl_kit.offline import main as offline
from client.__main__ import add_arguments
from client.__main__ import main as play
from client.argv import join_values


def main(argv: list[str] | None = None) -> int:
    """The `bummerl-kit` command; returns its exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        return offline(argv[0], argv[1:])
    parser = argparse.ArgumentParser(prog="bummerl-kit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return play(parser.parse_args(join_values(argv)))


if __name__ == "__main__":
    sys.exit(main())
