"""Helpers of the people tests: a real service (in this process, on a loopback port) that knows
the web and house tokens, whose house turns are played by the workers' own code
(`workers.moves.play_house_move`, over gRPC, on a thread per turn), and a PeopleService stub."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import grpc
import pytest
from bummerl.v1 import people_pb2, people_pb2_grpc
from servicekit import CONFIG, Database, Service, auth, running_service
from sqlalchemy.orm import Session, sessionmaker

from db.models import HOUSE
from db.settings import sha256
from services.core import hooks
from services.ops import bots
from workers import moves, people, tasks
from workers import service as service_module

WEB_TOKEN = "web-secret"
HOUSE_TOKEN = "house-secret"
PEOPLE_CONFIG = replace(CONFIG, house_token_sha256=sha256(HOUSE_TOKEN),
                        web_token_sha256=sha256(WEB_TOKEN), move_ms=20000, bank_ms=20000)
WEB = auth(WEB_TOKEN)


@dataclass
class People:
    service: Service
    stub: people_pb2_grpc.PeopleServiceStub

    def guest(self, name: str) -> people_pb2.Person:
        return self.stub.StartGuest(people_pb2.StartGuestRequest(name=name), metadata=WEB).person

    def register(self, name: str, password: str = "correct horse") -> people_pb2.Person:
        return self.stub.RegisterPerson(people_pb2.RegisterPersonRequest(
            name=name, password=password), metadata=WEB).person

    def table(self, person_id: int, match_id: int) -> people_pb2.Table:
        return self.stub.GetTable(people_pb2.GetTableRequest(
            person_id=person_id, match_id=match_id), metadata=WEB).table

    def act(self, person_id: int, table: people_pb2.Table, action: str,
            request_id: str = "") -> people_pb2.ActResponse:
        return self.stub.Act(people_pb2.ActRequest(
            person_id=person_id, match_id=table.match.match_id, expected_seq=table.seq,
            action=action, request_id=request_id or f"t{table.seq}"), metadata=WEB)

    def my_turn(self, person_id: int, match_id: int, timeout: float = 30.0) -> people_pb2.Table:
        """The table once it is the person's turn or the match is over."""
        end = time.monotonic() + timeout
        while True:
            table = self.table(person_id, match_id)
            if table.on_clock in (-1, table.seat) or time.monotonic() > end:
                return table
            time.sleep(0.02)


def house_bot(sessions, name: str = "house-random", strategy: str = "random") -> int:  # type: ignore[no-untyped-def]
    bot, _ = bots.register_bot(name, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    return bot.id


def play_house_turns(monkeypatch: pytest.MonkeyPatch, address: str,
                     sessions: sessionmaker[Session]) -> list[threading.Thread]:
    """House turns of this process's service are played by the workers' code on threads, and
    its finished games rated in the people's pool (`workers.people`) as the rate task does, on
    threads too: the list they are added to, for `join_all` before the database goes."""
    started: list[threading.Thread] = []

    def on_turn(match_id: int, seat: int, seq: int, turn: hooks.HouseTurn) -> None:
        args, kwargs, _ = tasks.move_message(match_id, seat, seq, strategy=turn.strategy,
                                             observation=turn.encoded(),
                                             person=turn.opponent_person)
        thread = threading.Thread(target=moves.play_house_move, args=args, kwargs=kwargs,
                                  daemon=True, name=f"move-{match_id}")
        thread.start()
        started.append(thread)  # once started: `join_all` may run meanwhile

    def on_match_end(match_id: int) -> None:  # the `bummerl.rate` task's people part
        thread = threading.Thread(target=people.rate_people_match, args=(match_id, sessions),
                                  daemon=True, name=f"rate-{match_id}")
        thread.start()
        started.append(thread)

    monkeypatch.setattr(hooks, "on_turn", [on_turn])
    monkeypatch.setattr(hooks, "on_match_end", [on_match_end])
    monkeypatch.setenv("BUMMERL_HOUSE_MIN_THINK_MS", "0")  # a test that wants it sets it
    monkeypatch.setenv("BUMMERL_SERVICE_ADDRESS", address)
    monkeypatch.setenv("BUMMERL_HOUSE_TOKEN", HOUSE_TOKEN)
    monkeypatch.setattr(service_module, "_service", None)
    return started


def join_all(threads: list[threading.Thread], timeout: float = 60.0) -> None:
    """Wait for `threads` (and any they add meanwhile) to end: a rating still writing when the
    test's schema is dropped deadlocks with the drop (issue 44)."""
    end = time.monotonic() + timeout
    while threads:
        thread = threads.pop(0)
        thread.join(max(0.0, end - time.monotonic()))
        assert not thread.is_alive(), f"thread {thread.name} did not end in {timeout:.0f} s"


@contextmanager
def people_service(database: Database, monkeypatch: pytest.MonkeyPatch) -> Iterator[People]:
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    threads: list[threading.Thread] = []
    try:
        with running_service(database, PEOPLE_CONFIG) as svc:
            threads = play_house_turns(monkeypatch, svc.server.address, svc.sessions)
            try:
                yield People(svc, people_pb2_grpc.PeopleServiceStub(svc.channel))
            finally:  # the house's moves and the ratings end while the service runs
                join_all(threads)
    finally:  # and those its last hooks started (a game that ended last), before the database
        join_all(threads)  # goes


def code_of(call) -> grpc.StatusCode:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value.code()
