"""Run a bot: `python -m client MODULE:CLASS --server HOST:PORT --token TOKEN`.

MODULE may also be a path to a .py file; a module is looked up from the current directory
first. The token may come from $BUMMERL_TOKEN (or $BUMMERL_BOT_TOKEN) instead. Ctrl-C once:
finish the running matches, then exit; twice: leave now (the log says which matches will be
forfeited, and when).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import signal
import sys
import threading
import traceback
from pathlib import Path
from types import FrameType

from client import connect, events
from client.argv import join_values
from client.bot import Bot
from client.errors import KitError
from client.runner import Backoff, Runner

log = logging.getLogger("bummerl.client")


def _import(module_name: str):  # type: ignore[no-untyped-def]
    if module_name.endswith(".py") or os.sep in module_name:
        path = Path(module_name)
        if not path.is_file():
            raise KitError(f"no such file: {path} (give FILE.py:Class or module:Class)")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise KitError(f"cannot load {path} as Python code")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:  # the `bummerl` script does not add it
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            raise KitError(
                f"no module named {module_name!r} (from {cwd}): give a file "
                f"(mybot.py:MyBot) or run from the folder that holds the module") from e
        raise


def load_bot(spec: str) -> Bot:
    """The bot of `spec`: "module:Class", "path/file.py:Class", or either without ":Class"
    when the module holds exactly one Bot subclass."""
    module_name, _, class_name = spec.partition(":")
    if not module_name:
        raise KitError(f"bad bot {spec!r}: give FILE.py:Class or module:Class")
    module = _import(module_name)
    if not class_name:
        found = [v for v in vars(module).values()
                 if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
                 and v.__module__ == module.__name__]
        if len(found) != 1:
            raise KitError(f"name the bot class: {module_name}:ClassName "
                           f"({len(found)} Bot classes found in it)")
        return found[0]()
    cls = getattr(module, class_name, None)
    if cls is None:
        classes = sorted(k for k, v in vars(module).items()
                         if isinstance(v, type) and issubclass(v, Bot) and v is not Bot)
        raise KitError(f"{module_name} has no class {class_name!r}"
                       + (f" (its bots: {', '.join(classes)})" if classes else
                          " (and no subclass of client.Bot)"))
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise KitError(f"{module_name}:{class_name} is not a subclass of client.Bot")
    return cls()


def default_token() -> str:
    return os.environ.get("BUMMERL_TOKEN") or os.environ.get("BUMMERL_BOT_TOKEN", "")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot", help="the bot class, as module:Class or file.py:Class")
    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                        help="host:port of the service (default: $BUMMERL_SERVER or "
                             "%(default)s)")
    parser.add_argument("--token", default=default_token(),
                        help="the bot's token (default: $BUMMERL_TOKEN); one starting with "
                             "'-' works too")
    parser.add_argument("--matches", type=int, default=None, metavar="N",
                        help="play N matches, then exit: every match the bot takes counts "
                             "(challenges and ladder, those running when it connects too); "
                             "after the Nth it takes no new ones, finishes every running "
                             "one and exits (default: play until Ctrl-C)")
    parser.add_argument("--challenges-only", action="store_true",
                        help="take challenges only: the ladder (and tournaments) never pair "
                             "the bot while it runs so")
    parser.add_argument("--people", choices=("casual", "rated"), default=None,
                        help="play people too (the site's table in the browser): casual "
                             "games only, or casual and rated (default: no people)")
    parser.add_argument("--version", default=None, metavar="V",
                        help="the version of the bot this run plays (e.g. 1.4.0 or a git "
                             "hash; at most 100 characters): each match records it, the "
                             "dashboard shows each version's record, and a version test "
                             "(bummerl test) plays each seat with the process of its version "
                             "(default: the bot class's `version` attribute, else none)")
    connect.add_arguments(parser)  # --tls, --ca
    parser.add_argument("--parallel", type=int, default=4,
                        help="matches the bot is asked about at once (default: %(default)s; "
                             "calls are serialized unless the class sets thread_safe = True)")
    parser.add_argument("--retry-initial", type=float, default=Backoff.initial_s,
                        metavar="S", help="first wait before reconnecting (default: %(default)s)")
    parser.add_argument("--retry-max", type=float, default=Backoff.max_s, metavar="S",
                        help="longest wait between reconnection attempts (default: "
                             "%(default)s); the kit never gives up")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="log only refusals, lost connections and errors")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log every turn and answer too")
    parser.add_argument("--log-json", action="store_true",
                        help="log one JSON object per line (fields: time, level, event, "
                             "message, and the event's values)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")


class CtrlC:
    """SIGINT: the first drains the runner, the second abandons it."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.count = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count == 1:
            threading.Thread(target=self.runner.drain, daemon=True).start()
        else:
            threading.Thread(target=self.runner.abandon, daemon=True).start()


def play(args: argparse.Namespace) -> int:
    events.configure(verbose=args.verbose, quiet=args.quiet, as_json=args.log_json)
    if not args.token:
        raise KitError("no bot token: pass --token TOKEN or set BUMMERL_TOKEN "
                       "(`bummerl bot register NAME` prints it once)")
    if args.matches is not None and args.matches < 1:
        raise KitError(f"--matches must be at least 1, not {args.matches} (leave it out to "
                       "play until Ctrl-C)")
    bot = load_bot(args.bot)
    runner = Runner(bot, args.server, args.token, max_matches=args.matches,
                    parallel=args.parallel, tls=args.tls or bool(args.ca), ca=args.ca,
                    backoff=Backoff(initial_s=args.retry_initial, max_s=args.retry_max),
                    challenges_only=args.challenges_only, version=args.version,
                    people=args.people)
    result: dict[str, BaseException] = {}

    def target() -> None:
        try:
            runner.run()
        except BaseException as e:  # noqa: BLE001  (re-raised in the main thread)
            result["error"] = e

    thread = threading.Thread(target=target, name="bummerl-play", daemon=True)
    previous = signal.signal(signal.SIGINT, CtrlC(runner))
    try:
        thread.start()
        while thread.is_alive():
            thread.join(0.2)
    finally:
        signal.signal(signal.SIGINT, previous)
    if "error" in result:
        raise result["error"]
    s = runner.stats
    print(f"turns {s.turns}, won {s.matches_won}, lost {s.matches_lost}, refused {s.rejected}",
          flush=True)
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        return play(args)
    except KitError as e:
        if args.debug:
            traceback.print_exc()
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m client", description=__doc__)
    add_arguments(parser)
    sys.exit(main(parser.parse_args(join_values(sys.argv[1:]))))
