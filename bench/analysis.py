"""Benchmark: seconds to analyse a whole match (docs/analysis.md), the exact part and the
estimated part apart, beside the seconds the match took to play; then a day of a busy ladder
analysed on one worker, by arithmetic from the figure.

Matches: house bots played in-process from seeds 1..N (default the champion, at its budget of
`BUMMERL_CHAMPION_MS` = 100 ms a move, against rdeep), as match records
(tests/analysis/recordkit.py); each is analysed with `analysis.analyse_record` at the default
budget (`analysis.SAMPLES` deals per estimated decision, every deal when at most
`analysis.ENUMERATE`). Wall seconds of the two parts come from the analysis itself
(`analysis.seconds`), the CPU seconds of the whole from `time.process_time` (on a shared machine
wall time also counts waiting for a core).

A busy ladder: 10,000 matches a day (1,000 bots at 20 matches a day each, docs/scaling.md).

Run: `.venv/bin/python bench/analysis.py [-n 4] [--bots champion rdeep]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "analysis"))

from recordkit import play_record  # noqa: E402

from analysis import ENUMERATE, SAMPLES, analyse_record  # noqa: E402

BUSY_DAY = 10_000  # matches a day on a busy ladder (docs/scaling.md)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--matches", type=int, default=4)
    parser.add_argument("--bots", nargs=2, default=["champion", "rdeep"])
    parser.add_argument("--samples", type=int, default=SAMPLES)
    args = parser.parse_args()
    rows = []
    print(f"budget: {args.samples} sampled deals per estimated decision, every deal when at "
          f"most {ENUMERATE}; bots {args.bots[0]} vs {args.bots[1]}")
    print(f"{'seed':>4} {'actions':>7} {'decisions':>9} {'exact':>5} {'play s':>7} "
          f"{'exact s':>7} {'estim. s':>8} {'total s':>7} {'cpu s':>6}")
    for seed in range(1, args.matches + 1):
        record, played = play_record(seed, tuple(args.bots))
        start, cpu = time.perf_counter(), time.process_time()
        found = analyse_record(record, samples=args.samples)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        decisions = found["decisions"]
        exact = sum(d["method"] == "exact" for d in decisions)
        actions = sum(len(h["actions"]) for h in record["hands"])
        secs = found["seconds"]
        rows.append((played, secs["exact"], secs["estimate"], wall, cpu))
        print(f"{seed:>4} {actions:>7} {len(decisions):>9} {exact:>5} {played:>7.1f} "
              f"{secs['exact']:>7.2f} {secs['estimate']:>8.2f} {wall:>7.1f} {cpu:>6.1f}")
    mean = [statistics.mean(column) for column in zip(*rows, strict=True)]
    print(f"mean: play {mean[0]:.1f} s, analysis {mean[3]:.1f} s wall ({mean[1]:.2f} exact + "
          f"{mean[2]:.2f} estimated), {mean[4]:.1f} s CPU: {mean[3] / mean[0]:.1f}x the time "
          f"the match took to play (CPU: {mean[4] / mean[0]:.1f}x)")
    per_day = 86_400 / mean[4]
    print(f"one worker process (one core): {per_day:,.0f} matches analysed a day; a busy "
          f"ladder's {BUSY_DAY:,} matches a day need {BUSY_DAY / per_day:.1f} such cores "
          f"({BUSY_DAY * mean[4] / 3600:,.0f} CPU hours)")


if __name__ == "__main__":
    main()
