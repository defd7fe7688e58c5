"""bench/events.py runs end to end (tiny: four house bots, a few seconds of ladder) on the real
PostgreSQL and Redis: it prints the ladder's matches/s, the event's matches/s and wall time, and
their ratio. The figures themselves belong to the bench, not here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def run_bench(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """bench/events.py with its temporary folders made under `tmp`."""
    tmp.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, str(ROOT / "bench" / "events.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(tmp)})


def test_the_events_bench_prints_its_figures(postgres_url, redis_url, tmp_path):
    done = run_bench(tmp_path / "tmp", "--bots", "4", "--concurrency", "2", "--ladder-seconds",
                     "5", "--postgres", postgres_url, "--redis", redis_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []  # its folder removed at exit (issue 44)
    out = done.stdout
    assert "round-robin: 3 rounds, 12 matches, state finished" in out, out
    ladder = re.search(r"^  ladder \(peer\)\s+([0-9.]+)$", out, re.M)
    event = re.search(r"^  event round-robin\s+([0-9.]+)\s+wall ([0-9.]+) s$", out, re.M)
    ratio = re.search(r"^  ratio event/ladder: ([0-9.]+)$", out, re.M)
    assert ladder and event and ratio, out
    assert float(ladder.group(1)) > 0 and float(event.group(1)) > 0
    assert abs(float(event.group(1)) / float(ladder.group(1)) - float(ratio.group(1))) < 0.02


def test_a_failed_run_removes_its_folder_too(redis_url, tmp_path):
    done = run_bench(tmp_path / "tmp", "--postgres", "postgresql+psycopg://127.0.0.1:1/none",
                     "--redis", redis_url)
    assert done.returncode != 0
    assert list((tmp_path / "tmp").iterdir()) == []
