"""npm packages the tests need (the TypeScript example bot, buf): installed here with `npm ci`
from the committed package-lock.json. Without node/npm the tests skip with a message, except
under BUMMERL_REQUIRE_SERVICES=1 (.ci/run), where they fail."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from needs import check


def need_npm() -> str:
    check("node", "Node.js and npm")
    npm = shutil.which("npm")
    if npm and shutil.which("node"):
        return npm
    message = "node and npm are not installed (apt-get install nodejs npm)"
    if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: this test must run)")
    pytest.skip(message + "; install them to run this test")


def npm_ci(folder: Path, *then: str) -> None:
    """`npm ci` in `folder` (then `npm run X` for each X of `then`), unless node_modules is
    already installed from the same package-lock.json."""
    npm = need_npm()
    lock = folder / "package-lock.json"
    stamp = folder / "node_modules" / ".bummerl-lock"
    # one `npm ci` of a folder at a time, across the test run's processes (scripts/test: two)
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"bummerl-npm-{key}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (stamp.exists() and stamp.read_text() == lock.read_text()):
            run([npm, "ci", "--no-audit", "--no-fund"], folder)
            stamp.write_text(lock.read_text())
    for script in then:
        run([npm, "run", "--silent", script], folder)


def run(command: list[str], folder: Path) -> None:
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
