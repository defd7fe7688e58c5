"""`bash scripts/setup` (which `bash scripts/run` runs first) says what it does before each
step, so the first minutes of a fresh clone are not silent (issue 44), and says nothing when
there is nothing to do. The script runs as written, in a copy of the repository's layout;
only the Python it calls is a stand-in that records its arguments (a real install takes
minutes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A python that makes a virtual environment holding itself, and otherwise says what it was
# asked to run, on stderr (so its lines interleave with the script's in the order they come).
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0
fi
echo "ran: python $*" >&2
"""


def setup_copy(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    (root / "scripts").mkdir(parents=True)
    for script in ("setup", "run"):
        shutil.copy(ROOT / "scripts" / script, root / "scripts" / script)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "proto").mkdir()
    (root / "proto" / "build.py").write_text("")
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return root


def setup(root: Path, python: Path) -> list[str]:
    done = subprocess.run(["bash", "scripts/setup"], cwd=root, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHON": str(python)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    return done.stderr.splitlines()


def test_each_step_is_told_before_it_runs_and_nothing_when_nothing_changed(tmp_path):
    root = setup_copy(tmp_path)
    python = tmp_path / "python3"
    first = setup(root, python)
    assert first == [
        f"setup: making the virtual environment .venv with {python}",
        "setup: installing bummerl's dependencies into .venv (about 2 minutes the first time)",
        "ran: python -m pip install --quiet --upgrade pip",
        "ran: python -m pip install --quiet -e .[dev]",
        "setup: dependencies installed",
        "ran: python proto/build.py",
    ]
    # again: nothing to install, and proto/build.py is itself silent when nothing changed
    assert setup(root, python) == ["ran: python proto/build.py"]
    # pyproject.toml changed: the update is told
    later = time.time() + 5
    os.utime(root / "pyproject.toml", (later, later))
    third = setup(root, python)
    assert third[0] == "setup: pyproject.toml changed: updating bummerl's dependencies in .venv"
    assert third[-2:] == ["setup: dependencies installed", "ran: python proto/build.py"]


def test_run_says_it_starts_the_site_after_the_setup(tmp_path):
    root = setup_copy(tmp_path)
    python = tmp_path / "python3"
    setup(root, python)
    bummerl = root / ".venv" / "bin" / "bummerl"  # a stand-in: says what it was asked
    bummerl.write_text('#!/usr/bin/env bash\necho "ran: bummerl $*" >&2\n')
    bummerl.chmod(0o755)
    done = subprocess.run(["bash", "scripts/run", "--web", "off"], cwd=root, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHON": str(python)})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "ran: python proto/build.py",
        "run: starting the site (.venv/bin/bummerl up --web off): the service, the workers and "
        "the web",
        "ran: bummerl up --web off"]
