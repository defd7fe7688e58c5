"""Benchmark: exact endgame solves, beside a brute-force search over the engine on the same
positions.

Positions: random hands played (cards only, no closing) until the stock is exhausted: five cards
each, the first trick of the strict phase to lead. A solve is what the champion bot does there:
the exact value of every legal action (`bots.endgame.solve`). The peer is the plain
minimax over the engine's own legal-action generation and copy/apply
(tests/endgame_helpers.py `brute_force_actions`), timed on the first `--peer` positions; the
values of the two are compared on those positions as well.

Run: `.venv/bin/python bench/endgame.py [-n 500] [--peer 40]`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from endgame_helpers import brute_force_actions, random_exhausted_hand  # noqa: E402

from bots.endgame import Position, Solver  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--positions", type=int, default=500)
    parser.add_argument("--peer", type=int, default=40, help="positions also brute-forced")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    hands = [random_exhausted_hand(rng) for _ in range(args.positions)]
    times: list[float] = []
    nodes: list[int] = []
    values = []
    for hand in hands:
        start = time.perf_counter()
        pos = Position.from_hand(hand)
        solver = Solver.for_position(pos)
        values.append(solver.action_values(pos))
        times.append(time.perf_counter() - start)
        nodes.append(solver.nodes)
    peer: list[float] = []
    agree = 0
    for hand, mine in zip(hands[: args.peer], values, strict=False):
        start = time.perf_counter()
        theirs = brute_force_actions(hand)
        peer.append(time.perf_counter() - start)
        agree += theirs == mine
    ms = 1000
    print(f"{len(hands)} positions (stock exhausted, 5 cards each, first trick to lead), "
          f"seed {args.seed}")
    print(f"solver: median {statistics.median(times) * ms:.3f} ms, p99 {pct(times, 0.99) * ms:.3f}"
          f" ms, max {max(times) * ms:.3f} ms per solve (every root action's exact value); "
          f"median {statistics.median(nodes):.0f} nodes, max {max(nodes)}; target median <= 2 ms")
    if peer:
        solver_same = times[: len(peer)]
        print(f"peer (brute force over the engine, same first {len(peer)} positions): median "
              f"{statistics.median(peer) * ms:.1f} ms, p99 {pct(peer, 0.99) * ms:.1f} ms; "
              f"solver on those: median {statistics.median(solver_same) * ms:.3f} ms; "
              f"ratio peer/solver {statistics.median(peer) / statistics.median(solver_same):.0f}x;"
              f" values agree on {agree}/{len(peer)}")


if __name__ == "__main__":
    main()
