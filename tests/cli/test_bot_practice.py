"""`bummerl bot test FILE:Class --vs STRATEGY -n N` (issue 11): the bot plays a house bot
locally with the simulation code and gets the same table; its exceptions and illegal actions
are listed with the observation that caused them."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from bots import make_bot
from bots.batch import play_deals
from bots.practice import practise
from bots.stats import summary
from client import Bot

ROOT = Path(__file__).resolve().parents[2]
BUGGY = """
from client import Bot

class Buggy(Bot):
    def __init__(self):
        self.turns = 0

    def act(self, observation):
        self.turns += 1
        if self.turns == 3:
            return 1 / 0
        if self.turns == 5:
            legal = {str(a) for a in observation.legal_actions}
            return next(t for t in ("exchange", "close", "declare H", "declare S")
                        if t not in legal)
        return observation.legal_actions[0]
"""


def bummerl(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


class Bully(Bot):
    """The house bully through the author's interface (it needs no randomness)."""

    def __init__(self) -> None:
        self.house = make_bot("bully")

    def act(self, observation):
        return self.house.choose(observation, random.Random(0))


def test_the_same_statistics_as_a_simulation():
    result, adapter = practise(Bully(), "random", 30, seed=9)
    assert result == summary(play_deals("bully", "random", 9, 0, 30))
    assert adapter.problems == []


def test_a_clean_bot_gets_the_table_and_exit_0():
    done = bummerl("bot", "test", "examples.simple_bot:SimpleBot", "--vs", "house-random",
                   "-n", "10", "--seed", "4", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "10 (20 hands)" in done.stdout and "Elo difference" in done.stdout
    assert "SimpleBot" in done.stdout and "no exceptions, no illegal actions" in done.stdout


def test_exceptions_and_illegal_actions_are_shown_with_their_observation(tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    done = bummerl("bot", "test", f"{tmp_path / 'buggy.py'}:Buggy", "--vs", "random", "-n",
                   "3", "--seed", "1", "--no-progress")
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "1 exception(s) and 1 illegal action(s)" in out
    assert "- exception: ZeroDivisionError: division by zero (at " in out
    assert "buggy.py:11)" in out
    assert "- illegal: " in out and " is not legal now (legal: " in out
    assert out.count("  observation: {") == 2 and '"legal_actions"' in out
    assert "3 (6 hands)" in out


def test_an_unknown_house_bot_is_one_line():
    done = bummerl("bot", "test", "examples.simple_bot:SimpleBot", "--vs", "deepblue")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "unknown house bot 'deepblue': choose one of " in done.stderr
    assert "rdeep" in done.stderr.splitlines()[-1]
