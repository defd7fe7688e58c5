"""`bummerl sockets` as docs/cli.md gives it: a process of its own that says what it lacks,
serves its health, and stops on Ctrl-C or SIGTERM (a pod's stop)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from serviceprocs import free_port

ROOT = Path(__file__).resolve().parents[2]


def sockets(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cli.main", "sockets", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def test_without_the_webs_secret_it_says_what_to_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BUMMERL_WEB_SECRET"}
    env["BUMMERL_WEB_TOKEN"] = "t"
    done = sockets("--port", str(free_port()), env=env)
    out, _ = done.communicate(timeout=60)
    assert done.returncode == 1
    assert "BUMMERL_WEB_SECRET" in out and "Traceback" not in out


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_it_serves_its_health_and_stops_on_ctrl_c_or_sigterm(tmp_path, stop):
    port = free_port()
    env = {**os.environ, "BUMMERL_WEB_SECRET": "s", "BUMMERL_WEB_TOKEN": "t",
           "BUMMERL_SERVICE_ADDRESS": f"127.0.0.1:{free_port()}",  # nobody there yet
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    proc = sockets("--host", "127.0.0.1", "--port", str(port), "--max-streams", "100",
                   "--reuse-port", env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(f"bummerl sockets on http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/sockets/health",
                                            timeout=5) as r:
                    assert json.loads(r.read()) == {"streams": 0, "upstream": False,
                                                    "spectators": 0, "matches": 0}
                    break
            except OSError:
                assert time.monotonic() < deadline, "never answered"
                time.sleep(0.2)
        proc.send_signal(stop)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
