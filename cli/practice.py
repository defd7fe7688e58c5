"""`bummerl bot test FILE:Class --vs rdeep -n 200`: practise a bot locally against a house bot.

No server: the bot plays duplicate deals against the house strategy through the engine, with
the batch code of `bummerl simulate` (`workers.batch.play_pair`, `db.stats`), and the same
result table. Whatever the bot did wrong is collected, with the observation that caused it: an
exception in `act`, or an answer that is not one of the legal actions (the server would refuse
it with its rule). In both cases the first legal action is played, as the kit does.
"""

from __future__ import annotations

import argparse
import json
import random
import traceback
from dataclasses import dataclass, field

import engine
from client.bot import Bot as AuthorBot
from workers.bots.base import Bot as HouseBot

SHOWN = 5  # problems printed in full


@dataclass
class Problem:
    kind: str  # "exception" or "illegal"
    what: str
    observation: engine.Observation


@dataclass
class Adapter(HouseBot):
    """An author's `client.Bot` as a house bot (`choose`), recording its problems."""

    bot: AuthorBot
    problems: list[Problem] = field(default_factory=list)
    count: dict[str, int] = field(default_factory=lambda: {"exception": 0, "illegal": 0})

    def choose(self, observation: engine.Observation, rng: random.Random,
               deadline: float | None = None) -> engine.Action:
        try:
            answer = self.bot.act(observation)
        except Exception as e:  # noqa: BLE001  (reported, like the kit does)
            where = traceback.extract_tb(e.__traceback__)[-1]
            self._problem("exception", f"{type(e).__name__}: {e} (at {where.filename}:"
                                       f"{where.lineno})", observation)
            return observation.legal_actions[0]
        try:
            action = engine.Action.from_text(answer) if isinstance(answer, str) else answer
        except ValueError as e:
            self._problem("illegal", f"unreadable action {answer!r}: {e}", observation)
            return observation.legal_actions[0]
        if action not in observation.legal_actions:
            self._problem("illegal", f"{action} is not legal now (legal: "
                                     f"{', '.join(map(str, observation.legal_actions))})",
                          observation)
            return observation.legal_actions[0]
        return action

    def _problem(self, kind: str, what: str, observation: engine.Observation) -> None:
        self.count[kind] += 1
        if len(self.problems) < SHOWN:
            self.problems.append(Problem(kind, what, observation))


def practise(bot: AuthorBot, strategy: str, deals: int, seed: int, profile: str = "soft",
             progress: bool = True) -> tuple[dict, Adapter]:
    """Play `deals` duplicate pairs of `bot` (A) against house `strategy` (B); the summary
    (as `db.stats.summary`) and the adapter with the problems."""
    from tqdm import tqdm

    from db.stats import Totals, summary
    from workers.batch import play_pair
    from workers.bots import make_bot

    adapter = Adapter(bot)
    house = make_bot(strategy)
    totals = Totals()
    for deal in tqdm(range(deals), unit="deal", disable=not progress):
        pair = play_pair(adapter, house, seed, deal, engine.Profile(profile))
        totals.add_pair(pair.net, pair.wins_a, pair.points_a, pair.points_b)
    return summary(totals), adapter


def run(args: argparse.Namespace) -> int:
    from cli.simulate import show
    from client.__main__ import load_bot
    from client.errors import KitError
    from workers.bots import STRATEGIES

    strategy = args.vs.removeprefix("house-")
    if strategy not in STRATEGIES:
        raise KitError(f"unknown house bot {args.vs!r}: choose one of "
                       f"{', '.join(sorted(STRATEGIES))}")
    if args.deals < 1:
        raise KitError("-n must be at least 1")
    bot = load_bot(args.bot)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    result, adapter = practise(bot, strategy, args.deals, seed, args.profile,
                               progress=not args.no_progress)
    name = args.bot.rsplit(":", 1)[-1] or args.bot
    show({"id": "local", "strategy_a": name, "strategy_b": strategy, "profile": args.profile,
          "seed": seed, "state": "done", "result": result})
    if not adapter.problems:
        print(f"no exceptions, no illegal actions in {2 * args.deals} hands")
        return 0
    print(f"{adapter.count['exception']} exception(s) and {adapter.count['illegal']} illegal "
          f"action(s) (the first legal action was played instead); the first "
          f"{len(adapter.problems)}:")
    for p in adapter.problems:
        print(f"- {p.kind}: {p.what}\n  observation: "
              f"{json.dumps(p.observation.to_dict(), default=str)}")
    return 1
