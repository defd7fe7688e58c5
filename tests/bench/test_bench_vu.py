"""bench/vu.py, the champion inside the VU course's engine: its venv is made with the command
docs/house-bots.md and the bench's docstring give, and the bench runs end to end with the
documented flags (tiny: a few games), fair, with `--see-all` and with `--see-hand`. Every
decision must map to a VU move. The figures themselves belong to the bench (thousands of games,
minutes each)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = "python3 -m venv /tmp/vu-venv && /tmp/vu-venv/bin/pip install schnapsen==0.0.5"
RESULT = re.compile(r"RESULT (\d+) games: won [0-9.]+% .* decisions with no mapped action (\d+)")


@pytest.fixture(scope="module")
def vu_python() -> str:
    done = subprocess.run(["bash", "-c", VENV], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return "/tmp/vu-venv/bin/python"


@pytest.mark.parametrize("extra", [[], ["--see-all"], ["--see-hand"], ["--search", "presumed"]],
                         ids=["fair", "see-all", "see-hand", "presumed"])
def test_the_vu_bench_plays_every_decision_as_a_vu_move(vu_python, extra):
    command = [vu_python, "bench/vu.py", "-n", "4", "--procs", "1", "--ms", "100", "--clock",
               "cpu", "--objective", "wins", *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    found = RESULT.search(done.stdout)
    assert found, done.stdout
    assert found.group(1) == "4" and found.group(2) == "0", done.stdout
    assert ("seeing every card" in done.stdout) == ("--see-all" in extra), done.stdout
    assert ("seeing the opponent's hand" in done.stdout) == ("--see-hand" in extra), done.stdout
    assert ("'search': 'presumed'" in done.stdout) == ("presumed" in extra), done.stdout


def test_see_all_needs_a_champion(vu_python):
    done = subprocess.run([vu_python, "bench/vu.py", "-n", "2", "--strategy", "bully",
                           "--see-all"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "--see-all needs a champion strategy" in done.stderr


def test_the_vu_bench_reports_progress_before_its_result(vu_python):
    done = subprocess.run([vu_python, "bench/vu.py", "-n", "10", "--procs", "1", "--strategy",
                           "bully", "--every", "5"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.split(" games:")[0] for line in done.stdout.splitlines()
             if line.startswith(("progress", "RESULT"))]
    assert lines == ["progress 5", "RESULT 10"], done.stdout
