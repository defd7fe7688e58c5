"""Loading the bot's class (issue 44): the kit refuses, at start and in one line, the kit's own
base class and a class without `act`, naming the classes that would do; a bot file that cannot
be loaded (a syntax error, a missing file, class or module, an error while it runs) is one
line naming the file, the line and the error, and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from client.__main__ import load_bot
from client.errors import KitError

ROOT = Path(__file__).resolve().parents[2]
README_BOT = textwrap.dedent("""\
    import random

    from client import Bot


    class MyBot(Bot):
        def act(self, observation):
            return random.choice(observation.legal_actions)


    class Half(Bot):
        def hand_ended(self, match_id, hand_number, result):
            pass
    """)


def kit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BUMMERL_TOKEN": "t"}
    return subprocess.run([sys.executable, "-m", "client", *args, "--server",
                           "127.0.0.1:9"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_kits_base_class_is_refused_naming_the_bot_of_the_file(tmp_path, monkeypatch):
    (tmp_path / "mybot.py").write_text(README_BOT)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KitError) as info:
        load_bot("mybot.py:Bot")
    assert str(info.value) == ("mybot.py:Bot is the kit's abstract base class; did you mean "
                               "mybot.py:MyBot?")
    with pytest.raises(KitError) as info:
        load_bot("mybot.py:Half")
    assert str(info.value) == ("mybot.py:Half does not implement act(self, observation), which "
                               "a bot must; did you mean mybot.py:MyBot?")
    assert type(load_bot("mybot.py:MyBot")).__name__ == "MyBot"
    assert type(load_bot("mybot.py")).__name__ == "MyBot"  # the one that would do


def test_the_command_refuses_the_base_class_in_one_line(tmp_path):
    (tmp_path / "mybot.py").write_text(README_BOT)
    done = kit("mybot.py:Bot", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: mybot.py:Bot is the kit's abstract base class; did you mean mybot.py:MyBot?"]


@pytest.mark.parametrize(("source", "spec", "expected"), [
    ("from client import Bot\n\nclass Bot(Bot)\n    pass\n", "bad.py:Bot",
     "error: cannot load the bot: {path} line 3: SyntaxError: expected ':'"),
    ("import no_such_module_44\n", "bad.py:Bot",
     "error: cannot load the bot: {path} line 1 imports 'no_such_module_44', which is not "
     "installed (or not on the path): install it, or run from the folder that holds it"),
    ("x = 1 / 0\n", "bad.py:Bot",
     "error: cannot load the bot: {path} line 1: ZeroDivisionError: division by zero "
     "(--debug shows the traceback)"),
    ("from client import Bot\n", "missing.py:Bot",
     "error: no such file: missing.py (give FILE.py:Class or module:Class)"),
    (README_BOT, "bad.py:Mybot",
     "error: bad.py has no class 'Mybot' (its bots: MyBot)"),
])
def test_a_bot_that_cannot_be_loaded_is_one_line(tmp_path, source, spec, expected):
    path = tmp_path / "bad.py"
    path.write_text(source)
    done = kit(spec, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [expected.format(path="bad.py")], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_bot_test_refuses_the_base_class_too(tmp_path):
    (tmp_path / "mybot.py").write_text(README_BOT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "cli.main", "bot", "test", "mybot.py:Bot",
                           "-n", "1", "--no-progress"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "mybot.py:Bot is the kit's abstract base class; did you mean mybot.py:MyBot?" \
        in done.stderr
    assert "exception(s)" not in done.stdout
