"""Benchmark: how much duplicate pairing shortens a test of a small difference.

A version test scores the candidate per pair: the fraction of the pair's two games it won
(0, ½ or 1). The sequential test (bots.stats.paired_llr, normal approximation) needs a number of
pairs proportional to the variance of that pair score, so the ratio of the variances of the two
designs is the ratio of their expected sample sizes:

- duplicate: one seed played twice with the seats swapped (each bot gets the cards the other
  had: the card luck cancels), as the service's duplicate pairs (db.pairs) and the batch
  simulations (bots.batch.play_pair) play them;
- unpaired: two games on two different seeds, one in each seat (the peer: what a test without
  pairing gets from the same number of games).

Both are measured here in the same run, with the same house bots and the same number of pairs,
for two units: a deal (one hand, as `bummerl simulate` plays) and a Bummerl (a match to 7
points, as version tests play). Then, for a test of `--elo` Elo (H0: 0, H1: --elo, α = β = 0.05)
on that unit, the expected pairs under H1 and H0 (Wald's approximation: the bound over the LLR's
drift per pair, n·Δ²/(2σ²)) for each design, and the ratio.

The bots: `--a` and `--b` (default rdeep with `--samples 2` against itself: two equally
strong bots whose choices come from their own random playouts; bully against bully would be
deterministic, and every duplicate pair a split). Each game's random choices come from an rng
seeded by (seed, game, seat), so a run is reproducible.

Run: `.venv/bin/python bench/pairing.py` (about 4 minutes on one core), or e.g.
`--deals 4000 --bummerls 600 --procs 2` for tighter figures.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots import Bot, make_bot  # noqa: E402
from bots.batch import play_hand  # noqa: E402
from bots.stats import elo_score, sprt_bounds  # noqa: E402
from engine import Match, Profile, deck_for  # noqa: E402

SEED_UNPAIRED = 1_000_003  # the unpaired design's second game is on seed + this


def _bot(name: str, samples: int) -> Bot:
    return make_bot(name, samples=samples) if name == "rdeep" else make_bot(name)


def _rngs(tag: str) -> tuple[random.Random, random.Random]:
    return random.Random(f"{tag}:0"), random.Random(f"{tag}:1")


def deal_won(seed: int, deal: int, bots: tuple[Bot, Bot], seat_of_a: int, tag: str) -> int:
    """1 if A (in `seat_of_a`) won deal `deal` of `seed`, else 0."""
    result = play_hand(deck_for(seed, deal), deal % 2, Profile.SOFT, bots, _rngs(tag))
    return int(result.winner == seat_of_a)


def bummerl_won(seed: int, bots: tuple[Bot, Bot], seat_of_a: int, tag: str) -> int:
    """1 if A (in `seat_of_a`) won the Bummerl of `seed`, else 0."""
    match = Match(seed, Profile.SOFT)
    rngs = _rngs(tag)
    while match.winner is None:
        seat = match.to_act
        assert seat is not None
        match.apply(seat, bots[seat].choose(match.observe(seat), rngs[seat]))
    return int(match.winner == seat_of_a)


def pair_scores(job: tuple[str, str, str, int, int, int, int]) -> tuple[list[float], list[float]]:
    """(duplicate, unpaired) pair scores of A for pairs `first` .. `first + count - 1`."""
    unit, a_name, b_name, samples, seed, first, count = job
    a, b = _bot(a_name, samples), _bot(b_name, samples)
    dup, unp = [], []
    for i in range(first, first + count):
        if unit == "deal":
            s = seed
            d0 = deal_won(s, i, (a, b), 0, f"d:{s}:{i}:0")
            d1 = deal_won(s, i, (b, a), 1, f"d:{s}:{i}:1")
            u1 = deal_won(s + SEED_UNPAIRED, i, (b, a), 1, f"u:{s}:{i}:1")
        else:
            s = seed * 1_000_000 + i
            d0 = bummerl_won(s, (a, b), 0, f"D:{s}:0")
            d1 = bummerl_won(s, (b, a), 1, f"D:{s}:1")
            u1 = bummerl_won(s + SEED_UNPAIRED, (b, a), 1, f"U:{s}:1")
        dup.append((d0 + d1) / 2)
        unp.append((d0 + u1) / 2)  # the same first game, the second on another seed
    return dup, unp


def measure(unit: str, n: int, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    procs = max(1, args.procs)
    step = math.ceil(n / procs)
    jobs = [(unit, args.a, args.b, args.samples, args.seed, start, min(step, n - start))
            for start in range(0, n, step)]
    if procs == 1:
        parts = [pair_scores(job) for job in jobs]
    else:
        with multiprocessing.Pool(procs) as pool:
            parts = pool.map(pair_scores, jobs)
    return [x for d, _ in parts for x in d], [x for _, u in parts for x in u]


def variance(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def expected_pairs(var: float, elo: float, alpha: float = 0.05, beta: float = 0.05
                   ) -> tuple[float, float]:
    """Wald's expected sample size of the normal-approximation SPRT (H0: 0, H1: `elo`) with
    pair-score variance `var`: (under H1, under H0)."""
    lower, upper = sprt_bounds(alpha, beta)
    delta = elo_score(elo) - 0.5
    drift = delta * delta / (2 * var)  # E[LLR per pair] under H1; its negative under H0
    return (((1 - beta) * upper + beta * lower) / drift,
            ((1 - alpha) * -lower - alpha * upper) / drift)


def outcomes(xs: list[float]) -> str:
    n = len(xs)
    return " / ".join(f"{xs.count(v) / n:.1%}" for v in (0.0, 0.5, 1.0))


def report(unit: str, n: int, args: argparse.Namespace) -> float:
    start = time.perf_counter()
    dup, unp = measure(unit, n, args)
    took = time.perf_counter() - start
    v_dup, v_unp = variance(dup), variance(unp)
    ratio = v_unp / v_dup if v_dup > 0 else math.inf
    print(f"\n{unit}s: {n} pairs of {args.a} vs {args.b} ({took:.0f} s); "
          f"A's score {sum(dup) / n:.3f} duplicate, {sum(unp) / n:.3f} unpaired")
    print(f"  {'design':<10} {'lost both / split / won both':>28} {'var per pair':>13} "
          f"{'pairs, ' + str(args.elo) + ' Elo H1':>17} {'H0':>9}")
    for name, xs, var in (("duplicate", dup, v_dup), ("unpaired", unp, v_unp)):
        h1, h0 = expected_pairs(var, args.elo)
        print(f"  {name:<10} {outcomes(xs):>28} {var:>13.4f} {h1:>17,.0f} {h0:>9,.0f}")
    # the variance of the pair-score variance estimate: a rough 95 % half-width on the ratio
    half = 1.96 * math.sqrt(2 / (n - 1)) * ratio * math.sqrt(2)
    print(f"  ratio unpaired / duplicate (expected sample size): {ratio:.2f}x"
          f"  (about ± {half:.2f} from sampling)")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", default="rdeep", help="house strategy of A (default: rdeep)")
    parser.add_argument("--b", default="rdeep", help="house strategy of B (default: rdeep)")
    parser.add_argument("--samples", type=int, default=2, help="rdeep's playouts per action")
    parser.add_argument("--deals", type=int, default=1500, help="deal pairs (0: skip)")
    parser.add_argument("--bummerls", type=int, default=300, help="Bummerl pairs (0: skip)")
    parser.add_argument("--elo", type=float, default=5.0, help="the difference to test")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--procs", type=int, default=1)
    args = parser.parse_args()
    print(f"pair score variance and expected SPRT pairs (H0: 0 Elo, H1: {args.elo} Elo, "
          f"alpha = beta = 0.05), duplicate against unpaired, measured in this run")
    for unit, n in (("deal", args.deals), ("bummerl", args.bummerls)):
        if n >= 2:
            report(unit, n, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
