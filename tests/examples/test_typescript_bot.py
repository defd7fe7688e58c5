"""Any language (issue 11): the TypeScript example bot (examples/typescript, @grpc/grpc-js with
the .proto files loaded at run time) plays a match to the end against the Python random bot on a
real service."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
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
def built() -> Iterator[Path]:
    """The bot built as its README says (`npm ci`, `npm run build`); its dist/ is removed
    after, unless it was there before (node_modules/ stays: installed packages, reused)."""
    dist = FOLDER / "dist"
    existed = dist.exists()
    try:
        npm_ci(FOLDER, "build")
        yield dist / "bot.js"
    finally:
        if not existed:
            shutil.rmtree(dist, ignore_errors=True)


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
        # the counters as the kit writes them (it printed "counters -1-7")
        assert re.search(r"counters -?\d+:-?\d+ ", done.stdout), done.stdout
        assert "[typescript] " in done.stdout  # which bot speaks
        final = plain.get_match(m.id, sessions=service.sessions)
        assert final.state == "finished" and final.end_reason == "played"
        won = "won 1, lost 0" in done.stdout
        assert won == (final.winner == 0)
        assert python.stats.matches_won + python.stats.matches_lost == 1


def test_the_typescript_bot_never_leaves_a_running_match(built, request, tmp_path):
    """--matches 1 with two matches running: both are played out (it exited after the first
    and the second was forfeited on time)."""
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        ts_id, ts_token = service.register("typescript")
        py_id, py_token = service.register("python")
        created = [plain.create_match([ts_id, py_id], seed=seed, sessions=service.sessions,
                                      config=service.config).id for seed in (22, 23)]
        python = Runner(RandomBot(5), service.server.address, py_token, max_matches=2)
        thread = threading.Thread(target=python.run, daemon=True)
        thread.start()
        done = subprocess.run(
            ["node", str(built), "--server", service.server.address, "--token", ts_token,
             "--matches", "1"], cwd=FOLDER, capture_output=True, text=True, timeout=120)
        thread.join(60)
        python.stop()
        assert done.returncode == 0, done.stdout + done.stderr
        assert "--matches 1 reached: taking no new matches" in done.stdout, done.stdout
        for match_id in created:
            final = plain.get_match(match_id, sessions=service.sessions)
            assert (final.state, final.end_reason) == ("finished", "played"), done.stdout
        assert done.stdout.count(" ended: ") == 2
