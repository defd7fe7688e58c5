"""Run a bot: `python -m client MODULE:CLASS --server HOST:PORT --token TOKEN`.

MODULE may also be a path to a .py file. The token may come from BUMMERL_BOT_TOKEN instead.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path

from client import connect
from client.bot import Bot
from client.runner import run


def load_bot(spec: str) -> Bot:
    module_name, _, class_name = spec.partition(":")
    if module_name.endswith(".py"):
        path = Path(module_name)
        loader = importlib.util.spec_from_file_location(path.stem, path)
        if loader is None or loader.loader is None:
            raise SystemExit(f"cannot load {path}")
        module = importlib.util.module_from_spec(loader)
        sys.modules[path.stem] = module
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    if not class_name:
        found = [v for v in vars(module).values()
                 if isinstance(v, type) and issubclass(v, Bot) and v is not Bot]
        if len(found) != 1:
            raise SystemExit(f"name the bot class: {module_name}:ClassName")
        return found[0]()
    return getattr(module, class_name)()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot", help="the bot class, as module:Class or file.py:Class")
    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("BUMMERL_BOT_TOKEN", ""),
                        help="the bot's token (default: $BUMMERL_BOT_TOKEN)")
    parser.add_argument("--matches", type=int, default=None,
                        help="stop after this many matches ended (default: run until Ctrl-C)")
    connect.add_arguments(parser)  # --tls, --ca


def main(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if not args.token:
        raise SystemExit("no token: pass --token or set BUMMERL_BOT_TOKEN")
    stats = run(load_bot(args.bot), args.server, args.token, max_matches=args.matches,
                tls=args.tls or bool(args.ca), ca=args.ca)
    print(f"turns {stats.turns}, won {stats.matches_won}, lost {stats.matches_lost}, "
          f"refused {stats.rejected}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m client", description=__doc__)
    add_arguments(parser)
    sys.exit(main(parser.parse_args()))
