"""`bummerl simulate` and `bummerl up` as a person runs them (subprocesses, embedded defaults)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bummerl(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'bummerl.sqlite3'}",
           "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "COLUMNS": "160"}
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL"):
        env.pop(name, None)
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
