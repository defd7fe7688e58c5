"""The bot authors' kit as an author gets it (docs/kit.md, README's "Write a bot in 10
minutes"): README's install lines run as written (`bash scripts/kit`, then `pip install
dist/bummerl_kit-*.whl`, with the venv's pip first on PATH), into a fresh virtual environment
that held nothing else. Only the output folder is changed (`--outdir`, under the test's
temporary folder: the suite leaves no dist/ in the checkout). Built and installed once per
run, shared by pytest-xdist's workers (a lock and a note in their common temporary folder)."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# tools/kit.py, the kit's build (a script, not a package's module)
_spec = importlib.util.spec_from_file_location("tools_kit", ROOT / "tools" / "kit.py")
assert _spec is not None and _spec.loader is not None
kitbuild = importlib.util.module_from_spec(_spec)
sys.modules["tools_kit"] = kitbuild
_spec.loader.exec_module(kitbuild)


@dataclass(frozen=True)
class Kit:
    folder: str  # the temporary folder that holds dist/ and venv/
    wheel: str
    sdist: str
    python: str  # the fresh venv's interpreter
    command: str  # its bummerl-kit
    before: list[str]  # the distributions the venv held before the kit was installed

    def env(self) -> dict[str, str]:
        """The environment of a process of the venv: its bin/ first, no PYTHONPATH."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "BUMMERL_TOKEN", "BUMMERL_BOT_TOKEN")}
        env["PATH"] = f"{Path(self.python).parent}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(Path(self.python).parent.parent)
        return env

    def run(self, code: str, *args: str, cwd: str | Path | None = None
            ) -> subprocess.CompletedProcess[str]:
        """Python `code` in the venv's interpreter, from an empty folder by default."""
        empty = Path(self.folder) / "empty"
        empty.mkdir(exist_ok=True)
        return subprocess.run([self.python, "-c", code, *args], cwd=cwd or empty,
                              env=self.env(), capture_output=True, text=True, timeout=120)


def guide() -> str:
    return README.read_text().split("## Write a bot in 10 minutes", 1)[1]


def install_lines() -> str:
    """The shell lines of the guide's step 1 (install the kit)."""
    step = guide().split("**1. ", 1)[1].split("**2. ", 1)[0]
    found = re.search(r"```sh\n(.*?)```", step, re.S)
    assert found, "README's step 1 has no ```sh block"
    return found.group(1)


def distributions(python: str) -> list[str]:
    done = subprocess.run([python, "-c", "import importlib.metadata as m, json; print(json.dumps("
                           "sorted({d.metadata['Name'] for d in m.distributions()})))"],
                          capture_output=True, text=True, timeout=60, check=True)
    return [name.lower().replace("_", "-") for name in json.loads(done.stdout)]


def build_and_install(folder: Path) -> Kit:
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    before = distributions(python)
    dist = folder / "dist"
    script = install_lines()
    assert "bash scripts/kit" in script and "dist/bummerl_kit-*.whl" in script, script
    script = script.replace("bash scripts/kit", f"bash scripts/kit --outdir {dist}")
    script = script.replace("dist/bummerl_kit-*.whl", f"{dist}/bummerl_kit-*.whl")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    (folder / "install.log").write_text(done.stdout + done.stderr)
    wheels, sdists = list(dist.glob("bummerl_kit-*.whl")), list(dist.glob("bummerl_kit-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    return Kit(str(folder), str(wheels[0]), str(sdists[0]), python,
               str(venv / "bin" / "bummerl-kit"), before)


def installed_kit(factory: pytest.TempPathFactory) -> Kit:
    """The kit, built and installed once per run (the first caller builds it)."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' common folder
    note = base / "bummerl-kit.json"
    with open(base / "bummerl-kit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if note.exists():
            return Kit(**json.loads(note.read_text()))
        folder = base / "bummerl-kit"
        folder.mkdir(exist_ok=True)
        kit = build_and_install(folder)
        note.write_text(json.dumps(asdict(kit)))
        return kit


def with_extra(kit: Kit, extra: str, folder: Path, timeout: float = 900) -> Path:
    """A fresh venv in `folder` holding the kit's wheel with its `extra` (pip reaches the package
    index for what the extra needs); its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    done = subprocess.run([str(folder / "bin" / "pip"), "install", "-q", f"{kit.wheel}[{extra}]"],
                          env=kit.env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / "bin" / "python"
