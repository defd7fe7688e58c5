"""bench/hints.py runs end to end (one match): it prints a hint's CPU time with the stock open
and closed or exhausted, apart, and the exercises cut per match. The figures belong to the
bench (docs/analysis.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_hints_bench_prints_its_figures():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "hints.py"), "-n", "1"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    for part in ("open", "strict"):
        row = re.search(rf"^hint, stock {part}: (\d+) positions, CPU p50 (\d+) ms, p90 (\d+) ms,"
                        r" max (\d+) ms$", done.stdout, re.M)
        assert row and int(row.group(1)) > 0, done.stdout
        assert int(row.group(2)) <= int(row.group(3)) <= int(row.group(4))
    assert re.search(r"^exercises cut per match: [0-9.]+ \(\[\d+\]\)$", done.stdout, re.M), \
        done.stdout
