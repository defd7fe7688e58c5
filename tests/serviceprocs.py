"""Helpers of the tests that run the engine service as real processes (`bummerl serve`): a
fresh database URL (SQLite file or PostgreSQL database), starting, killing and restarting
server processes, and a raw Play stream."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = "process-operator"
OPERATOR_AUTH = (("authorization", f"Bearer {OPERATOR}"),)


def auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


@contextmanager
def database_url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'bummerl.sqlite3'}"
        return
    from workers.testing import fresh_postgres

    with fresh_postgres(request.getfixturevalue("postgres_url")) as url:
        yield url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServiceProcess:
    """`bummerl serve` on a free port of 127.0.0.1, on the database `url`."""

    def __init__(self, url: str, log: Path, **env: str) -> None:
        self.url = url
        self.log = log
        self.env = {**os.environ, "DATABASE_URL": url, "BUMMERL_OPERATOR_TOKEN": OPERATOR,
                    "BUMMERL_HOOKS": "", "BUMMERL_BUS_URL": "off", "PYTHONPATH": str(ROOT),
                    "BUMMERL_MOVE_MS": "20000", **env}
        self.address = f"127.0.0.1:{free_port()}"
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: grpc.Channel | None = None
        self.start()

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "cli.main", "serve", "--address", self.address],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.channel = grpc.insecure_channel(self.address)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            raise AssertionError(
                f"server did not start: {self.log.read_text()[-3000:]}") from None

    @property
    def bots(self) -> bot_pb2_grpc.BotServiceStub:
        assert self.channel is not None
        return bot_pb2_grpc.BotServiceStub(self.channel)

    @property
    def matches(self) -> match_pb2_grpc.MatchServiceStub:
        assert self.channel is not None
        return match_pb2_grpc.MatchServiceStub(self.channel)

    def register(self, name: str) -> tuple[int, str]:
        reply = self.bots.RegisterBot(bot_pb2.RegisterBotRequest(name=name),
                                      metadata=OPERATOR_AUTH)
        return reply.bot.bot_id, reply.token

    def create_match(self, bot_ids: list[int], seed: int) -> match_pb2.Match:
        return self.matches.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=bot_ids, seed=seed), metadata=OPERATOR_AUTH).match

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        if self.channel is not None:
            self.channel.close()

    def stop(self) -> None:
        if self.channel is not None:
            self.channel.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


class PlayStream:
    """A raw Play stream: responses are queued as they arrive; answers are sent at will."""

    def __init__(self, channel: grpc.Channel, token: str) -> None:
        self.requests: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        self.responses: queue.SimpleQueue[bot_pb2.PlayResponse | grpc.RpcError] = \
            queue.SimpleQueue()
        self.call = bot_pb2_grpc.BotServiceStub(channel).Play(
            iter(self.requests.get, None), metadata=auth(token))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for response in self.call:
                self.responses.put(response)
        except grpc.RpcError as e:
            self.responses.put(e)

    def next(self, kind: str, timeout: float = 10) -> bot_pb2.PlayResponse:
        """The next response of `kind` ("turn", "rejected", ...), skipping others."""
        while True:
            item = self.responses.get(timeout=timeout)
            if isinstance(item, grpc.RpcError):
                raise item
            if item.WhichOneof("message") == kind:
                return item

    def answer(self, match_id: int, seq: int, action: object, request_id: str = "") -> None:
        from bummerl import wire

        self.requests.put(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
            match_id=match_id, seq=seq, action=wire.action_to_pb(action),  # type: ignore[arg-type]
            request_id=request_id)))

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()
