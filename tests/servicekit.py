"""Helpers of the service tests: a fresh database (SQLite file or PostgreSQL schema) and a real
gRPC server on a free loopback port."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import grpc
import pytest
from bummerl.v1 import bot_pb2_grpc, match_pb2_grpc
from sqlalchemy import create_engine, select, text
from sqlalchemy.orm import Session, sessionmaker

from client import Bot, Runner
from db.base import make_engine, make_session_factory
from db.settings import Settings, sha256
from services.api.server import Server, create_server
from services.ops import bots

OPERATOR = "operator-secret"
CONFIG = Settings(operator_token_sha256=sha256(OPERATOR), move_ms=3000, bank_ms=2000,
                  max_illegal=3)


@dataclass
class Database:
    url: str
    schema: str | None = None

    def sessions(self) -> sessionmaker[Session]:
        """A new session factory (a new engine, as a restarted process would have)."""
        if self.schema is None:
            return make_session_factory(self.url)
        engine = make_engine(self.url, connect_args={"options": f"-csearch_path={self.schema}"})
        return sessionmaker(bind=engine, expire_on_commit=False)

    def create_tables(self) -> None:
        import db  # noqa: F401
        from db.base import Base

        Base.metadata.create_all(self.sessions().kw["bind"])


@contextmanager
def fresh_database(kind: str, request: pytest.FixtureRequest, tmp_path) -> Iterator[Database]:  # type: ignore[no-untyped-def]
    if kind == "sqlite":
        yield Database(f"sqlite:///{tmp_path / 'bummerl.sqlite3'}")
        return
    url = request.getfixturevalue("postgres_url")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield Database(url, schema)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@dataclass
class Service:
    database: Database
    sessions: sessionmaker[Session]
    server: Server
    channel: grpc.Channel
    config: Settings

    @property
    def matches(self) -> match_pb2_grpc.MatchServiceStub:
        return match_pb2_grpc.MatchServiceStub(self.channel)

    @property
    def bots(self) -> bot_pb2_grpc.BotServiceStub:
        return bot_pb2_grpc.BotServiceStub(self.channel)

    def register(self, name: str) -> tuple[int, str]:
        bot, token = bots.register_bot(name, sessions=self.sessions)
        assert token is not None
        return bot.id, token

    def restart(self) -> None:
        """Stop the server and start a new one, with a new engine, on the same database."""
        self.channel.close()
        self.server.stop(grace=0)
        self.sessions.kw["bind"].dispose()
        self.sessions = self.database.sessions()
        self.server = create_server("127.0.0.1:0", sessions=self.sessions,
                                    config=self.config).start()
        self.channel = grpc.insecure_channel(self.server.address)

    def close(self) -> None:
        self.channel.close()
        self.server.stop(grace=0)
        self.sessions.kw["bind"].dispose()


@contextmanager
def running_service(database: Database, config: Settings = CONFIG) -> Iterator[Service]:
    database.create_tables()
    sessions = database.sessions()
    server = create_server("127.0.0.1:0", sessions=sessions, config=config).start()
    service = Service(database, sessions, server, grpc.insecure_channel(server.address), config)
    try:
        yield service
    finally:
        service.close()


def auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


def play_in_threads(service: Service, players: list[tuple[Bot, str]], matches: int,
                    timeout: float = 60) -> list[Runner]:
    """Run each (bot, token) with the client kit until it has finished `matches` matches."""
    runners = [Runner(bot, service.server.address, token, max_matches=matches)
               for bot, token in players]
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    for r in runners:
        r.stop()
    assert not any(t.is_alive() for t in threads), "a bot did not finish its matches in time"
    return runners


@contextmanager
def statements_run(bind) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """The SQL statements run on the engine `bind` inside the block (any thread). On PostgreSQL
    they are taken at the driver: the group commit sends its batches on the driver's connection,
    past SQLAlchemy's events (its BEGIN and COMMIT are not statements here)."""
    from sqlalchemy import event

    statements: list[str] = []
    if bind.dialect.name != "postgresql":
        def record(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
            statements.append(statement)

        event.listen(bind, "before_cursor_execute", record)
        try:
            yield statements
        finally:
            event.remove(bind, "before_cursor_execute", record)
        return
    import psycopg

    def where(connection) -> tuple[str | None, str | None]:  # type: ignore[no-untyped-def]
        parameters = connection.info.get_parameters()  # the database, and its schema's option
        return parameters.get("dbname"), parameters.get("options")

    with bind.connect() as connection:
        ours = where(connection.connection.driver_connection)
    real = psycopg.Cursor.execute

    def execute(cursor, query, *args, **kwargs):  # type: ignore[no-untyped-def]
        if where(cursor.connection) == ours:
            statements.append(query if isinstance(query, str) else str(query))
        return real(cursor, query, *args, **kwargs)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield statements
    finally:
        psycopg.Cursor.execute = real  # type: ignore[method-assign]


def held_after(sessions, match_id: int, seat: int, seq: int) -> list[str]:  # type: ignore[no-untyped-def]
    """The cards `seat` held after the match's first `seq` actions, by the engine alone (from
    the row's seed and the action log): what a seat's view may show, and nothing else."""
    import engine
    from db.models import ActionLog, Hand, Match

    with sessions() as s:
        m = s.get(Match, match_id)
        first = s.scalar(select(Hand).where(Hand.match_id == match_id, Hand.number == 0))
        log = list(s.scalars(select(ActionLog).where(ActionLog.match_id == match_id,
                                                     ActionLog.seq < seq)
                             .order_by(ActionLog.seq)))
    game = engine.Match.replay(m.seed, m.profile,
                               [(a.seat, engine.Action.from_text(a.action)) for a in log],
                               first_dealer=first.dealer)
    return sorted(str(c) for c in game.observe(seat).hand)
