"""Benchmark: CPU milliseconds to work out a person's hint (`analysis.position.hint`, what
PeopleService.Hint runs in the service process), with the stock open and once it is closed or
exhausted, apart; and exercises cut per analysed match.

Positions: every decision (two or more legal actions) of matches of two house bots played
in-process from seeds 1..N (tests/analysis/recordkit.py, bully against bully by default). CPU
time from `time.process_time` (on a shared machine wall time also counts waiting for a core).

Run: `.venv/bin/python bench/hints.py [-n 2]`.
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

from analysis import analyse_record  # noqa: E402
from analysis.deals import is_strict  # noqa: E402
from analysis.exercises import cut  # noqa: E402
from analysis.position import hint  # noqa: E402
from engine import Action, Card, Match  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2, help="matches (default: %(default)s)")
    parser.add_argument("--bots", nargs=2, default=["bully", "bully"])
    args = parser.parse_args()
    times: dict[str, list[float]] = {"open": [], "strict": []}
    exercises = []
    for seed in range(1, args.n + 1):
        record, _ = play_record(seed, tuple(args.bots), match_id=seed)
        decks = [[Card.from_text(t) for t in h["deck"]] for h in record["hands"]]
        match = Match(profile=record["profile"], first_dealer=record["first_dealer"],
                      decks=decks)
        for hand in record["hands"]:
            for entry in hand["actions"]:
                obs = match.observe(entry["seat"])
                if len(obs.legal_actions) > 1:
                    start = time.process_time()
                    hint(obs)
                    times["strict" if is_strict(obs) else "open"].append(
                        (time.process_time() - start) * 1000)
                match.apply(entry["seat"], Action.from_dict(entry))
        exercises.append(len(cut(record, analyse_record(record, samples=2))))
    for part, ms in times.items():
        ms.sort()
        print(f"hint, stock {part}: {len(ms)} positions, CPU p50 {statistics.median(ms):.0f} ms,"
              f" p90 {ms[int(len(ms) * 0.9)]:.0f} ms, max {ms[-1]:.0f} ms")
    print(f"exercises cut per match: {statistics.mean(exercises):.1f} ({exercises})")


if __name__ == "__main__":
    main()
