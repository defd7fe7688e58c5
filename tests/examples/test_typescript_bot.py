"""Any language (issue 11): the TypeScript example bot (examples/typescript, @grpc/grpc-js with
the .proto files loaded at run time) plays a match to the end against the Python random bot on a
real service."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from npmkit import npm_ci
from servicekit import fresh_database, running_service

from client import Runner
from examples.random_bot import RandomBot
from services.core import matches as plain

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "examples" / "typescript"
pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def built() -> Path:
    npm_ci(FOLDER, "build")
    return FOLDER / "dist" / "bot.js"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_typescript_bot_plays_a_match_to_the_end(built, kind, request, tmp_path):
    with fresh_database(kind, request, tmp_path) as database, \
            running_service(database) as service:
        ts_id, ts_token = service.register("typescript")
        py_id, py_token = service.register("python")
        m = plain.create_match([ts_id, py_id], seed=21, sessions=service.sessions,
                               config=service.config)
        python = Runner(RandomBot(5), service.server.address, py_token, max_matches=1)
        thread = threading.Thread(target=python.run, daemon=True)
        thread.start()
        done = subprocess.run(
            ["node", str(built), "--server", service.server.address, "--token", ts_token,
             "--matches", "1"], cwd=FOLDER, capture_output=True, text=True, timeout=120)
        thread.join(60)
        python.stop()
        assert done.returncode == 0, done.stdout + done.stderr
        assert "connected to" in done.stdout and "as typescript" in done.stdout
        assert f"match {m.id} ended:" in done.stdout and "vs python" in done.stdout
        final = plain.get_match(m.id, sessions=service.sessions)
        assert final.state == "finished" and final.end_reason == "played"
        won = "won 1, lost 0" in done.stdout
        assert won == (final.winner == 0)
        assert python.stats.matches_won + python.stats.matches_lost == 1
