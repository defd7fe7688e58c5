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


def test_the_people_bench_with_the_socket_tier_and_idle_open_tables(redis_url, tmp_path):
    done = run_bench(tmp_path / "tmp", "--people", "3", "--remote", "1", "--seconds", "4",
                     "--concurrency", "2", "--min-think-ms", "200", "--broker-url", redis_url,
                     "--sockets", "--open", "20", "--idle-seconds", "2", "--spectators", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []
    out = done.stdout
    assert re.search(r"open tables: 20 of 20 made .* in [0-9.]+ s", out), out
    assert "the tables' streams from the socket tier; 20 idle open tables beside them" in out
    figures = re.search(r"over the minimum think: p50 ([+-]\d+) ms, p99 ([+-]\d+) ms", out)
    assert figures and int(figures.group(1)) >= 0, out
    assert re.search(r"the socket tier \(answer's commit -> visible\): p50 \d+ ms", out), out
    assert re.search(r"floor, the same events through a bare asyncio SSE relay .*: p50 "
                     r"[0-9.]+ ms, p99 [0-9.]+ ms \(n=\d+\); the socket tier's part over it: "
                     r"p50 x", out), out
    assert re.search(r"socket tier process: no stream \d+ MB; 20 idle streams \d+ MB", out), out
    assert re.search(r"per idle open table \(20 open, over 2 s idle\): socket tier -?[0-9.]+ "
                     r"kB, [0-9.]+ ms CPU a second .*; floor, the bare relay: -?[0-9.]+ kB, "
                     r"[0-9.]+ ms; ratio", out), out
    assert re.search(r"operators' pages with every table open \(median of 3\): "
                     r"/standings \d+ ms", out), out
    assert re.search(r"spectators: 2 per playing table \(6 streams from as many addresses\), "
                     r"the answer's commit -> their update: p50 \d+ ms, p99 \d+ ms \(n=\d+\); "
                     r"the person's own table event, the same answers: p50 \d+ ms", out), out
    assert "errors: 0 (0 refused or not started)" in out, out
    assert ("open tables: 20 of 20 held; refused (503, the page would poll): 0, ended or "
            "degraded while held: 0, not made: 0") in out, out


def test_open_tables_need_the_socket_tier(tmp_path):
    done = run_bench(tmp_path / "tmp", "--open", "5")
    assert done.returncode == 2 and "--open needs --sockets" in done.stderr


def test_a_failed_run_removes_its_folder_too(tmp_path):
    done = run_bench(tmp_path / "tmp", "--database-url", "postgresql+psycopg://127.0.0.1:1/none")
    assert done.returncode != 0 and "the service did not start; its log:" in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []
