"""docs/web.md's load runs, exactly as the doc writes them (50 and 500 simulated people, 60 s
each): they finish, print their figures, and nobody is refused (the issue's target at 500 open
tables). They saturate the machine for about a minute each, so they are marked `alone`:
scripts/test runs them after the rest of the suite, one at a time. The latencies are the
bench's to print, not this test's to judge."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ".venv/bin/python bench/people.py "


def doc_commands() -> list[str]:
    text = (ROOT / "docs" / "web.md").read_text()
    return [line.strip() for line in text.splitlines() if line.strip().startswith(PREFIX)]


def test_the_doc_gives_both_runs():
    people = [re.search(r"--people (\d+)", c) for c in doc_commands()]
    assert [m.group(1) for m in people if m] == ["50", "500"]


@pytest.mark.alone
@pytest.mark.parametrize("command", doc_commands(), ids=lambda c: c.split()[3])
def test_the_docs_load_run_as_written(command, redis_url):
    # redis_url: the real Redis must answer (the command names its own database, 10)
    done = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    people = re.search(r"--people (\d+)", command).group(1)  # type: ignore[union-attr]
    assert re.search(rf"{people} at once against house-random through the web, \d+ actions",
                     out), out
    assert re.search(r"over the minimum think: p50 [+-]\d+ ms, p99 [+-]\d+ ms", out), out
    assert re.search(r"operators' pages with every table open \(median of 3\): "
                     r"/standings \d+ ms", out), out
    assert "errors: 0 (0 refused or not started)" in out, out
