"""What the hosted bots' tests share (tests/hosting; its conftest has the `base` fixture, the
kit's base image): podman (skip, or fail under BUMMERL_REQUIRE_SERVICES=1, where it cannot run)
and a site: the service on a unix socket (and a loopback port) on a fresh SQLite database."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import grpc
import pytest
from bummerl.v1 import bot_pb2, bot_pb2_grpc
from servicekit import CONFIG, Database, auth

from db.models import FINISHED, PLAYED, Match
from db.settings import Settings
from services.api.server import create_server
from services.ops import bots
from workers.testing import wait_until

ROOT = Path(__file__).resolve().parents[1]


def podman_runs() -> None:
    """Skip (fail under BUMMERL_REQUIRE_SERVICES=1) where podman cannot run here."""
    done = subprocess.run(["bash", "scripts/image", "check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    if done.returncode == 0:
        return
    message = f"podman cannot run containers here: {(done.stderr or done.stdout).strip()}"
    if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: this test must run)")
    pytest.skip(message)


class Site:
    """The service on a unix socket (and a loopback port), on a fresh SQLite database."""

    def __init__(self, folder: Path, config: Settings = CONFIG) -> None:
        self.config = config
        self.database = Database(f"sqlite:///{folder / 'bummerl.sqlite3'}")
        self.database.create_tables()
        self.sessions = self.database.sessions()
        self.socket_dir = Path(f"/tmp/bummerl-hosted-{uuid.uuid4().hex[:8]}")
        self.server = create_server("127.0.0.1:0", sessions=self.sessions, config=self.config,
                                    hosted_socket=self.socket_dir / "service.sock").start()
        self.channel = grpc.insecure_channel(self.server.address)

    def restart(self, same_port: bool = False) -> None:
        """Stop the service and start another on the same database and socket path (and the
        same loopback port with `same_port`: bots on the host find it again too)."""
        address = self.server.address if same_port else "127.0.0.1:0"
        self.channel.close()
        self.server.stop(grace=0)
        self.server = create_server(address, sessions=self.sessions, config=self.config,
                                    hosted_socket=self.socket_dir / "service.sock").start()
        self.channel = grpc.insecure_channel(self.server.address)

    def register(self, name: str) -> tuple[int, str]:
        bot, token = bots.register_bot(name, sessions=self.sessions)
        assert token is not None
        return bot.id, token

    def close(self) -> None:
        self.channel.close()
        self.server.stop(grace=0)
        self.sessions.kw["bind"].dispose()
        for leftover in self.socket_dir.glob("*"):
            leftover.unlink()
        self.socket_dir.rmdir()


def challenge(site: Site, token: str, opponent: str) -> int:
    """The bot of `token` challenges `opponent` to one match; its id."""
    reply = bot_pb2_grpc.BotServiceStub(site.channel).Challenge(
        bot_pb2.ChallengeRequest(opponent=opponent, matches=1),
        metadata=auth(token), timeout=30)  # type: ignore[attr-defined]
    return reply.matches[0].match_id


def played_out(site: Site, match_id: int, what: str) -> None:
    """Wait until match `match_id` is over, played to its end with no forfeit."""
    def over() -> Match | None:
        with site.sessions() as s:
            m = s.get(Match, match_id)
            return m if m.state == FINISHED else None
    played = wait_until(over, 120, what=what)
    assert played.end_reason == PLAYED and played.forfeit_seat is None
