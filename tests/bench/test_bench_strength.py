"""bench/strength.py runs end to end with docs/house-bots.md's flags and those of the champion's
experiments (in the commit messages; tiny: two deals instead of 2,000, 1,000 or 200), fair, with
`--see-all`, with `--see-hand`, with `--leads` and with `--model`. The figures belong to the
bench (hours of play)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("extra", [
    ["--procs", "2", "--opponents", "champion-v1,rdeep"],
    ["--procs", "1", "--opponents", "champion-v1", "--see-all"],
    ["--procs", "1", "--opponents", "champion-v1", "--see-hand"],
    ["--seed", "2028", "--procs", "1", "--opponents", "champion-v1"],
    ["--seed", "2028", "--procs", "1", "--opponents", "champion-v1", "--leads"],
    ["--seed", "2029", "--procs", "1", "--opponents", "champion-v1"],
    ["--seed", "2029", "--procs", "1", "--opponents", "champion-v1", "--model"],
    ["--seed", "2030", "--procs", "1", "--opponents", "champion-v1", "--model"],
    ["--seed", "2030", "--procs", "1", "--opponents", "champion-v1", "--model", "--strength",
     "2"],
    ["--procs", "2", "--opponents", "champion", "--search", "presumed"],
], ids=["fair", "see-all", "see-hand", "fair-2028", "leads", "fair-2029", "model", "model-2030",
        "model-strength-2", "presumed"])
def test_the_strength_bench_reports_a_pairing(extra):
    done = subprocess.run(
        [sys.executable, "bench/strength.py", "-n", "2", "--ms", "100", "--clock", "cpu", *extra],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    pairing = ("champion (presumed) vs champion" if "presumed" in extra
               else "champion vs champion-v1")
    assert re.search(rf"RESULT {re.escape(pairing)}: 2 deals \(4 hands\)", done.stdout), \
        done.stdout
    assert ("search presumed (3 worlds)" in done.stdout) == ("presumed" in extra), done.stdout
    assert ("seeing every card" in done.stdout) == ("--see-all" in extra), done.stdout
    assert ("seeing the opponent's hand" in done.stdout) == ("--see-hand" in extra), done.stdout
    assert ("by the opponent's leads" in done.stdout) == ("--leads" in extra), done.stdout
    strength = extra[extra.index("--strength") + 1] if "--strength" in extra else "1"
    assert (f"opponent_model.json (strength {float(strength)})" in done.stdout) == (
        "--model" in extra), done.stdout
