"""Benchmark: random full hands and full matches per second, one process.

Each player picks uniformly among its legal actions, except that it claims exactly when the
claim is correct (legal-action generation included). Run: `.venv/bin/python bench/engine.py`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Hand, Match, deck_for  # noqa: E402
from engine.actions import CLAIM  # noqa: E402
from engine.rules import WINNING_POINTS  # noqa: E402


def play_hand(hand: Hand | Match, rng: random.Random) -> None:
    """Play `hand` (a Hand, or a Match's current hand) to its end with the random policy."""
    choice = rng.choice
    legal_actions = hand.legal_actions
    apply = hand.apply
    points = (hand.hand if isinstance(hand, Match) else hand).points
    while True:
        seat = hand.to_act
        if seat is None:
            return
        legal = legal_actions()
        if legal[-1] is CLAIM:
            if points(seat) >= WINNING_POINTS:
                apply(seat, CLAIM)
                if isinstance(hand, Match):
                    return
                continue
            action = choice(legal[:-1])
        else:
            action = choice(legal)
        if apply(seat, action) is not None:  # Match.apply returns the result of a finished hand
            return


def bench_hands(seconds: float, seed: int) -> tuple[int, float]:
    rng = random.Random(seed)
    decks = [deck_for(seed, n) for n in range(1000)]
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for n in range(200):
            play_hand(Hand(decks[(count + n) % 1000], n & 1), rng)
        count += 200
    return count, time.perf_counter() - start


def bench_matches(seconds: float, seed: int) -> tuple[int, int, float]:
    rng = random.Random(seed)
    count = hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        match = Match(seed=f"{seed}-{count}")
        while not match.is_over:
            play_hand(match, rng)
        hands += len(match.results)
        count += 1
    return count, hands, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    hands, elapsed = bench_hands(args.seconds, args.seed)
    print(f"hands:   {hands / elapsed:10,.0f} hands/s   ({hands:,} random hands in {elapsed:.1f} s)")
    matches, match_hands, elapsed = bench_matches(args.seconds, args.seed)
    print(f"matches: {matches / elapsed:10,.0f} matches/s ({matches:,} matches, "
          f"{match_hands / matches:.1f} hands each, in {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
