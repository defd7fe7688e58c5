"""bench/service.py runs end to end (tiny, on SQLite): one round, and several rounds in
alternating order with their medians. The figures themselves belong to the bench, not here."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "service.py"), "--db", "sqlite", "-n", "4",
         "--seconds", "1", "--warmup", "0.5", *args],
        capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@cache
def one_round() -> str:
    """The bench's default run, once for the tests that read it."""
    return bench()


def test_rounds_alternate_and_report_their_medians():
    out = bench("--rounds", "3")
    assert out.count("N = 4 matches") == 3
    ratios = re.findall(r"^bummerl/floor\s+([0-9.]+)x actions/s, .*?, ([0-9.]+)x p99", out, re.M)
    assert len(ratios) == 3
    summary = re.search(r"median of 3 rounds: ([0-9.]+)x actions/s, ([0-9.]+)x p99", out)
    assert summary, out
    rates = sorted(float(rate) for rate, _ in ratios)
    p99s = sorted(float(p99) for _, p99 in ratios)
    assert abs(float(summary.group(1)) - rates[1]) <= 0.01 * rates[1] + 0.001
    assert abs(float(summary.group(2)) - p99s[1]) <= 0.01 * p99s[1] + 0.001
    assert "0 forfeited, 0 answers refused" in out


def test_one_round_by_default():
    out = one_round()
    assert out.count("N = 4 matches") == 1 and "median of" not in out


def test_it_reports_how_the_servers_event_loop_shared_the_cores():
    """The busiest server thread's running and waiting-for-a-CPU shares (schedstat): each a
    fraction of the measured time, so a reader can tell a loop short of work from one short of
    a core."""
    out = one_round()
    line = re.search(r"^server's busiest thread \(its event loop\): floor running ([0-9.]+), "
                     r"waiting for a CPU ([0-9.]+); bummerl running ([0-9.]+), waiting for a "
                     r"CPU ([0-9.]+) of the time$", out, re.M)
    assert line, out
    shares = [float(x) for x in line.groups()]
    assert all(0 <= x <= 1.05 for x in shares), shares  # clock ticks may round over 1
    assert shares[0] > 0 and shares[2] > 0  # each loop ran
