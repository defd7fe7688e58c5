"""bench/levels.py: its Elo fit recovers known ratings, and the bench runs end to end (tiny: three
levels, a few deals). The figures themselves belong to the bench and events/levels.py."""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench():
    spec = importlib.util.spec_from_file_location("bench_levels", ROOT / "bench" / "levels.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fit_recovers_known_ratings():
    truth = {"a": 0.0, "b": 150.0, "c": 400.0, "d": 420.0}
    n = 1_000_000  # hands per pairing, so the prior's half hand is negligible
    wins = {}
    for x, y in [("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")]:
        p = 1 / (1 + 10 ** ((truth[y] - truth[x]) / 400))
        wins[(x, y)] = (round(n * p), n)
    ratings, errors = bench().fit_elo(wins, list(truth))
    for name, value in truth.items():
        assert math.isclose(ratings[name], value, abs_tol=1.0), (name, ratings)
    assert errors["a"] == 0 and all(0 < errors[k] < 5 for k in "bcd")


def test_the_levels_bench_prints_ratings():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "levels.py"), "-n", "4", "--procs", "1",
         "--levels", "level-1,level-2,level-3", "--step", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "RESULT Elo fit over 24 hands" in out, out
    for pair in ("level-1 vs level-2", "level-1 vs level-3", "level-2 vs level-3"):
        assert re.search(rf"^  {pair}: 4 deals, hands won [0-9.]+%", out, re.M), out
    assert re.search(r"^  level-3: [+-][0-9]+ ± [0-9]+$", out, re.M), out
