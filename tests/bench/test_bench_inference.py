"""bench/inference.py runs end to end with the flags of the champion's experiment that used it
(`-n 100 --ms 100`; the experiments' history is in the commit messages, docs/house-bots.md),
three hands instead of 100: the close's error for each way of drawing deals beside the floor's,
and how often the opponent repeats itself. The figures belong to the bench."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_inference_bench_reports_each_way_beside_the_floor():
    done = subprocess.run([sys.executable, "bench/inference.py", "-n", "3", "--ms", "100"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"champion-v1 at 100 ms of CPU a move, 3 hands \(seed 555\): \d+ leads", out)
    for way in ("uniform (the floor)", "weighed by its leads", "resampled by the learned model"):
        assert re.search(re.escape(way) + r": \d+\.\d+, [+-]\d", out), out
    assert "uniform (the floor): " in out and "+0.000 [+0.000, +0.000]" in out, out
    for kind in ("lead", "answer"):
        assert re.search(rf"repeats its {kind} on the same observation: \d+ of \d+", out), out
