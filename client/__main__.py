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
from client.errors import KitError, closed_pipe
from client.runner import Backoff, Runner, Stats

log = logging.getLogger("bummerl.client")


def _shown(filename: str) -> str:
    """`filename` as a person gave it: relative to the current folder when inside it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # (another drive)
        return filename
    return filename if relative.startswith("..") else relative


def _where(module_name: str, e: BaseException) -> str:
    """`file.py line N` of an error raised while the bot's module was loaded (the deepest
    frame outside the import machinery), or `module_name`."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"{_shown(e.filename)} line {e.lineno}" if e.lineno else _shown(e.filename)
    frames = traceback.extract_tb(e.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename and f.filename != __file__]
    if own:
        return f"{_shown(own[-1].filename)} line {own[-1].lineno}"
    return module_name


def _exec(module_name: str, load):  # type: ignore[no-untyped-def]
    """`load()`, with what fails while the bot's module runs said in one line (KitError)."""
    try:
        return load()
    except KitError:
        raise
    except SyntaxError as e:  # (IndentationError and TabError are SyntaxErrors)
        raise KitError(f"cannot load the bot: {_where(module_name, e)}: "
                       f"{type(e).__name__}: {e.msg}") from e
    except ModuleNotFoundError as e:
        raise KitError(f"cannot load the bot: {_where(module_name, e)} imports {e.name!r}, "
                       "which is not installed (or not on the path): install it, or run from "
                       "the folder that holds it") from e
    except Exception as e:  # noqa: BLE001  (any error of the bot's module: one line)
        raise KitError(f"cannot load the bot: {_where(module_name, e)}: "
                       f"{type(e).__name__}: {e} (--debug shows the traceback)") from e


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
        loader = spec.loader
        _exec(module_name, lambda: loader.exec_module(module))
        return module
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:  # the `bummerl` script does not add it
        sys.path.insert(0, cwd)
    try:
        return _exec(module_name, lambda: importlib.import_module(module_name))
    except KitError as k:
        e = k.__cause__
        if (isinstance(e, ModuleNotFoundError) and e.name
                and module_name.startswith(e.name)):
            raise KitError(
                f"no module named {module_name!r} (from {cwd}): give a file "
                f"(mybot.py:MyBot) or run from the folder that holds the module") from e
        raise


def implements(cls: object) -> bool:
    """Whether `cls` is a bot class that implements what a bot must: `act` (its own, not
    client.Bot's)."""
    return isinstance(cls, type) and issubclass(cls, Bot) and cls.act is not Bot.act


def _bots_in(module) -> list[str]:  # type: ignore[no-untyped-def]
    """The names of the classes of `module` that would do as its bot: subclasses of
    client.Bot that implement `act` (those it defines, else those it imports)."""
    found = [(k, v) for k, v in vars(module).items() if implements(v)]
    own = [k for k, v in found if v.__module__ == module.__name__]
    return sorted(own or [k for k, _ in found])


def _did_you_mean(module_name: str, names: list[str]) -> str:
    if not names:
        return (f"; {module_name} holds no class that does (subclass client.Bot and define "
                "act(self, observation))")
    return "; did you mean " + " or ".join(f"{module_name}:{n}" for n in names) + "?"


def load_bot(spec: str) -> Bot:
    """The bot of `spec`: "module:Class", "path/file.py:Class", or either without ":Class"
    when the module holds exactly one Bot subclass."""
    module_name, _, class_name = spec.partition(":")
    if not module_name:
        raise KitError(f"bad bot {spec!r}: give FILE.py:Class or module:Class")
    module = _import(module_name)
    if not class_name:
        found = _bots_in(module)
        if len(found) != 1:
            raise KitError(f"name the bot class: {module_name}:ClassName "
                           f"({len(found)} Bot classes found in it"
                           + (f": {', '.join(found)})" if found else ")"))
        return _exec(module_name, getattr(module, found[0]))
    cls = getattr(module, class_name, None)
    if cls is None:
        classes = _bots_in(module)
        raise KitError(f"{module_name} has no class {class_name!r}"
                       + (f" (its bots: {', '.join(classes)})" if classes else
                          " (and no subclass of client.Bot)"))
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise KitError(f"{module_name}:{class_name} is not a subclass of client.Bot"
                       + _did_you_mean(module_name, _bots_in(module)))
    if cls is Bot:
        raise KitError(f"{module_name}:{class_name} is the kit's abstract base class"
                       + _did_you_mean(module_name, _bots_in(module)))
    if not implements(cls):
        raise KitError(f"{module_name}:{class_name} does not implement act(self, observation),"
                       " which a bot must" + _did_you_mean(module_name, _bots_in(module)))
    return _exec(module_name, cls)


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
    print(f"[{runner.speaker}] {summary(runner.stats)}", flush=True)
    return 0


def summary(s: Stats) -> str:
    """The run's last line: turns, matches won and lost, answers refused, and the turns on
    which the bot raised (the kit answered them with the first legal action)."""
    line = (f"turns {s.turns}, won {s.matches_won}, lost {s.matches_lost}, "
            f"refused {s.rejected}")
    if s.exceptions:
        line += (f", exceptions {s.exceptions} (the bot's act raised on {s.exceptions} "
                 f"turn(s): the kit played the first legal action instead)")
    return line


def main(args: argparse.Namespace) -> int:
    try:
        return play(args)
    except BrokenPipeError:
        return closed_pipe()
    except KitError as e:
        if args.debug:
            traceback.print_exc()
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m client", description=__doc__)
    add_arguments(parser)
    sys.exit(main(parser.parse_args(join_values(sys.argv[1:]))))
