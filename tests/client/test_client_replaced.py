"""Two processes of one bot version and kind of matches (issue 44): both were sent every turn
and raced, the loser's answers refused as "stale expected_seq" by the dozen with nothing saying
why. Now the newer process takes over (Hello.instance): the older is told why in one line and
exits; the newer plays every turn, with no refusal. Two real kit processes, one real service."""

from __future__ import annotations

import contextlib
import os
import queue
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


@pytest.fixture
def service(tmp_path, request):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


class Kit:
    """`python -m client ...` in a process of its own; its lines, as they come."""

    def __init__(self, server: str, token: str, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "BUMMERL_TOKEN": token}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "client", "examples.random_bot:RandomBot", "--server",
             server, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            found = [line for line in self.lines if text in line]
            if found:
                return found[0]
            assert time.monotonic() < deadline, f"no {text!r} in {self.lines}"
            with contextlib.suppress(queue.Empty):
                self._new.get(timeout=0.2)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.mark.parametrize("mode", [[], ["--challenges-only"], ["--people", "casual"]])
def test_the_newer_process_takes_over_and_the_older_says_why(service, mode):
    bot_id, token = service.register("mybot")
    other_id, other_token = service.register("other")
    older = Kit(service.server.address, token, "--version", "1.0", *mode)
    newer = None
    try:
        older.wait_for("connected to")
        newer = Kit(service.server.address, token, "--version", "1.0", *mode)
        newer.wait_for("connected to")
        assert older.process.wait(timeout=20) == 0  # told why, then it exits
        replaced = [line for line in older.lines if "another process" in line]
        kind = "challenges only" if mode == ["--challenges-only"] else "the ladder"
        people = " and people's casual games" if mode[:1] == ["--people"] else ""
        assert len(replaced) == 1, older.lines
        assert (f"[mybot] mybot@1.0 for {kind}{people} is now connected from another "
                "process (ipv4:127.0.0.1): it plays this bot's turns from now on, and this "
                "connection ends") in replaced[0], replaced
        assert not any("Traceback" in line or "retrying" in line for line in older.lines)
        # the newer plays the bot's matches alone: every turn answered, none refused
        m = plain.create_match([bot_id, other_id], seed=9, sessions=service.sessions,
                               config=service.config)
        opponent = Runner(RandomBot(2), service.server.address, other_token, max_matches=1)
        thread = threading.Thread(target=opponent.run, daemon=True)
        thread.start()
        thread.join(60)
        assert not thread.is_alive()
        newer.wait_for(f"match {m.id} ended")
        assert newer.stop() == 0
        assert not any("refused" in line and "turns" not in line for line in newer.lines), \
            newer.lines
        assert not any("another process" in line for line in newer.lines)
        assert plain.get_match(m.id, sessions=service.sessions).end_reason == "played"
    finally:
        older.stop()
        if newer is not None:
            newer.stop()


def test_other_versions_and_kinds_are_not_replaced(service):
    """A version test's two versions, and a challenges-only process beside a ladder one, each
    keep their connection."""
    _, token = service.register("mybot")
    kits = [Kit(service.server.address, token, *args)
            for args in (["--version", "1.0"], ["--version", "2.0"],
                         ["--version", "1.0", "--challenges-only"])]
    try:
        for kit in kits:
            kit.wait_for("connected to")
        time.sleep(1.0)
        assert all(kit.process.poll() is None for kit in kits)
        assert not any("another process" in line for kit in kits for line in kit.lines)
    finally:
        for kit in kits:
            kit.stop()
