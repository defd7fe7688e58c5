"""bench/kit.py runs as docs/kit.md gives it (with a small -n, and its venv in a temporary
folder) and prints each figure beside the raw engine's: the kit's engine, VU's schnapsen 0.0.5
(its venv made with the command bench/vu.py gives), the kit's import time, the wheel's size,
and the training environments' steps a second (PettingZoo, OpenSpiel) beside the raw engine's
actions a second. The figures belong to the bench."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VU_VENV = "python3 -m venv /tmp/vu-venv && /tmp/vu-venv/bin/pip install schnapsen==0.0.5"
RATIO = r"[0-9.]+x the raw engine"

pytestmark = pytest.mark.timeout(1200)


def documented() -> list[str]:
    doc = (ROOT / "docs" / "kit.md").read_text()
    found = re.search(r"^(\.venv/bin/python bench/kit\.py)$", doc, re.M)
    assert found, "docs/kit.md gives no `.venv/bin/python bench/kit.py` line"
    return found.group(1).split()


def test_the_kit_bench_prints_each_figure_beside_the_raw_engine(tmp_path):
    done = subprocess.run(["bash", "-c", VU_VENV], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    command = [*documented(), "-n", "30", "--rounds", "1", "--imports", "2", "--venv",
               str(tmp_path / "venv")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for pattern in (r"^raw engine hands/s: +[0-9,]+ ",
                    rf"^kit engine hands/s: +[0-9,]+ +{RATIO}",
                    rf"^VU schnapsen hands/s: +[0-9,]+ +{RATIO} \(schnapsen 0\.0\.5",
                    rf"^kit import time: +[0-9,.]+ ms {RATIO} \(`import bummerl_kit`",
                    rf"^wheel size: +[0-9,.]+ KiB {RATIO} \(bummerl_kit-[0-9.]+-py3-none-any",
                    r"^raw engine steps/s: +[0-9,]+ +\(actions applied, in the environments' "
                    r"rounds; [0-9,]+ hands/s\)$",
                    rf"^PettingZoo env steps/s: +[0-9,]+ +{RATIO} \(pettingzoo_env\(episode="
                    rf"'hand'\): env.step with an action, random legal actions; [0-9,]+ "
                    rf"hands/s, {RATIO}'s hands/s\)$",
                    rf"^OpenSpiel env steps/s: +[0-9,]+ +{RATIO} \(python_schnapsen: every "
                    rf"apply_action, the deal's 20 chance steps a hand included; [0-9,]+ "
                    rf"hands/s, {RATIO}'s hands/s\)$"):
        assert re.search(pattern, out, re.M), (pattern, out)


def test_without_vu_its_line_says_skipped_and_why(tmp_path):
    command = [*documented(), "-n", "10", "--rounds", "1", "--imports", "1", "--venv",
               str(tmp_path / "venv"), "--vu-python", str(tmp_path / "none" / "python")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"^VU schnapsen hands/s: +skipped: no {tmp_path}/none/python \(make it: "
                     rf"{re.escape(VU_VENV)}\)$", done.stdout, re.M), done.stdout
