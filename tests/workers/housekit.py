"""Helpers of the house-bot tests: the house credential, a service that announces house turns on
the test's own corner of Redis (or broker folder), and the environment that lets a real worker
process submit house moves to it over gRPC."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
from celery import Celery
from servicekit import CONFIG
from sqlalchemy.orm import Session, sessionmaker

from db.settings import Settings, sha256
from services.api.server import Server, create_server
from services.core import hooks

HOUSE_TOKEN = "house-secret"
HOUSE_CONFIG = replace(CONFIG, house_token_sha256=sha256(HOUSE_TOKEN), move_ms=20000,
                       bank_ms=20000)


def announce_on(app: Celery, monkeypatch: pytest.MonkeyPatch) -> None:
    """In this (the service's) process, send house turns (with the seat's strategy and
    observation) and match ends to `app`'s broker, as `workers.hooks` does on the site's
    broker."""

    def on_turn(match_id: int, seat: int, seq: int, turn: hooks.HouseTurn) -> None:
        app.send_task("bummerl.move", (match_id, seat, seq),
                      {"strategy": turn.strategy, "observation": turn.encoded()}, queue="moves")

    def on_match_end(match_id: int) -> None:
        app.send_task("bummerl.rate", (match_id,), queue="moves")

    monkeypatch.setattr(hooks, "on_turn", [on_turn])
    monkeypatch.setattr(hooks, "on_match_end", [on_match_end])


@contextmanager
def house_service(sessions: sessionmaker[Session], config: Settings = HOUSE_CONFIG
                  ) -> Iterator[tuple[Server, dict[str, str]]]:
    """A real gRPC server (in this process, on a loopback port) that knows the house token;
    yields it and the environment a worker needs to reach it."""
    server = create_server("127.0.0.1:0", sessions=sessions, config=config).start()
    try:
        yield server, {"BUMMERL_SERVICE_ADDRESS": server.address,
                       "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN}
    finally:
        server.stop(grace=0)


def create_in_process(monkeypatch: pytest.MonkeyPatch, sessions: sessionmaker[Session]) -> None:
    """The ladder's matches created by the service's plain function on `sessions`, in this
    process (for ladder tests with no server; a worker creates them over gRPC)."""
    from services.core import matches
    from workers import ladder

    def create(bot_ids: tuple[int, int], profile: str) -> int:
        return matches.create_match(bot_ids, profile=profile, ladder=True, sessions=sessions).id

    monkeypatch.setattr(ladder, "create_match", create)
