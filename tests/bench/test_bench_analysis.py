"""bench/analysis.py runs end to end (tiny: one match of quick house bots, two deals per
estimate): it prints a match's analysis seconds, exact and estimated apart, beside its playing
time, and the arithmetic of a busy ladder's day. The figures themselves belong to the bench."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_analysis_bench_prints_its_figures():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "analysis.py"), "-n", "1", "--bots", "bully",
         "rdeep", "--samples", "2"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    row = re.search(r"^\s+1\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+"
                    r"([0-9.]+)\s+([0-9.]+)$", out, re.M)
    assert row, out
    actions, decisions, exact = (int(row.group(i)) for i in (1, 2, 3))
    assert 0 < exact <= decisions <= actions
    day = re.search(r"([0-9,]+) matches analysed a day; a busy ladder's 10,000 matches a day "
                    r"need ([0-9.]+) such cores", out)
    assert day, out
    per_day = int(day.group(1).replace(",", ""))
    assert abs(10_000 / per_day - float(day.group(2))) < 0.06
