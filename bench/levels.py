"""Benchmark: the house levels' ratings, from a round-robin of every pair of levels on duplicate
deals (`bots.batch.play_pair`: each deal twice, seats swapped).

Pairings take turns, a few deals each, until every pairing has `-n` deals or `--minutes` have
passed (so a time-bounded run still measures every pairing about equally). It prints each
pairing's hand-win score and net game points per deal with 95 % intervals, then an Elo fit of all
levels (Bradley–Terry on the hands won, by maximum likelihood; level 1 anchored at 0; ± is 1.96
standard errors from the likelihood's curvature, counting each hand as an independent game).
The levels play without a clock (sample budgets), so the figures do not depend on the machine.

Run: `nice -n 19 .venv/bin/python bench/levels.py -n 100 --minutes 30 --procs 2`.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots import make_bot  # noqa: E402
from bots.batch import play_pair  # noqa: E402
from bots.stats import Totals, summary  # noqa: E402
from engine import Profile  # noqa: E402
from events.levels import LEVELS  # noqa: E402


def play_some(job: tuple[str, str, int, list[int], str]) -> tuple[str, str, list[tuple]]:
    a, b, seed, deals, profile = job
    bot_a, bot_b = make_bot(a), make_bot(b)
    pairs = [play_pair(bot_a, bot_b, seed, d, Profile(profile)) for d in deals]
    return a, b, [(p.net, p.wins_a, p.points_a, p.points_b) for p in pairs]


def fit_elo(wins: dict[tuple[str, str], tuple[int, int]], names: list[str],
            prior: float = 0.5) -> tuple[dict[str, float], dict[str, float]]:
    """Bradley–Terry ratings (Elo scale, names[0] = 0) from hands won (a's wins, hands) per
    pairing, by Newton's method; `prior` adds that many virtual hands won and lost to each
    pairing (keeps a clean sweep finite). Returns the ratings and their standard errors."""
    k = len(names)
    index = {n: i for i, n in enumerate(names)}
    r = [0.0] * k  # natural-log scale
    for _ in range(100):
        grad = [0.0] * k
        hess = [[0.0] * k for _ in range(k)]
        for (a, b), (w, n) in wins.items():
            i, j = index[a], index[b]
            p = 1 / (1 + math.exp(r[j] - r[i]))
            g = (w + prior) - (n + 2 * prior) * p
            h = (n + 2 * prior) * p * (1 - p)
            grad[i] += g
            grad[j] -= g
            hess[i][i] -= h
            hess[j][j] -= h
            hess[i][j] += h
            hess[j][i] += h
        # fix r[0] = 0: solve on the other k - 1 ratings
        free = list(range(1, k))
        step = _solve([[-hess[i][j] for j in free] for i in free], [grad[i] for i in free])
        for i, s in zip(free, step, strict=True):
            r[i] += s
        if max(abs(s) for s in step) < 1e-9:
            break
    cov = _inverse([[-hess[i][j] for j in free] for i in free])
    scale = 400 / math.log(10)
    ratings = {names[i]: r[i] * scale for i in range(k)}
    errors = {names[0]: 0.0} | {names[i]: math.sqrt(cov[n][n]) * scale
                                for n, i in enumerate(free)}
    return ratings, errors


def _solve(m: list[list[float]], v: list[float]) -> list[float]:
    inv = _inverse(m)
    return [sum(inv[i][j] * v[j] for j in range(len(v))) for i in range(len(v))]


def _inverse(m: list[list[float]]) -> list[list[float]]:
    """Gauss–Jordan inverse of a small positive-definite matrix."""
    n = len(m)
    a = [row[:] + [float(i == j) for j in range(n)] for i, row in enumerate(m)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[pivot] = a[pivot], a[c]
        p = a[c][c]
        a[c] = [x / p for x in a[c]]
        for r in range(n):
            if r != c:
                f = a[r][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c], strict=True)]
    return [row[n:] for row in a]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--deals", type=int, default=100, help="deals per pairing at most")
    parser.add_argument("--minutes", type=float, default=30.0, help="stop after this long")
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--profile", default="soft", choices=["soft", "sharp"])
    parser.add_argument("--step", type=int, default=4, help="deals per job")
    parser.add_argument("--levels", default=",".join(lv.strategy for lv in LEVELS))
    args = parser.parse_args()
    names = args.levels.split(",")
    pairings = list(itertools.combinations(names, 2))
    jobs = [(a, b, args.seed, list(range(i, min(i + args.step, args.deals))), args.profile)
            for i in range(0, args.deals, args.step) for a, b in pairings]
    totals = {p: Totals() for p in pairings}
    start = time.monotonic()
    end = start + 60 * args.minutes
    print(f"levels round-robin: {', '.join(names)}; up to {args.deals} deals per pairing, "
          f"{args.minutes:.0f} min at most, seed {args.seed}, profile {args.profile}", flush=True)
    with multiprocessing.Pool(args.procs) as pool:
        pending = []
        queue = iter(jobs)
        while True:
            while len(pending) < 2 * args.procs and time.monotonic() < end:
                job = next(queue, None)
                if job is None:
                    break
                pending.append(pool.apply_async(play_some, (job,)))
            if not pending:
                break
            done = [j for j in pending if j.ready()]
            if not done:
                time.sleep(0.2)
                continue
            for j in done:
                pending.remove(j)
                a, b, pairs = j.get()
                for pair in pairs:
                    totals[(a, b)].add_pair(*pair)
    elapsed = time.monotonic() - start
    print(f"{elapsed:.0f} s", flush=True)
    for (a, b), t in totals.items():
        s = summary(t)
        lo, hi = s["net_per_deal_ci"]
        slo, shi = s["elo_ci"]
        print(f"  {a} vs {b}: {t.pairs} deals, hands won {s['win_rate_a']:.1%}, net "
              f"{s['net_per_deal']:+.2f} game points per deal, 95% [{lo:+.2f}, {hi:+.2f}]; "
              f"elo {s['elo']:+.0f} [{slo:+.0f}, {shi:+.0f}]", flush=True)
    wins = {p: (t.wins_a, 2 * t.pairs) for p, t in totals.items() if t.pairs}
    ratings, errors = fit_elo(wins, names)
    hands = sum(n for _, n in wins.values())
    print(f"RESULT Elo fit over {hands} hands (level 1 = 0; ± 95 %):", flush=True)
    for name in names:
        print(f"  {name}: {ratings[name]:+.0f} ± {1.96 * errors[name]:.0f}", flush=True)


if __name__ == "__main__":
    main()
