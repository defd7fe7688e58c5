"""Benchmark: what inferring the opponent's cards from its play tells the champion where it
matters most, at the closing decision; and how much its play can tell at all.

It plays hands of `--opponent` against itself (`--ms` of CPU a move). At every open-stock lead
after the first trick where the seat may close (R6.1), it solves the close exactly on the true
deal: after a close nobody draws, so the close's value depends only on the opponent's hand, and
a seat that saw that hand would know it (the ceiling: no error). Then it estimates that value
the champion's way, the mean of the exact close values over `--deals` deals drawn

- uniformly among those consistent with the seat's observation (`sample_hand`: the floor),
- weighed by the opponent's leads (`sample_plausible` with `leads`, bots/leads.py),
- resampled by the learned model of the opponent's play (`weighed_deals`,
  bots/opponent.py; `--model` names another model file),

and prints each one's mean squared error against the true value, and its Brier score for "the
close wins", beside the floor's: each difference to the floor is paired (the same positions)
and given with its 95 % interval. A smaller error is information about the opponent's cards.

Then it measures how much the opponent's play can tell at all: at each of its open-stock
decisions it decides twice more on the same observation with other random numbers, and prints
how often it repeats itself (leads and answers apart). A player that repeats itself seldom
reveals little of its hand, whatever model reads it.

Run: `.venv/bin/python bench/inference.py -n 100 --ms 100`
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots import make_bot  # noqa: E402
from bots.batch import deck_for  # noqa: E402
from bots.champion import sample_hand, sample_plausible, solved_value, weighed_deals  # noqa: E402
from bots.opponent import MODEL_FILE, OpponentModel  # noqa: E402
from engine import Action, Hand, Observation, Profile, observe  # noqa: E402

CLOSE = Action.close()


def close_value(hand: Hand, seat: int) -> int:
    """The exact game points for `seat` of closing now on this deal."""
    child = hand.copy()
    child.apply(seat, CLOSE)
    return solved_value(child, seat, None)


def positions(opponent: str, ms: float, hands: int, seed: int):
    """(true hand, seat, observation) at each open-stock lead after the first trick where the
    seat may close, in self-play of `opponent`; and the repeat counts (kind -> [same, asked])."""
    bot = make_bot(opponent, ms=ms, clock="cpu")
    repeats: dict[str, list[int]] = {"lead": [0, 0], "answer": [0, 0]}
    found = []
    for deal in range(hands):
        hand = Hand(deck_for(seed, deal), deal % 2, Profile.SOFT)
        rng = random.Random(f"inference:{seed}:{deal}")
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            if CLOSE in obs.legal_actions and obs.tricks:
                found.append((hand.copy(), seat, obs))
            action = bot.choose(obs, rng)
            if obs.closed_by is None and obs.stock_size and len(obs.legal_actions) > 1:
                kind = "answer" if obs.lead_card is not None else "lead"
                for k in range(2):
                    again = bot.choose(obs, random.Random(f"again:{seed}:{deal}:{k}"))
                    repeats[kind][0] += again == action
                    repeats[kind][1] += 1
            hand.apply(seat, action)
    return found, repeats


def paired(diffs: list[float]) -> str:
    mean = statistics.mean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--hands", type=int, default=100, help="hands of self-play")
    parser.add_argument("--ms", type=float, default=100.0, help="the opponent's CPU ms a move")
    parser.add_argument("--opponent", default="champion-v1", help="the house strategy that plays")
    parser.add_argument("--deals", type=int, default=128, help="deals per estimate")
    parser.add_argument("--seed", type=int, default=555)
    parser.add_argument("--model", default=str(MODEL_FILE), help="the learned model's file")
    args = parser.parse_args()
    model = OpponentModel.load(Path(args.model))
    start = time.monotonic()
    found, repeats = positions(args.opponent, args.ms, args.hands, args.seed)
    print(f"{args.opponent} at {args.ms:.0f} ms of CPU a move, {args.hands} hands (seed "
          f"{args.seed}): {len(found)} leads where the seat may close, {args.deals} deals per "
          f"estimate; {time.monotonic() - start:.0f} s of play", flush=True)
    if not found:
        print("no lead where the seat may close: play more hands (-n)")
        return
    ways: dict[str, Callable[[Observation, random.Random], list[Hand]]] = {
        "uniform (the floor)": lambda obs, rng: [sample_hand(obs, rng)
                                                 for _ in range(args.deals)],
        "weighed by its leads": lambda obs, rng: [sample_plausible(obs, rng, leads=True)
                                                  for _ in range(args.deals)],
        "resampled by the learned model": lambda obs, rng: weighed_deals(obs, rng, 0, model,
                                                                         args.deals),
    }
    errors: dict[str, list[float]] = {name: [] for name in ways}
    briers: dict[str, list[float]] = {name: [] for name in ways}
    seconds: dict[str, float] = {name: 0.0 for name in ways}
    for i, (hand, seat, obs) in enumerate(found):
        true = close_value(hand, seat)
        for name, draw in ways.items():
            rng = random.Random(f"deals:{args.seed}:{i}")
            began = time.process_time()
            deals = draw(obs, rng)
            seconds[name] += time.process_time() - began
            values = [close_value(deal, seat) for deal in deals]
            errors[name].append((statistics.mean(values) - true) ** 2)
            wins = sum(v > 0 for v in values) / len(values)
            briers[name].append((wins - (true > 0)) ** 2)
    floor = "uniform (the floor)"
    print("deals drawn | close value: mean squared error (game points²), vs the floor | "
          "'the close wins': Brier score, vs the floor | CPU ms to draw a move's deals")
    for name in ways:
        vs_error = paired([a - b for a, b in zip(errors[name], errors[floor], strict=True)])
        vs_brier = paired([a - b for a, b in zip(briers[name], briers[floor], strict=True)])
        print(f"  {name}: {statistics.mean(errors[name]):.3f}, {vs_error} | "
              f"{statistics.mean(briers[name]):.4f}, {vs_brier} | "
              f"{1000 * seconds[name] / max(1, len(found)):.1f}", flush=True)
    print("  seeing the opponent's hand (the ceiling): 0, as the close's value is exact then")
    for kind, (same, asked) in repeats.items():
        print(f"{args.opponent} repeats its {kind} on the same observation: {same} of {asked} "
              f"({same / max(1, asked):.0%})", flush=True)


if __name__ == "__main__":
    main()
