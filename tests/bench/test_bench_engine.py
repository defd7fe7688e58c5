"""bench/engine.py, the raw engine's speed, runs as docs/scaling.md gives it
(`.venv/bin/python bench/engine.py`) and prints both figures. The figures belong to the bench."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_bench_runs_as_the_docs_give_it():
    done = subprocess.run([".venv/bin/python", "bench/engine.py"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"hands:\s+[0-9,]+ hands/s", done.stdout), done.stdout
    assert re.search(r"matches:\s+[0-9,]+ matches/s", done.stdout), done.stdout
