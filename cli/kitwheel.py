"""The kit's wheel for the dashboard to serve (web.kit, docs/kit.md): `bummerl up` builds it at
start, in the background, when it is missing from the kit folder (`BUMMERL_KIT_DIR`, else
var/kit) or older than any of its sources, with the kit's own build (tools/kit.py, as `bash
scripts/kit --outdir FOLDER` runs it), its output in a log file."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from db.base import ROOT, var_dir

BUILD = ROOT / "tools" / "kit.py"


def kit_dir() -> Path:
    """Where the dashboard looks for the wheel (web.kit reads the same)."""
    return Path(os.environ.get("BUMMERL_KIT_DIR") or var_dir() / "kit")


def kitbuild() -> ModuleType:
    """tools/kit.py (a script, not a package's module)."""
    spec = importlib.util.spec_from_file_location("tools_kit", BUILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wheel_path(folder: Path) -> Path:
    """The wheel of this tree's version in `folder` (its name as the build gives it)."""
    return folder / f"bummerl_kit-{kitbuild().version()}-py3-none-any.whl"


def kit_url(web: str) -> str:
    """The wheel's URL on the dashboard at `web` (HOST:PORT, as `bummerl up --web` takes it;
    a wildcard host is reached at 127.0.0.1), for the service to name to a too-old kit
    (`BUMMERL_KIT_URL`)."""
    host, _, port = web.rpartition(":")
    if host in ("0.0.0.0", "[::]", "::", ""):
        host = "127.0.0.1"
    return f"http://{host}:{port}/kit/{wheel_path(Path()).name}"


def stale(folder: Path) -> bool:
    """Whether the wheel in `folder` is missing or older than a source of the kit (its
    modules, pyproject.toml, docs/kit.md, the build itself)."""
    build = kitbuild()
    wheel = wheel_path(folder)
    if not wheel.is_file():
        return True
    paths = [path for path, _ in build.sources()]
    paths += [ROOT / "pyproject.toml", ROOT / "docs" / "kit.md", BUILD]
    built = wheel.stat().st_mtime
    return any(path.stat().st_mtime > built for path in paths)


def start_build(folder: Path, log: Path) -> tuple[subprocess.Popen[bytes] | None, str]:
    """Start building the wheel into `folder` when it is stale; the process (None: none
    started) and a line saying what happens."""
    if not BUILD.is_file():
        return None, "not built here (no tools/kit.py in this install)"
    try:
        if not stale(folder):
            return None, f"{wheel_path(folder)} (up to date)"
    except SystemExit as e:  # the build cannot run (no generated protobuf code): it says why
        return None, f"not built ({e})"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(BUILD), "--outdir", str(folder)],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL,
                                preexec_fn=lambda: os.nice(10))  # (the site's work first)
    return proc, f"building {wheel_path(folder)} in the background (log {log})"
