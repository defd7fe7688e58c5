"""bench/people.py runs end to end (tiny): simulated people play house-random through the web and
it prints the action-to-answer figures beside the remote bot's same turn, the web's cost per open
table and the operators' pages. The figures themselves belong to the bench, not here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """bench/people.py with its temporary folder made under `tmp`."""
    tmp.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, str(ROOT / "bench" / "people.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(tmp)})


def test_the_people_bench_prints_its_figures(redis_url, tmp_path):
    done = run_bench(tmp_path / "tmp", "--people", "3", "--remote", "1", "--seconds", "4",
                     "--concurrency", "2", "--min-think-ms", "200", "--broker-url", redis_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []  # its folder removed at exit (issue 44)
    out = done.stdout
    assert re.search(r"3 at once against house-random through the web, \d+ actions", out), out
    figures = re.search(r"over the minimum think: p50 ([+-]\d+) ms, p99 ([+-]\d+) ms", out)
    assert figures, out
    assert int(figures.group(1)) >= 0, out  # never before the house's minimum think time
    assert re.search(r"remote gRPC bot's answer -> next turn .*: p50 \d+ ms", out), out
    assert re.search(r"per open table: [0-9.]+ threads, \d+ kB", out), out
    assert re.search(r"operators' pages with every table open \(median of 3\): "
                     r"/standings \d+ ms", out), out
    assert "errors: 0 (0 refused or not started)" in out, out


def test_a_failed_run_removes_its_folder_too(tmp_path):
    done = run_bench(tmp_path / "tmp", "--database-url", "postgresql+psycopg://127.0.0.1:1/none")
    assert done.returncode != 0 and "the service did not start; its log:" in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []
