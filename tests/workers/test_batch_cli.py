"""`bummerl simulate` and `bummerl up` as a person runs them (subprocesses, embedded defaults)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def embedded_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'bummerl.sqlite3'}",
           "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "COLUMNS": "160"}
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL"):
        env.pop(name, None)
    return env


def bummerl(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = embedded_env(tmp_path)
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_simulate_inline_prints_the_result_table(tmp_path):
    out = bummerl(tmp_path, "simulate", "random", "bully", "-n", "60", "--seed", "4",
                  "--inline", "--chunk", "20")
    assert out.returncode == 0, out.stderr
    assert "60 (120 hands)" in out.stdout
    assert "Elo difference" in out.stdout and "done" in out.stdout
    assert "60/60" in out.stderr  # the progress bar (tqdm writes to stderr)


def test_simulate_on_spawned_workers_with_sprt(tmp_path):
    out = bummerl(tmp_path, "simulate", "random", "bully", "-n", "400", "--chunk", "20",
                  "--spawn", "1", "--sprt", "--elo1", "50")
    assert out.returncode == 0, out.stderr
    assert "stopped" in out.stdout and "SPRT" in out.stdout


def test_up_plays_a_ladder_and_shows_standings(tmp_path):
    out = bummerl(tmp_path, "up", "--address", "127.0.0.1:0", "--until-rated", "1",
                  "--duration", "90", "--matches", "2", timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    for name in ("house-random", "house-bully", "house-rdeep"):
        assert name in out.stdout
    assert "won (played)" in out.stdout  # at least one ladder match finished


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_up_stops_its_worker_and_scheduler_on_sigterm(tmp_path, signum):
    """A `kill` (SIGTERM) of `bummerl up`, or its terminal closed (SIGHUP), stops it cleanly
    (status 0) and leaves no worker or beat process behind."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "up", "--address", "127.0.0.1:0", "--web", "off",
         "--duration", "120"], cwd=ROOT, env=embedded_env(tmp_path), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    started: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "Ctrl-C stops everything" in line:
                break
        started += Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert len(started) >= 2  # the worker and beat
        proc.send_signal(signum)
        assert proc.wait(timeout=60) == 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(int(p)) for p in started):
            time.sleep(0.2)
        assert not [p for p in started if _alive(int(p))], "orphaned worker or beat"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in started:  # each child leads its own process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid), signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"
