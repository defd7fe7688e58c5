"""Benchmark: OpenSpiel's IS-MCTS playing through the kit (`bummerl_kit.envs.openspiel_game.
OpenSpielBot`) against the house levels, on duplicate deals (`bots.batch.play_pair`: each deal
twice, seats swapped), in-process: the kit bot sees only its seat's observations, as on a server.

For each level it prints the deals played, the hands the IS-MCTS bot won, its net game points per
deal with a 95 % interval, the Elo difference that score gives, and the IS-MCTS bot's seconds per
decision. IS-MCTS runs `--simulations` simulations per decision (random roll-outs), so the result
does not depend on the machine's speed; the time does.

Run: `nice -n 19 .venv/bin/python bench/kit_openspiel.py -n 40 --simulations 200 --minutes 20`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots import make_bot  # noqa: E402
from bots.base import Bot as HouseBot  # noqa: E402
from bots.batch import play_pair  # noqa: E402
from bots.stats import Totals, summary  # noqa: E402
from bummerl_kit.envs.openspiel_game import OpenSpielBot, ismcts_bot  # noqa: E402
from engine import Action, Observation, Profile  # noqa: E402
from events.levels import LEVELS  # noqa: E402


class KitSeat(HouseBot):
    """The kit bot in a house bot's seat (`choose` calls the kit bot's `act`), timed."""

    name = "openspiel-ismcts"

    def __init__(self, bot: OpenSpielBot) -> None:
        self.bot = bot
        self.decisions = 0
        self.seconds = 0.0

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        start = time.perf_counter()
        action = self.bot.act(observation)
        self.seconds += time.perf_counter() - start
        self.decisions += 1
        return action


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--deals", type=int, default=40, help="deals per level at most")
    parser.add_argument("--simulations", type=int, default=200,
                        help="IS-MCTS simulations per decision")
    parser.add_argument("--minutes", type=float, default=20.0, help="stop after this long")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--profile", default="soft", choices=["soft", "sharp"])
    parser.add_argument("--levels", default="level-1,level-2,level-3",
                        help="house levels (events/levels.py), comma-separated")
    args = parser.parse_args()
    strategies = args.levels.split(",")
    known = {lv.strategy: lv for lv in LEVELS}
    for strategy in strategies:
        if strategy not in known:
            parser.error(f"unknown level {strategy!r} (known: {', '.join(known)})")
    kit = KitSeat(OpenSpielBot(lambda game: ismcts_bot(game, args.simulations, args.seed),
                               seed=args.seed))
    print(f"OpenSpiel IS-MCTS ({args.simulations} simulations a decision) through the kit vs "
          f"{', '.join(strategies)}; up to {args.deals} deals each, seed {args.seed}, profile "
          f"{args.profile}", flush=True)
    end = time.monotonic() + 60 * args.minutes / len(strategies)
    for strategy in strategies:
        house = make_bot(strategy)
        totals = Totals()
        decisions, seconds = kit.decisions, kit.seconds
        for deal in range(args.deals):
            pair = play_pair(kit, house, args.seed, deal, Profile(args.profile))
            totals.add_pair(pair.net, pair.wins_a, pair.points_a, pair.points_b)
            if time.monotonic() > end:
                break
        end = time.monotonic() + 60 * args.minutes / len(strategies)
        s = summary(totals)
        per = (kit.seconds - seconds) / max(1, kit.decisions - decisions)
        print(f"RESULT vs {strategy} ({known[strategy].name}): {totals.pairs} deals, "
              f"hands won {s['win_rate_a']:.1%}, net {s['net_per_deal']:+.2f} game points per "
              f"deal, 95% {interval(s['net_per_deal_ci'], '+.2f')}; elo {s['elo']:+.0f} "
              f"{interval(s['elo_ci'], '+.0f')}; {per:.3f} s a decision", flush=True)


def interval(bounds: list, form: str) -> str:
    """`[lo, hi]`, or `[-]` when there are too few deals for one."""
    if None in bounds:
        return "[-]"
    return f"[{format(bounds[0], form)}, {format(bounds[1], form)}]"


if __name__ == "__main__":
    main()
