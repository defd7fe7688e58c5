"""bench/kit_openspiel.py, OpenSpiel's IS-MCTS through the kit against the house levels, runs as
docs/kit.md gives it (here with fewer deals and simulations) and prints a result per level."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_openspiel_bench_runs_and_prints_a_result_per_level():
    done = subprocess.run([".venv/bin/python", "bench/kit_openspiel.py", "-n", "1",
                           "--simulations", "10", "--levels", "level-1,level-2"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    for level in ("level-1", "level-2"):
        assert re.search(rf"RESULT vs {level} \(\w+\): 1 deals, hands won [\d.]+%, net "
                         r"[+-][\d.]+ game points per deal, .* s a decision", done.stdout), \
            done.stdout
    bad = subprocess.run([".venv/bin/python", "bench/kit_openspiel.py", "--levels", "level-9"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert bad.returncode == 2 and "unknown level 'level-9'" in bad.stderr
