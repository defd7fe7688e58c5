"""bench/crowd.py and bench/bus.py run end to end (tiny): each prints its figures beside their
peers. The figures themselves belong to the benches, not here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_crowd_bench_prints_its_figures():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "crowd.py"), "--sizes", "40", "--matches", "2",
         "--seconds", "1.5", "--idle-seconds", "1", "--clients", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"server RSS per stream\s+-?[0-9.]+ KiB", out), out
    assert re.search(r"per 1,000 bots", out), out
    assert re.search(r"p99 crowd / no crowd\s+[0-9.]+x", out), out
    assert re.search(r"storm on the floor\s+[0-9.]+ s .*bummerl / floor [0-9.]+x", out), out
    assert "storm: 40 welcomed" in out, out


def test_the_bus_bench_prints_what_each_replica_hears(postgres_url, redis_url):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bus.py"), "--replicas", "1,2", "--matches", "2",
         "--seconds", "2", "--warmup", "1", "--redis", redis_url],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "BUMMERL_BENCH_POSTGRES_URL": postgres_url})
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r"^ 2\s+\d\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)x$",
                      done.stdout, re.M)
    assert len(rows) == 2, done.stdout
    for own, heard, _, channels, _, _ in rows:
        assert int(own) > 0 and int(channels) >= 1
        assert int(heard) == 0, done.stdout  # routed: a replica hears nothing of the other's
    assert "by arithmetic" in done.stdout
