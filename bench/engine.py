"""Benchmark: random full hands and full matches per second, one process.

Each player picks uniformly among its legal actions, except that it claims exactly when the
claim is correct (legal-action generation included). Run: `.venv/bin/python bench/engine.py`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Hand, Match, deck_for  # noqa: E402
from engine.actions import CLAIM  # noqa: E402
from engine.rules import WINNING_POINTS  # noqa: E402


def play_hand(hand: Hand, rng: random.Random) -> None:
    """Play `hand` to its end with the random policy."""
    random = rng.random
    legal_actions = hand.legal_actions
    apply = hand.apply
    points = hand.points
    while (seat := hand.to_act) is not None:
        legal = legal_actions()
        n = len(legal)
        if legal[-1] is CLAIM:  # claim comes last when it is legal
            if points(seat) >= WINNING_POINTS:
                apply(seat, CLAIM)
                return
            n -= 1
        apply(seat, legal[int(random() * n)])


def play_match(match: Match, rng: random.Random) -> None:
    """Play `match` to its end with the random policy, every action through the match."""
    random = rng.random
    legal_actions = match.legal_actions
    apply = match.apply
    while (seat := match.to_act) is not None:
        legal = legal_actions()
        n = len(legal)
        if legal[-1] is CLAIM:
            if match.hand.points(seat) >= WINNING_POINTS:
                apply(seat, CLAIM)
                continue
            n -= 1
        apply(seat, legal[int(random() * n)])


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
        play_match(match, rng)
        hands += len(match.results)
        count += 1
    return count, hands, time.perf_counter() - start


def median_rate(measure, rounds: int) -> tuple[float, int]:
    """The median over `rounds` runs of (count / seconds), and the total count."""
    rates, total = [], 0
    for _ in range(rounds):
        count, elapsed = measure()
        rates.append(count / elapsed)
        total += count
    return statistics.median(rates), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is printed")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rate, hands = median_rate(lambda: bench_hands(args.seconds, args.seed), args.rounds)
    print(f"hands:   {rate:10,.0f} hands/s   (median of {args.rounds} rounds, "
          f"{hands:,} random hands)")
    match_hands = [0]

    def matches() -> tuple[int, float]:
        count, hands, elapsed = bench_matches(args.seconds, args.seed)
        match_hands[0] += hands
        return count, elapsed

    rate, count = median_rate(matches, args.rounds)
    print(f"matches: {rate:10,.0f} matches/s (median of {args.rounds} rounds, {count:,} matches, "
          f"{match_hands[0] / count:.1f} hands each)")


if __name__ == "__main__":
    main()
