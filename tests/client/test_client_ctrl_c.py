"""Ctrl-C on a running bot (a real `python -m client` process and SIGINT): once, it finishes the
running match and exits by itself; twice, it leaves at once and says which match will be
forfeited and when."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from servicekit import fresh_database, running_service

from client import Runner
from examples.random_bot import RandomBot
from services.core import matches as plain

ROOT = Path(__file__).resolve().parents[2]
SLOW_BOT = """
import time
from client import Bot

class Slow(Bot):
    def act(self, observation):
        time.sleep(0.15)
        return observation.legal_actions[0]
"""


@pytest.fixture
def service(tmp_path, request):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def start_bot(tmp_path: Path, address: str, token: str) -> subprocess.Popen[str]:
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    return subprocess.Popen(
        [sys.executable, "-m", "client", f"{tmp_path / 'slow.py'}:Slow", "--server", address,
         "--token", token],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)


def opponent(address: str, token: str) -> tuple[Runner, threading.Thread]:
    runner = Runner(RandomBot(3), address, token, max_matches=1)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    return runner, thread


def wait_until_playing(service, match_id: int, process) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 60
    while plain.get_match(match_id, sessions=service.sessions).seq < 6:
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "the match did not start"
        time.sleep(0.05)


def test_one_ctrl_c_finishes_the_running_match_then_exits(service, tmp_path):
    a_id, a_token = service.register("slow")
    b_id, b_token = service.register("other")
    m = plain.create_match([a_id, b_id], seed=4, sessions=service.sessions,
                           config=service.config)
    runner, thread = opponent(service.server.address, b_token)
    bot = start_bot(tmp_path, service.server.address, a_token)
    try:
        wait_until_playing(service, m.id, bot)
        bot.send_signal(signal.SIGINT)
        output = bot.communicate(timeout=120)[0]
    finally:
        bot.kill()
        runner.stop()
    assert bot.returncode == 0, output
    assert re.search(rf"finishing 1 running match\(es\) {m.id}, then exiting", output), output
    assert "all running matches finished; exiting" in output
    assert f"match {m.id} ended" in output and "Traceback" not in output
    final = plain.get_match(m.id, sessions=service.sessions)
    assert final.state == "finished" and final.end_reason == "played"


def test_a_second_ctrl_c_leaves_at_once_and_names_the_forfeit(service, tmp_path):
    a_id, a_token = service.register("slow")
    b_id, b_token = service.register("other")
    m = plain.create_match([a_id, b_id], seed=4, sessions=service.sessions,
                           config=service.config)
    runner, thread = opponent(service.server.address, b_token)
    bot = start_bot(tmp_path, service.server.address, a_token)
    try:
        wait_until_playing(service, m.id, bot)
        bot.send_signal(signal.SIGINT)
        time.sleep(0.5)
        bot.send_signal(signal.SIGINT)
        output = bot.communicate(timeout=20)[0]
    finally:
        bot.kill()
    assert bot.returncode == 0, output
    assert re.search(rf"match {m.id} will be forfeited on time (at \d\d:\d\d:\d\d UTC|\d+ s "
                     r"after your next turn)", output), output
    assert "Traceback" not in output
    thread.join(30)  # the opponent's match ends: the bot that left forfeits on time
    runner.stop()
    final = plain.get_match(m.id, sessions=service.sessions)
    assert final.state == "finished" and final.end_reason == "forfeit_timeout", final
    assert final.winner == 1
