"""Benchmark: how many sampled deals the champion evaluates per move within its budget.

Decisions come from played hands (both seats `rdeep` with 2 playouts per action, deals 0 ..
n-1 of a seed, soft profile; every decision with more than one legal action). Each strategy
(default `champion` and `champion-v1`) chooses at each decision with the same rng, one after the
other, `--ms` milliseconds per move on the `--clock` (cpu: the process's CPU time, fair on a
shared machine). It prints, per strategy, the mean and median deals per move with the stock open
(each deal: a playout and a solve per action still compared) and in the strict phase with the
stock closed (each deal: one solve of every action; with the stock exhausted there is one deal),
and the share of open-stock moves settled before the budget (one action left after pruning).

Run: `nice -n 19 .venv/bin/python bench/champion_deals.py -n 40 --ms 100 --clock cpu`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots import make_bot  # noqa: E402
from engine import Hand, Observation, deck_for, observe  # noqa: E402


def decisions(deals: int, seed: int) -> list[Observation]:
    rng = random.Random(seed)
    bots = [make_bot("rdeep", samples=2), make_bot("rdeep", samples=2)]
    out = []
    for deal in range(deals):
        hand = Hand(deck_for(seed, deal), dealer=deal % 2)
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            if len(obs.legal_actions) > 1:
                out.append(obs)
            hand.apply(seat, bots[seat].choose(obs, rng))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--deals", type=int, default=40, help="hands to take decisions from")
    parser.add_argument("--ms", type=float, default=100.0)
    parser.add_argument("--clock", default="cpu", choices=["wall", "cpu"])
    parser.add_argument("--seed", type=int, default=99)
    parser.add_argument("--strategies", default="champion,champion-v1")
    args = parser.parse_args()
    names = args.strategies.split(",")
    bots = {name: make_bot(name, ms=args.ms, clock=args.clock) for name in names}
    found = decisions(args.deals, args.seed)
    open_deals: dict[str, list[int]] = {name: [] for name in names}
    closed_deals: dict[str, list[int]] = {name: [] for name in names}
    settled = dict.fromkeys(names, 0)
    for i, obs in enumerate(found):
        is_open = obs.stock_size > 0 and obs.closed_by is None
        if not is_open and obs.closed_by is None:
            continue  # stock exhausted: one deal, solved once
        for name, bot in bots.items():
            bot.choose(obs, random.Random(i))
            samples = bot.last_samples  # type: ignore[attr-defined]
            (open_deals if is_open else closed_deals)[name].append(samples)
            settled[name] += is_open and getattr(bot, "last_contenders", 0) == 1
    print(f"{len(found)} decisions from {args.deals} hands (seed {args.seed}), {args.ms:.0f} ms "
          f"({args.clock}) per move")
    for name in names:
        o, c = open_deals[name], closed_deals[name]
        print(f"  {name}: stock open, {len(o)} moves: deals per move mean {statistics.mean(o):.1f},"
              f" median {statistics.median(o):.0f}, settled early {settled[name] / len(o):.0%}; "
              f"stock closed, {len(c)} moves: mean {statistics.mean(c):.1f}, median "
              f"{statistics.median(c):.0f}")


if __name__ == "__main__":
    main()
