"""Tests write only into temporary folders and remove what they build. The session sends the
site's local state (`BUMMERL_VAR`: the embedded database and broker, beat's schedule, heartbeat
files, `bummerl up`'s logs) into a temporary folder it removes at the end, the browser tests'
screenshots to `$BUMMERL_ARTIFACTS` (default: a folder under the system's temporary folder)
and Hypothesis's folder into the temporary folder; and it fails the run if the
checkout holds files or folders that were not there when it started.

Allowed to stay: caches of Python and its tools (`__pycache__`, `.pytest_cache`, ...) and the
npm packages the Node tests install (`node_modules/`, reused as `.venv/` is)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Path parts that may appear during a run: caches and installed packages, not test output.
ALLOWED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules"}
ARTIFACTS = Path(tempfile.gettempdir()) / "bummerl-artifacts"


class Leftovers:
    def __init__(self) -> None:
        self.made: Path | None = None  # the BUMMERL_VAR folder this session made
        self.before: set[str] | None = None

    def start(self) -> None:
        if not os.environ.get("BUMMERL_VAR"):  # (a parent run, e.g. xdist's, set it already)
            self.made = Path(tempfile.mkdtemp(prefix="bummerl-var-"))
            os.environ["BUMMERL_VAR"] = str(self.made)
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        if worker and Path(os.environ["BUMMERL_VAR"]).name != worker:  # a folder of its own
            mine = Path(os.environ["BUMMERL_VAR"]) / worker  # (removed with its parent's)
            mine.mkdir(parents=True, exist_ok=True)
            os.environ["BUMMERL_VAR"] = str(mine)
        os.environ.setdefault("BUMMERL_ARTIFACTS", str(ARTIFACTS))
        # Hypothesis's folder (its example database, its constants cache), else .hypothesis/
        hypothesis = os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                                           str(Path(os.environ["BUMMERL_VAR"]) / "hypothesis"))
        try:
            from hypothesis.configuration import set_hypothesis_home_dir
        except ImportError:  # pragma: no cover
            pass
        else:  # (its plugin may have been imported before this ran)
            set_hypothesis_home_dir(hypothesis)
        self.before = checkout_files()

    def finish(self) -> list[str]:
        """The files the run left in the checkout (sorted), then removes its BUMMERL_VAR."""
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)
        if self.before is None:
            return []
        after = checkout_files()
        if after is None:
            return []
        return topmost(list(after - self.before))


def checkout_files() -> set[str] | None:
    """Every file and folder of the checkout outside git's own, `.venv/` and the allowed
    ones (a walk, not `git status`, which does not see empty folders); None outside one."""
    if not (ROOT / ".git").exists():
        return None
    found = set()
    for folder, folders, files in os.walk(ROOT):
        here = Path(folder).relative_to(ROOT)
        folders[:] = [f for f in folders if f not in ALLOWED | {".git", ".venv"}]
        found.update(str(here / name) for name in [*folders, *files])
    return found


def topmost(paths: list[str]) -> list[str]:
    """`paths` without those inside another of them (a new folder is one entry)."""
    kept: list[str] = []
    for path in sorted(paths):
        if not kept or not path.startswith(kept[-1] + os.sep):
            kept.append(path)
    return kept
