"""`bummerl bot test FILE:Class --vs rdeep -n 200`: practise a bot locally against a house bot.

No server: the bot plays duplicate deals against the house strategy through the engine
(`bots.practice.practise`, with the batch code of `bummerl simulate`: `bots.batch.play_pair`,
`bots.stats`), and the same result table. Whatever the bot did wrong is collected, with the
observation that caused it: an exception in `act`, or an answer that is not one of the legal
actions (the server would refuse it with its rule). In both cases the first legal action is
played, as the kit does. The kit's `bummerl-kit practice` plays the same (bummerl_kit/offline.py).
"""

from __future__ import annotations

import argparse
import random

from bots.practice import Adapter, practise, report

__all__ = ["Adapter", "practise", "run"]


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from bots import STRATEGIES
    from cli.simulate import show
    from client.__main__ import load_bot
    from client.errors import KitError

    strategy = args.vs.removeprefix("house-")
    if strategy not in STRATEGIES:
        raise KitError(f"unknown house bot {args.vs!r}: choose one of "
                       f"{', '.join(sorted(STRATEGIES))}")
    if args.deals < 1:
        raise KitError("-n must be at least 1")
    bot = load_bot(args.bot)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    with tqdm(total=args.deals, unit="deal", disable=args.no_progress) as bar:
        result, adapter = practise(bot, strategy, args.deals, seed, args.profile,
                                   progress=bar.update)
    name = args.bot.rsplit(":", 1)[-1] or args.bot
    show({"id": "local", "strategy_a": name, "strategy_b": strategy, "profile": args.profile,
          "seed": seed, "state": "done", "result": result})
    for line in report(adapter, 2 * args.deals):
        print(line)
    return 0 if not adapter.problems else 1
