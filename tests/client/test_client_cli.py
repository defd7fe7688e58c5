"""The bot author's path, with the real commands: serve, register, create a match, and run two
example bots with one command each until the match ends."""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from client.__main__ import load_bot
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bummerl(*args: str, env: dict[str, str], timeout: float = 60) -> str:
    done = subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_load_bot_by_module_or_file():
    assert isinstance(load_bot("examples.random_bot:RandomBot"), RandomBot)
    assert type(load_bot(str(ROOT / "examples" / "simple_bot.py"))).__name__ == "SimpleBot"
    assert isinstance(load_bot("examples.simple_bot"), SimpleBot)


def test_serve_register_create_and_play_from_the_command_line(tmp_path):
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}",
           "BUMMERL_OPERATOR_TOKEN": "op-token", "BUMMERL_HOOKS": "",
           "BUMMERL_SERVER": address, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--address", address],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        ids, tokens = [], []
        for name in ("cli-random", "cli-simple"):
            out = bummerl("bot", "register", name, env=env)
            ids.append(re.search(r"bot id (\d+)", out).group(1))
            tokens.append(re.search(r"token (\S+)", out).group(1))
        out = bummerl("match", "create", *ids, "--seed", "77", env=env)
        assert re.search(r"match id \d+", out)
        bots = [subprocess.Popen(
            [sys.executable, "-m", "client", spec, "--token", token, "--matches", "1", *more],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for spec, token, more in zip(("examples.random_bot:RandomBot",
                                          "examples.simple_bot:SimpleBot"), tokens,
                                         ([], ["--version", "3.1"]), strict=True)]
        outputs = [b.communicate(timeout=60)[0] for b in bots]
        for bot, output in zip(bots, outputs, strict=True):
            assert bot.returncode == 0, output
        won = [int(re.search(r"won (\d+)", o).group(1)) for o in outputs]
        assert sorted(won) == [0, 1]
        # every line says whose it is, the summary too (issue 29)
        for name, output in zip(("cli-random", "cli-simple"), outputs, strict=True):
            lines = [line for line in output.splitlines() if line.strip()]
            assert lines and all(f"[{name}] " in line for line in lines), output
            assert re.search(rf"^\[{name}\] turns \d+, won \d, lost \d, refused 0$", output,
                             re.MULTILINE), output
        # points and counters from the bot's side: each bot's `you:them` mirrors the other's
        seen = [{(int(m), int(h)): (int(a), int(b)) for m, h, a, b in re.findall(
            r"match (\d+) hand (\d+): hand (?:won|lost), .*, points (\d+):(\d+) \(you:them\)",
            o)} for o in outputs]
        assert seen[0] and seen[0].keys() == seen[1].keys(), outputs
        assert all(seen[1][hand] == (b, a) for hand, (a, b) in seen[0].items()), seen
        assert any(a != b for a, b in seen[0].values()), seen  # a check that could fail
        # the version each said when it connected (--version; none for the other)
        with sqlite3.connect(tmp_path / "cli.sqlite3") as db:
            assert dict(db.execute("SELECT name, version FROM bots")) == {
                "cli-random": None, "cli-simple": "3.1"}
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        time.sleep(0)
