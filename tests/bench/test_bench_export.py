"""bench/export.py runs end to end (tiny, on SQLite): it prints each process's peak memory per
export size beside its idle size, and the records per second beside the floor. The figures
themselves belong to the bench, not here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_export_bench_prints_its_figures():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "export.py"), "--matches", "60", "--sizes",
         "20,60"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "60 finished matches written" in out
    for who in ("service", "dashboard"):
        peaks = re.search(rf"^{who} peak RSS MiB\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)$", out, re.M)
        assert peaks, out
        assert all(float(v) > 10 for v in peaks.groups())
        assert re.search(rf"^{who}: peak [0-9.]+x its idle RSS at 60 records", out, re.M), out
    assert re.search(r"^floor records/s\s+\d+\s+\d+$", out, re.M), out
