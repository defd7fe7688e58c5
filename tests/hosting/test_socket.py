"""The service's unix socket for hosted bots: `create_server(hosted_socket=...)` listens on it
(folder 0755, socket 0666: the containers' uid 10001 may connect), a kit bot given
`--server unix:PATH` plays a whole match through it against a bot on the loopback port, a stale
socket file is replaced and anything else at the path refused; docs/hosted-sandbox.md's
`bummerl serve --hosted-socket` runs as written and answers its health check on the socket;
`bummerl up` puts the socket under its var/ only where podman is installed and the path fits a
unix socket."""

from __future__ import annotations

import os
import shlex
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from bummerl.v1 import match_pb2, match_pb2_grpc
from servicekit import CONFIG, OPERATOR, Database, auth

from cli import up
from client import Runner
from examples.random_bot import RandomBot
from services.api.server import create_server
from services.ops import bots

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "hosted-sandbox.md"


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path (a unix socket's path is at most 107 bytes)."""
    with tempfile.TemporaryDirectory(prefix="bh-", dir="/tmp") as folder:
        yield Path(folder)


def test_a_kit_bot_plays_a_match_over_the_socket(tmp_path: Path, short_dir: Path):
    database = Database(f"sqlite:///{tmp_path / 'bummerl.sqlite3'}")
    database.create_tables()
    sessions = database.sessions()
    path = short_dir / "hosted" / "service.sock"
    server = create_server("127.0.0.1:0", sessions=sessions, config=CONFIG,
                           hosted_socket=path).start()
    channel = grpc.insecure_channel(server.address)
    try:
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o666
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o755
        ids, tokens = zip(*(bots.register_bot(name, sessions=sessions)
                            for name in ("on-socket", "on-port")), strict=True)
        match = match_pb2_grpc.MatchServiceStub(channel).CreateMatch(
            match_pb2.CreateMatchRequest(bot_ids=[b.id for b in ids], seed=7),
            metadata=auth(OPERATOR)).match
        runners = [Runner(RandomBot(seed=1), f"unix:{path}", tokens[0], max_matches=1),
                   Runner(RandomBot(seed=2), server.address, tokens[1], max_matches=1)]
        threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for runner in runners:
            runner.stop()
        done = match_pb2_grpc.MatchServiceStub(channel).GetMatch(
            match_pb2.GetMatchRequest(match_id=match.match_id), metadata=auth(OPERATOR))
        assert done.match.state == match_pb2.MATCH_STATE_FINISHED, done.match
        assert done.match.end_reason == match_pb2.END_REASON_PLAYED, done.match
    finally:
        channel.close()
        server.stop(grace=0)
        sessions.kw["bind"].dispose()
    assert not path.exists()  # removed at the stop


def test_a_stale_socket_is_replaced_and_a_file_refused(tmp_path: Path, short_dir: Path):
    database = Database(f"sqlite:///{tmp_path / 'bummerl.sqlite3'}")
    database.create_tables()
    sessions = database.sessions()
    stale = short_dir / "stale.sock"
    with socket.socket(socket.AF_UNIX) as left:  # a socket file no process listens on
        left.bind(str(stale))
    server = create_server("127.0.0.1:0", sessions=sessions, config=CONFIG,
                           hosted_socket=stale).start()
    server.stop(grace=0)
    (short_dir / "file").write_text("not a socket")
    with pytest.raises(ValueError, match="exists and is not a socket"):
        create_server("127.0.0.1:0", sessions=sessions, config=CONFIG,
                      hosted_socket=short_dir / "file")
    sessions.kw["bind"].dispose()


def doc_block(after: str) -> list[str]:
    text = DOC.read_text().split(after, 1)[1]
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_docs_serve_command_listens_on_the_socket(short_dir: Path):
    serve, check = doc_block("<!-- serve-socket -->")
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{short_dir / 'bummerl.sqlite3'}",
           "BUMMERL_HOOKS": "", "BUMMERL_BUS_URL": "off", "PYTHONPATH": str(ROOT)}
    bummerl = [sys.executable, "-m", "cli.main"]

    def argv(line: str) -> list[str]:
        words = shlex.split(line.replace("127.0.0.1:50051", f"127.0.0.1:{port}"))
        assert words[0] == "bummerl", line
        return bummerl + words[1:]

    with open(short_dir / "serve.log", "wb") as log:
        process = subprocess.Popen(argv(serve), cwd=short_dir, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        done = subprocess.run(argv(check) + ["--wait", "60"], cwd=short_dir, env=env,
                              capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stdout + (short_dir / "serve.log").read_text()
        assert "SERVING" in done.stdout
        path = short_dir / "var" / "hosted" / "service.sock"
        assert stat.S_IMODE(path.stat().st_mode) == 0o666
    finally:
        process.terminate()
        process.wait(30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_up_makes_the_socket_only_with_podman_and_a_short_path(monkeypatch, tmp_path):
    monkeypatch.setattr(up.shutil, "which", lambda name: "/usr/bin/podman")
    assert up.hosted_socket(Path("/tmp/v")) == Path("/tmp/v/hosted/service.sock")
    assert up.hosted_socket(Path("/tmp") / ("v" * 100)) is None
    monkeypatch.setattr(up.shutil, "which", lambda name: None)
    assert up.hosted_socket(Path("/tmp/v")) is None
