"""The kit's commands that need no server (docs/kit.md):

    bummerl-kit practice FILE.py:Class --vs LEVEL -n N [--records DIR]
    bummerl-kit replay FILE.jsonl...
    bummerl-kit analyse FILE.jsonl... [--samples N] [-o FILE]

`practice` plays the bot against a house bot in-process on duplicate deals (`bots.practice`, as
the server's `bummerl bot test`; from Python: `practise`); with `--records DIR` it plays
duplicate matches instead and writes them as match records (docs/match-record.md). `replay`
checks records (and conformance cases) against the engine (`client.replay`, as `bummerl
replay`); `analyse` values every decision of the records from the deciding seat's observation
(`analysis`, as `bummerl analyse FILE`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from client.errors import KitError, closed_pipe

COMMANDS = ("practice", "replay", "analyse")


def _parser(command: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=f"bummerl-kit {command}", description=description)


def _number(value: float | None, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def _interval(pair: list[float | None], spec: str = ".2f") -> str:
    return f"[{_number(pair[0], spec)}, {_number(pair[1], spec)}]"


def table(result: dict[str, Any], a: str, b: str, unit: str) -> list[str]:
    """The result of `bots.stats.summary` as plain lines (`unit`: "deal" or "match")."""
    played, one = ("hands", "hand") if unit == "deal" else ("matches", "match")
    pairs = "deals" if unit == "deal" else "duplicate matches"
    rows = [
        (f"{pairs} played (× 2 seatings)", f"{result['pairs']} ({result['hands']} {played})",
         ""),
        (f"game points per {one}, {a}", _number(result["points_per_deal_a"], ".3f"), ""),
        (f"game points per {one}, {b}", _number(result["points_per_deal_b"], ".3f"), ""),
        (f"net game points per {unit}, A − B", _number(result["net_per_deal"]),
         _interval(result["net_per_deal_ci"])),
        (f"win rate ({played}), {a}", _number(result["win_rate_a"], ".1%"), ""),
        (f"win rate ({played}), {b}", _number(result["win_rate_b"], ".1%"), ""),
        ("Elo difference, A − B", _number(result["elo"], "+.0f"),
         _interval(result["elo_ci"], "+.0f")),
    ]
    width = max(len(r[0]) for r in rows)
    return [f"{label:<{width}}  {value:>14}  {ci}".rstrip() for label, value, ci in rows]


def house_strategy(vs: str) -> str:
    """The house strategy of `vs` (`level-3`, `house-level-3`, `rdeep`, ...); KitError if there
    is none."""
    from bots import STRATEGIES

    strategy = vs.removeprefix("house-")
    if strategy not in STRATEGIES:
        raise KitError(f"unknown house bot {vs!r}: choose one of "
                       f"{', '.join(sorted(STRATEGIES))}")
    return strategy


def practise(bot: Any, name: str, vs: str = "level-3", deals: int = 50, seed: int = 0,
             profile: str = "soft") -> tuple[list[str], int]:
    """`bummerl-kit practice` from Python: `bot` (anything with `act`, called `name`) against
    the house bot `vs` on `deals` duplicate deals, in-process; the lines the command prints
    after its first (the result table with its 95 % intervals, then what the bot did wrong)
    and how many exceptions and illegal answers the bot gave."""
    from bots.practice import practise as play
    from bots.practice import report

    strategy = house_strategy(vs)
    result, adapter = play(bot, strategy, deals, seed, profile)
    lines = table(result, name, f"house-{strategy}", "deal")
    return lines + report(adapter, 2 * deals), sum(adapter.count.values())


def practice(argv: list[str]) -> int:
    from bots import STRATEGIES
    from bots.practice import practise_matches, report
    from client.__main__ import load_bot
    from events.levels import LEVELS

    levels = ", ".join(f"{lv.strategy} ({lv.name})" for lv in LEVELS)
    others = ", ".join(sorted(set(STRATEGIES) - {lv.strategy for lv in LEVELS}))
    parser = _parser("practice", "Play a bot against a house bot in-process, on duplicate "
                                 "deals (each deal twice, seats swapped), and print the result "
                                 "and whatever the bot did wrong. No server.")
    parser.add_argument("bot", metavar="FILE.py:Class", help="the bot (or module:Class)")
    parser.add_argument("--vs", default="level-3", metavar="LEVEL",
                        help=f"the house bot: a level ({levels}) or a strategy ({others}); "
                             "default %(default)s")
    parser.add_argument("-n", "--deals", type=int, default=50, metavar="N",
                        help="duplicate deals (with --records: duplicate matches) to play "
                             "(default %(default)s)")
    parser.add_argument("--records", metavar="DIR", type=Path,
                        help="play duplicate matches and write them as match records to "
                             "DIR/practice-VS-SEED.jsonl")
    parser.add_argument("--seed", type=int, default=None,
                        help="the deals' seed (default: a random one, printed)")
    parser.add_argument("--profile", choices=["soft", "sharp"], default="soft")
    args = parser.parse_args(argv)
    strategy = house_strategy(args.vs)
    if args.deals < 1:
        raise KitError("-n must be at least 1")
    if args.seed is not None and args.seed < 0:
        raise KitError("--seed must be 0 or more")
    bot = load_bot(args.bot)
    name = args.bot.rsplit(":", 1)[-1] or args.bot
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    house = f"house-{strategy}"
    print(f"practice: {name} (A) vs {house} (B), profile {args.profile}, seed {seed}")
    if args.records is None:
        lines, problems = practise(bot, name, strategy, args.deals, seed, args.profile)
        print("\n".join(lines))
        return 0 if not problems else 1
    try:
        args.records.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise KitError(f"cannot make {args.records}: {e.strerror}") from None
    result, adapter, records = practise_matches(bot, name, strategy, args.deals, seed,
                                                args.profile)
    path = args.records / f"practice-{strategy}-{seed}.jsonl"
    try:
        with open(path, "w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")
    except OSError as e:
        raise KitError(f"cannot write {path}: {e.strerror}") from None
    for line in table(result, name, house, "match"):
        print(line)
    print(f"{len(records)} match records: {path}")
    for line in report(adapter, sum(len(r["hands"]) for r in records)):
        print(line)
    return 0 if not adapter.problems else 1


def replay(argv: list[str]) -> int:
    from client.replay import replay_files

    parser = _parser("replay", "Replay match records (as `bummerl-kit practice --records` and "
                               "`bummerl games export` write them) and conformance cases with "
                               "the engine: one JSON line each, {\"match_id\", \"verified\", "
                               "\"problems\", \"match\"} for a record. Exit status 0 when every "
                               "record verified, 1 when one did not, 2 when a file or document "
                               "was invalid.")
    parser.add_argument("files", nargs="+", metavar="FILE")
    return replay_files(parser.parse_args(argv).files)


def analyse(argv: list[str]) -> int:
    from analysis import SAMPLES, analyse_record
    from client.recordfiles import records_of, write_analysed

    parser = _parser("analyse", "Value every decision of the match records in FILE (JSON "
                                "lines): each legal action's value for the deciding seat from "
                                "what it knew, the best one and the loss. Writes each record "
                                "with its `analysis` as one JSON line; a line per match on "
                                "stderr says what each seat lost.")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--samples", type=int, default=SAMPLES,
                        help="deals sampled per estimated decision (default %(default)s)")
    parser.add_argument("-o", "--output", metavar="FILE", default="-",
                        help="write to FILE instead of stdout")
    args = parser.parse_args(argv)
    if args.samples < 1:
        raise KitError(f"--samples must be 1 or more, not {args.samples}")
    records = [record for path in args.files for record in records_of(path)]
    write_analysed(records, args.output,
                   lambda record: analyse_record(record, samples=args.samples))
    return 0


def main(command: str, argv: list[str]) -> int:
    """Run the kit's `command` (one of COMMANDS) with `argv`; its exit status."""
    run = {"practice": practice, "replay": replay, "analyse": analyse}[command]
    try:
        return run(argv)
    except BrokenPipeError:
        return closed_pipe()
    except KitError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
