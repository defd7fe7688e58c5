"""The shared database: declarative base, engine and session factory.

The database URL comes from `DATABASE_URL`; without it an SQLite file under the site's folder of
local state is used (created on first use): `BUMMERL_VAR`, default `var/` in the project
directory (`var_dir`). PostgreSQL works with e.g.
`postgresql+psycopg://user@host:5432/bummerl`.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import overload

from sqlalchemy import Engine, MetaData, create_engine, event, make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import Pool

from db.waits import Released, Waits, exempt

try:
    import psycopg
except ImportError:  # pragma: no cover  (SQLite only)
    psycopg = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent

# Stable constraint names, so that Alembic migrations work the same on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of every table of bummerl."""

    metadata = MetaData(naming_convention=NAMING)


def var_dir() -> Path:
    """The folder of a site's local state on this machine: the embedded database, broker and
    beat schedule, the workers' heartbeat files, `bummerl up`'s logs. `BUMMERL_VAR` if set
    (the test suite sets a temporary folder), else `var/` in the project directory."""
    return Path(os.environ.get("BUMMERL_VAR") or ROOT / "var")


def database_url() -> str:
    """The configured database URL (`DATABASE_URL`, else the SQLite file under `var_dir()`)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    folder = var_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'bummerl.sqlite3'}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: no fsync per commit; a crash of the process loses nothing, a power cut may
    # lose the last commits but never corrupts the file.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


@dataclass(frozen=True)
class DbTimeouts:
    """Bounds on every wait for PostgreSQL, so that an unreachable, refusing or black-holed
    database gives an error in seconds instead of a hang (SQLite is unaffected). Each comes from
    the environment (`BUMMERL_DB_<NAME>`, e.g. `BUMMERL_DB_CONNECT_S=5`); 0 means no bound."""

    connect_s: int = 5  # opening a connection (libpq connect_timeout)
    statement_ms: int = 10_000  # one statement, in the server (statement_timeout)
    answer_s: float = 12.0  # any wait for the server's answer, in the client (see below)
    pool_s: float = 10.0  # waiting for a free pooled connection
    keepalive_s: int = 10  # TCP keepalives: first probe after this idle time, then every 5 s

    @staticmethod
    def from_env() -> DbTimeouts:
        values = {}
        for name, kind in (("connect_s", int), ("statement_ms", int), ("answer_s", float),
                           ("pool_s", float), ("keepalive_s", int)):
            text = os.environ.get(f"BUMMERL_DB_{name.upper()}")
            if text:
                values[name] = kind(text)
        return DbTimeouts(**values)  # type: ignore[arg-type]

    def connect_args(self) -> dict[str, object]:
        """psycopg (libpq) connection parameters."""
        args: dict[str, object] = {}
        if self.connect_s:
            args["connect_timeout"] = self.connect_s
        if self.keepalive_s:
            args.update(keepalives=1, keepalives_idle=self.keepalive_s, keepalives_interval=5,
                        keepalives_count=3)
        if self.answer_s:  # unacknowledged data on a dead network: the kernel gives up too
            args["tcp_user_timeout"] = int(self.answer_s * 1000)
        if self.statement_ms:
            args["options"] = f"-c statement_timeout={self.statement_ms}"
        return args


MIGRATION_TIMEOUTS = replace(DbTimeouts.from_env(), statement_ms=0, answer_s=0)


class AnswerTimeout(psycopg.OperationalError if psycopg else Exception):  # type: ignore[misc]
    """The database did not answer within `DbTimeouts.answer_s` (the connection is closed)."""


if psycopg is not None:

    class BoundedConnection(psycopg.Connection):  # type: ignore[type-arg]
        """A psycopg connection whose every wait for the server ends after `answer_s`.

        The server's statement_timeout cannot help when the server never sees the statement
        (packets dropped, a proxy or a stopped server holding the connection open): without
        this bound a call would wait for TCP to give up, which may be never. LISTEN/NOTIFY
        waits (`notifies`) are not bounded."""

        answer_s: float = 0.0
        waits: Waits | None = None  # the engine's (db.waits): released when its breaker opens

        @classmethod
        def _connect_gen(cls, conninfo: str = ""):  # type: ignore[no-untyped-def,override]
            gen = super()._connect_gen(conninfo)
            return gen if cls.waits is None else cls.waits.connecting(gen)

        def wait(self, gen, interval=0.1, timeout=None):  # type: ignore[no-untyped-def]
            if getattr(gen, "__name__", "") == "notifies" or self.waits is None:
                return self._bounded_wait(gen, interval, timeout)
            with self.waits.waiting(self.pgconn.socket) as allowed:
                if not allowed:  # the service knows the database is down: refused at once
                    gen.close()
                    self.pgconn.finish()
                    raise Released
                return self._bounded_wait(gen, interval, timeout)

        def _bounded_wait(self, gen, interval, timeout):  # type: ignore[no-untyped-def]
            if timeout is not None or not self.answer_s or \
                    getattr(gen, "__name__", "") == "notifies":
                return super().wait(gen, interval=interval, timeout=timeout)
            try:
                return super().wait(gen, interval=interval, timeout=self.answer_s)
            except psycopg.errors._WaitTimeout:  # (documented by Connection.wait)
                self.pgconn.finish()  # its state is unknown: never use it again
                raise AnswerTimeout(
                    f"the database did not answer within {self.answer_s:g} s") from None


def _bounded_connect(answer_s: float, waits: Waits):  # type: ignore[no-untyped-def]
    kind: type[BoundedConnection] = type(
        "BoundedConnection", (BoundedConnection,), {"answer_s": answer_s, "waits": waits})

    def connect(_dialect, _record, cargs, cparams):  # type: ignore[no-untyped-def]
        return kind.connect(*cargs, **cparams)

    return connect


def _timeout_is_disconnect(context) -> None:  # type: ignore[no-untyped-def]
    """An answer time-out closed the connection: SQLAlchemy drops it (and the pool's older
    connections, which are likely as dead) instead of handing it out again."""
    if isinstance(context.original_exception, AnswerTimeout | Released):
        context.is_disconnect = True


def make_engine(url: str | None = None, *, timeouts: DbTimeouts | None = None,
                connect_args: dict[str, object] | None = None) -> Engine:
    """A new SQLAlchemy engine for `url` (default: `database_url()`); on PostgreSQL with
    `timeouts` (default: `DbTimeouts.from_env()`) and any extra psycopg `connect_args` (an
    `options` string, the URL's or given here, is added to the timeouts' one)."""
    url = url or database_url()
    # The gRPC server runs its streams' database work on a pool of threads: under load more than
    # 10 connections are often in use at once, and each one over `pool_size` is opened (and, for
    # SQLite, set up with the pragmas) and closed again per use.
    pool = {"pool_size": 30, "max_overflow": 20}
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 10}, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    timeouts = timeouts or DbTimeouts.from_env()
    args = timeouts.connect_args()
    # The URL's own `options` (e.g. `?options=-csearch_path%3Dladder`) come after the timeouts'
    # (a later -c wins), instead of being replaced by them.
    given = make_url(url).query.get("options")
    extra = [("options", " ".join(given) if isinstance(given, tuple) else given)] if given else []
    for key, value in [*extra, *(connect_args or {}).items()]:
        args[key] = f"{args[key]} {value}" if key == "options" and key in args else value
    engine = create_engine(url, connect_args=args, pool_timeout=timeouts.pool_s or None, **pool)
    _check_idle_connections(engine)
    if psycopg is not None and engine.dialect.driver == "psycopg":
        waits = _waits[engine] = Waits()
        event.listen(engine, "do_connect", _bounded_connect(timeouts.answer_s, waits))
        event.listen(engine, "handle_error", _timeout_is_disconnect)
    return engine


_waits: weakref.WeakKeyDictionary[Engine, Waits] = weakref.WeakKeyDictionary()


def waits_of(engine: Engine) -> Waits | None:
    """The waits of `engine`'s connections (db.waits), None for SQLite or another driver."""
    return _waits.get(engine)


def driver_params(engine: Engine) -> tuple[dict[str, str], float]:
    """The libpq parameters of `engine`'s PostgreSQL connections (host, database, user and
    password, and the timeouts of `DbTimeouts`) and their answer bound in seconds (0: none),
    read off a pooled connection: for a connection of the driver's own (an asyncio one)."""
    with engine.connect() as connection:
        driver = connection.connection.driver_connection
        assert driver is not None
        params = dict(driver.info.get_parameters())
        password = driver.info.password
        answer_s = float(getattr(driver, "answer_s", 0.0))
    if password:
        params["password"] = password
    return params, answer_s


# A pooled connection used within this many seconds is handed out without a round trip.
IDLE_CHECK_S = 1.0


def _check_idle_connections(engine: Engine) -> None:
    """Liveness of pooled connections without a round trip per checkout (the pool's pre-ping
    was a tenth of the service's time): a connection the driver knows to be closed is replaced
    at once, and one idle for more than `IDLE_CHECK_S` is pinged first (a server restart or a
    network cut while it sat in the pool). A busy connection that died meanwhile fails its
    statement: SQLAlchemy sees the disconnect and drops it and the pool's older connections
    (`_timeout_is_disconnect` adds the answer time-out to those), so one failed call, and the
    next ones get fresh connections; TCP keepalives find connections dead on the network."""
    from sqlalchemy import exc

    @event.listens_for(engine, "checkin")
    def checked_in(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
        record.info["used"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def checked_out(dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
        if getattr(dbapi_connection, "closed", False):
            raise exc.DisconnectionError("the connection is closed")
        if time.monotonic() - record.info.get("used", 0.0) <= IDLE_CHECK_S:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as e:  # noqa: BLE001  (any failure: the pool connects afresh)
            raise exc.DisconnectionError(f"the idle connection failed its ping: {e!r}") from e


_pings: dict[int, Future[None]] = {}
_pinger = ThreadPoolExecutor(max_workers=2, thread_name_prefix="db-ping")
_pings_lock = threading.Lock()
_ping_pools: weakref.WeakKeyDictionary[Engine, Pool] = weakref.WeakKeyDictionary()


def _ping_pool(engine: Engine) -> Pool:
    """A pool of `engine`'s kind of connections (the same parameters and set-up) that only the
    ping uses: an engine whose every pooled connection is busy is not an unreachable database.
    Disposed with the engine's own."""
    with _pings_lock:
        pool = _ping_pools.get(engine)
        if pool is None:
            pool = _ping_pools[engine] = engine.pool.recreate()
            event.listen(engine, "engine_disposed", _dispose_ping_pool)
    return pool


def _dispose_ping_pool(engine: Engine) -> None:
    with _pings_lock:
        pool = _ping_pools.pop(engine, None)
    if pool is not None:
        pool.dispose()


def _select_one(engine: Engine) -> None:
    with exempt():  # the ping goes on while the engine's other waits are released
        _select_one_exempt(engine)


def _select_one_exempt(engine: Engine) -> None:
    connection = _ping_pool(engine).connect()
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT 1")
        cursor.fetchall()
        cursor.close()
    except BaseException:
        connection.invalidate()  # its state is unknown: the next ping connects afresh
        raise
    finally:
        connection.close()


def ping(engine: Engine, timeout: float = 2.0) -> str | None:
    """None if the database answers `SELECT 1` within `timeout` seconds, else a short reason
    safe to show (no host, port or driver text). At most one ping per engine is in flight: a
    caller during a hang waits on the same one (health checks cannot pile up threads). It runs
    on a connection of its own (`_ping_pool`), never waiting for a busy engine's pool."""
    with _pings_lock:
        future = _pings.get(id(engine))
        if future is None or future.done():
            future = _pings[id(engine)] = _pinger.submit(_select_one, engine)
    try:
        future.result(timeout)
    except FutureTimeout:
        return f"the database did not answer within {timeout:g} s"
    except Exception:  # noqa: BLE001  (the reason is what the caller shows)
        return "the database is unreachable"
    return None


def make_session_factory(url: str | None = None) -> sessionmaker[Session]:
    """A session factory bound to a new engine for `url` (default: `database_url()`)."""
    return sessionmaker(bind=make_engine(url), expire_on_commit=False)


@cache
def session_factory() -> sessionmaker[Session]:
    """The process-wide session factory for the configured database (created once)."""
    return make_session_factory()


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # what protobuf timestamps and the batches count from


def utcnow() -> datetime:
    """Now, as an aware UTC datetime (the default of every timestamp column)."""
    return datetime.now(UTC)


@overload
def aware(moment: datetime) -> datetime: ...
@overload
def aware(moment: None) -> None: ...
def aware(moment: datetime | None) -> datetime | None:
    """`moment` as an aware UTC datetime: SQLite gives naive ones back, and they are UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)
