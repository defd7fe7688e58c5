"""`bummerl simulate`: a batch simulation of two house strategies, with a progress bar and the
result table.

By default the chunks go to the `batch` queue and whatever Celery workers are running play them
(start some with `bummerl worker`, or let this command start local ones with `--spawn N`);
`--inline` plays them in this process instead. Progress and results live in the database.
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate", help="play two house bots against each other over many duplicate deals",
        description="Bot A against bot B over N deals, each played twice with the seats swapped "
                    "(duplicate pairs), split into chunks for the Celery workers. Shows a "
                    "progress bar, then game points per deal with 95%% intervals, win rates, "
                    "the Elo difference and (with --sprt) the sequential test.")
    parser.add_argument("bot_a", nargs="?",
                        help="strategy of bot A (random, bully, rdeep, champion)")
    parser.add_argument("bot_b", nargs="?", help="strategy of bot B")
    parser.add_argument("-n", "--deals", type=int, default=1000,
                        help="distinct deals (each played twice); default 1000")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deals (random)")
    parser.add_argument("--profile", default="soft", choices=["soft", "sharp"])
    parser.add_argument("--chunk", type=int, default=None,
                        help="deals per chunk (default: 2 with champion, 20 with rdeep, else 500)")
    parser.add_argument("--sprt", action="store_true",
                        help="stop early once the SPRT (H0: elo0, H1: elo1) decides")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=20.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--inline", action="store_true",
                      help="play the chunks in this process (no workers needed)")
    mode.add_argument("--spawn", type=int, default=0, metavar="N",
                      help="start N local Celery worker processes for this run")
    mode.add_argument("--no-wait", action="store_true",
                      help="queue the simulation, print its id and return")
    parser.add_argument("--watch", type=int, metavar="ID",
                        help="follow (or show) the existing simulation ID instead")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots.stats import Sprt
    from client.errors import KitError
    from db.migrate import upgrade
    from workers import simulations

    upgrade()
    if args.watch is not None:
        return follow(args.watch)
    if not args.bot_a or not args.bot_b:
        raise KitError("give two strategies, e.g. `bummerl simulate bully rdeep` (or --watch "
                       "ID)")
    sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta) if args.sprt else None
    try:
        sim_id = simulations.create_simulation(args.bot_a, args.bot_b, args.deals, seed=args.seed,
                                               profile=args.profile, chunk_deals=args.chunk,
                                               sprt=sprt)
    except ValueError as e:
        raise KitError(str(e)) from None
    print(f"simulation {sim_id}: {args.bot_a} vs {args.bot_b}, {args.deals} deals × 2 seatings, "
          f"profile {args.profile}")
    if args.inline:
        return run_inline(sim_id)
    from workers import procs, tasks

    workers = []
    if args.spawn:
        workers = [procs.start_worker(queues="batch", concurrency=1, name=f"simulate{i}",
                                      loglevel="WARNING") for i in range(args.spawn)]
    try:
        simulations.dispatch(sim_id, send=tasks.send_chunks)
        if args.no_wait:
            print(f"queued; follow it with `bummerl simulate --watch {sim_id}`")
            return 0
        return follow(sim_id)
    finally:
        if workers:
            procs.stop_all(workers)


def run_inline(sim_id: int) -> int:
    """Play every chunk here, through the same idempotent chunk code the workers run."""
    from tqdm import tqdm

    from workers import simulations

    queue: list[int] = []
    simulations.dispatch(sim_id, send=queue.extend)
    with tqdm(total=simulations.progress(sim_id)["deals"], unit="deal") as bar:
        while queue:
            simulations.run_chunk(queue.pop(0), send=queue.extend)
            bar.update(simulations.progress(sim_id)["deals_done"] - bar.n)
    show(simulations.progress(sim_id))
    return 0


def follow(sim_id: int, poll: float = 0.3) -> int:
    """A progress bar until the simulation is done or stopped, then the result table."""
    from tqdm import tqdm

    from workers import simulations

    info = simulations.progress(sim_id)
    started = time.monotonic()
    hinted = False
    with tqdm(total=info["deals"], unit="deal", initial=info["deals_done"]) as bar:
        try:
            while info["state"] == "running":
                time.sleep(poll)
                info = simulations.progress(sim_id)
                if not hinted and info["deals_done"] == 0 and time.monotonic() - started > 15:
                    hinted = True
                    bar.write("no progress yet: is a worker running on the `batch` queue? "
                              "(`bummerl worker`, or rerun with --spawn N or --inline)")
                bar.update(info["deals_done"] - bar.n)
                elo = info["result"].get("elo")
                if info["result"]["pairs"]:
                    bar.set_postfix_str(f"Elo {elo:+.0f}")
        except KeyboardInterrupt:
            print(f"\nstill running on the workers; `bummerl simulate --watch {sim_id}`")
            return 130
    show(info)
    return 0


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "–" if x is None else format(x, fmt)


def _interval(pair: list, fmt: str = "+.3f") -> str:
    lo, hi = pair
    return f"[{_num(lo, fmt)}, {_num(hi, fmt)}]"


def show(info: dict) -> None:
    from rich.table import Table

    from cli.errors import console

    r = info["result"]
    a, b = info["strategy_a"], info["strategy_b"]
    title = (f"simulation {info['id']}: {a} (A) vs {b} (B), profile {info['profile']}, "
             f"seed {info['seed']} — {info['state']}")
    table = Table(title=title, show_header=True)
    table.add_column("")
    table.add_column("value", justify="right")
    table.add_column("95% interval", justify="right")
    table.add_row("deals played (× 2 seatings)", f"{r['pairs']} ({r['hands']} hands)", "")
    table.add_row(f"game points per deal, {a}", _num(r["points_per_deal_a"], ".3f"), "")
    table.add_row(f"game points per deal, {b}", _num(r["points_per_deal_b"], ".3f"), "")
    table.add_row("net game points per deal, A − B", _num(r["net_per_deal"]),
                  _interval(r["net_per_deal_ci"]))
    table.add_row(f"win rate, {a}", _num(r["win_rate_a"], ".1%"), "")
    table.add_row(f"win rate, {b}", _num(r["win_rate_b"], ".1%"), "")
    table.add_row("Elo difference, A − B", _num(r["elo"], "+.0f"), _interval(r["elo_ci"], "+.0f"))
    sprt = r.get("sprt")
    if sprt:
        verdict = {"H1": f"A is stronger (≥ {sprt['elo1']:+.0f} Elo)",
                   "H0": f"A is not stronger than {sprt['elo0']:+.0f} Elo"}.get(
                       sprt["decision"], "undecided")
        table.add_row(f"SPRT elo0={sprt['elo0']:+.0f} elo1={sprt['elo1']:+.0f}",
                      f"LLR {sprt['llr']:+.2f}",
                      f"bounds [{sprt['lower']:+.2f}, {sprt['upper']:+.2f}]: {verdict}")
    console().print(table)
