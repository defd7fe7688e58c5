"""The docs' load runs of bench/people.py, exactly as docs/scaling.md writes them: the socket
tier's runs (`--sockets`: 50 and 500 people playing, and 50 beside 5,000 idle open tables).
They finish, print their figures, and nobody is refused (issue 47's target: no open table
refused or ended, the idle ones neither).
They saturate the machine for a minute or a few each, so they are marked `alone`: scripts/test
runs them after the rest of the suite, one at a time. The latencies are the bench's to print,
not this test's to judge."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ".venv/bin/python bench/people.py "


def doc_commands(doc: str = "web.md") -> list[str]:
    text = (ROOT / "docs" / doc).read_text()
    return [line.strip() for line in text.splitlines() if line.strip().startswith(PREFIX)]


def test_web_md_gives_no_run_of_its_own():  # its Load paragraph points to scaling.md
    assert doc_commands() == []


def test_the_scaling_doc_gives_the_socket_tier_runs():
    commands = doc_commands("scaling.md")
    assert commands and all("--sockets" in c for c in commands)
    opens = [re.search(r"--open (\d+)", c) is not None for c in commands]
    assert opens == [False, False, True]


@pytest.mark.alone
@pytest.mark.parametrize("command", doc_commands("scaling.md"),
                         ids=lambda c: "-".join(c.split()[3:4] + ["sockets"] * ("--sockets" in c)
                                                + re.findall(r"--open (\d+)", c)
                                                + ["spectators"] * ("--spectators" in c)))
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
    watching = re.search(r"--spectators (\d+)", command)
    if watching:
        assert re.search(rf"spectators: {watching.group(1)} per playing table \(\d+ streams "
                         r"from as many addresses\), the answer's commit -> their update: p50 "
                         r"\d+ ms", out), out
    opened = re.search(r"--open (\d+)", command)
    if opened:
        n = opened.group(1)
        assert re.search(rf"per idle open table \({n} open, over \d+ s idle\): socket tier", out)
        assert (f"open tables: {n} of {n} held; refused (503, the page would poll): 0, ended or "
                "degraded while held: 0, not made: 0") in out, out
