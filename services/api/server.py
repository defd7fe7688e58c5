"""The gRPC server of the engine service: `create_server()` builds it, `serve()` runs it.

Server model (chosen by measurement; docs/scaling.md has the figures): a `grpc.aio` server on an
asyncio event loop of its own thread. Each Play and WatchMatch stream is a task on that loop (an
idle stream costs a few KB, not a thread); their database work, and the unary calls (plain sync
handlers), run on one bounded thread pool (`Settings.grpc_threads`). Changes are pushed to the
streams (`services.live.notify`, and `services.live.bus` between replicas); hooks run on their own
dispatcher thread (`services.core.dispatch`).

Health checking (grpc.health.v1) and server reflection (grpc.reflection.v1 and v1alpha:
services.api.reflection) are on, so `grpcurl -plaintext localhost:50051 list` works. A referee
thread enforces the time control (see services.core.actions).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
from collections.abc import Coroutine
from concurrent import futures
from pathlib import Path
from typing import Any, TypeVar

import grpc
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health, health_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

from db.settings import Settings, settings
from services.api import (
    admin_servicer,
    hosting_servicer,
    limits,
    people_servicer,
    reflection,
    tls,
    tournament_servicer,
    versiontest_servicer,
)
from services.api.health import DatabaseHealth
from services.api.servicers import BotServicer, MatchServicer, Streams
from services.core import actions, breaker, committers, failures, hooks
from services.core.connections import bound_engine, site_of
from services.live import bus, notify, revocation

T = TypeVar("T")

log = logging.getLogger(__name__)

DEFAULT_ADDRESS = "127.0.0.1:50051"
MATCH_SERVICE = match_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name
BOT_SERVICE = bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name
REFEREE_SECONDS = 0.1


class Server:
    """A built (not yet started) engine service bound to `address` ("host:0" picks a port)."""

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        sessions: sessionmaker[Session] | None = None,
        config: Settings | None = None,
        max_workers: int | None = None,
        tls_files: tls.TLSFiles | None = None,
        hosted_socket: str | Path | None = None,
    ) -> None:
        self.sessions = sessions
        # the unix socket hosted bots reach the service by (hosting.sandbox), if any
        self.hosted_socket = Path(hosted_socket) if hosted_socket else None
        self.config = config or settings()
        self.tls = tls_files or tls.from_env()  # TLS when given a certificate and key
        self.pool = futures.ThreadPoolExecutor(
            max_workers=max_workers or self.config.grpc_threads, thread_name_prefix="bummerl")
        self.loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                             name="bummerl-grpc")
        self._loop_thread.start()
        self.grpc = self._call(self._build(address))
        host = address.rsplit(":", 1)[0]
        self.address = f"{host}:{self.port}"
        self._stop = threading.Event()
        self._referee = threading.Thread(target=self._referee_loop, daemon=True,
                                         name="bummerl-referee")

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the server's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    async def _build(self, address: str) -> grpc.aio.Server:
        size = self.config.max_message_bytes
        server = grpc.aio.server(migration_thread_pool=self.pool,
                                 interceptors=[limits.AsyncRequestGuard()], options=[
            ("grpc.max_receive_message_length", size),
            ("grpc.max_send_message_length", size),
            # request headers (a bot's token is one): larger ones are RESOURCE_EXHAUSTED
            ("grpc.max_metadata_size", 16 * 1024),
            # clients may check a quiet connection with pings every 5 s or more (the socket
            # tier's keepalive finds a dead one that way: web.sockets.upstream)
            ("grpc.http2.min_ping_interval_without_data_ms", 5000),
            *pending_calls_options(self.config.max_pending_calls),
        ])
        streams = Streams(self.pool, self.config)
        match_pb2_grpc.add_MatchServiceServicer_to_server(
            MatchServicer(self.sessions, self.config, streams), server)
        self.bots = BotServicer(self.sessions, self.config, streams)
        bot_pb2_grpc.add_BotServiceServicer_to_server(self.bots, server)
        admin_service = admin_servicer.add_to_server(server, self.sessions, self.config)
        test_service = versiontest_servicer.add_to_server(server, self.sessions, self.config)
        tournament_service = tournament_servicer.add_to_server(server, self.sessions,
                                                               self.config)
        people_service = people_servicer.add_to_server(server, self.sessions, self.config,
                                                       streams)
        hosting_service = hosting_servicer.add_to_server(server, self.sessions, self.config)
        self.health = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable(  # v1 and v1alpha (services.api.reflection)
            (MATCH_SERVICE, BOT_SERVICE, admin_service, test_service, tournament_service,
             people_service, hosting_service, health.SERVICE_NAME), server)
        self.port = tls.add_port(server, address, self.tls)
        if self.hosted_socket is not None:
            tls.add_unix_socket(server, self.hosted_socket)
        return server

    def _set_health(self, name: str, status: int) -> None:
        """Set the health status of `name` (from any thread but the loop's)."""
        self._call(self.health.set(name, status))  # type: ignore[arg-type]

    def start(self) -> Server:
        """Resume every unfinished match, start serving and refereeing."""
        bus.configure(self.config.bus_url)
        change_bus = bus.current()
        if change_bus is not None:
            change_bus.listen(site_of(bound_engine(self.sessions)), notify.deliver,
                              notify.resync)
        resumed = actions.resume_all(sessions=self.sessions, config=self.config)
        self._call(self.grpc.start())
        if self.hosted_socket is not None:
            tls.open_unix_socket(self.hosted_socket)
        self._referee.start()
        # SERVING while the database answers, NOT_SERVING while it does not (services.api.health)
        DatabaseHealth(self._set_health, self.sessions,
                       ("", MATCH_SERVICE, BOT_SERVICE, versiontest_servicer.VERSION_TEST_SERVICE),
                       self._stop, recover=self._after_outage).start()
        log.info("bummerl service on %s%s%s (%d running matches resumed)", self.address,
                 " (TLS)" if self.tls else "",
                 f" and unix:{self.hosted_socket}" if self.hosted_socket else "", resumed)
        return self

    def _after_outage(self) -> None:
        """The database answers again after an outage: every running match gets a fresh turn
        clock, as after a restart (the outage is not charged to the seat to act, whose answers
        were refused meanwhile), and its pending turn is announced again."""
        resumed = actions.resume_all(sessions=self.sessions, config=self.config)
        log.warning("database back: %d running matches got fresh turn clocks", resumed)

    def stop(self, grace: float | None = 0.5) -> None:
        if not self.loop.is_running():
            return
        self._call(self.health.enter_graceful_shutdown())
        self._stop.set()
        self._call(self.grpc.stop(grace))
        if self.hosted_socket is not None:
            self.hosted_socket.unlink(missing_ok=True)
        self._call(committers.close_loop(bound_engine(self.sessions)))  # its batches finished
        revocation.forget(self.sessions)  # streams that did not get to end themselves
        self.bots.presence.stop()
        if self._referee.is_alive():
            self._referee.join(timeout=2)
        self._call(_cancel_tasks())  # what is left ends before its loop does
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._loop_thread.join(timeout=5)
        if not self._loop_thread.is_alive():  # its selector and self-pipe: three descriptors
            self.loop.close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def wait(self) -> None:
        self._call(self.grpc.wait_for_termination())

    def _referee_loop(self) -> None:
        down = breaker.of_sessions(self.sessions)
        while not self._stop.wait(REFEREE_SECONDS):
            if down.is_open:  # the database is known to be unreachable: a round would hang
                continue
            try:
                actions.enforce_deadlines(sessions=self.sessions)
            except Exception as e:  # noqa: BLE001  (keep refereeing; the next round retries)
                failures.log_failure("referee round", e)


async def _cancel_tasks(seconds: float = 2.0) -> None:
    """Cancel the loop's other tasks (streams' helpers, the live players' loop) and wait (at
    most `seconds`) for them to end, so that closing the loop destroys no pending task."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=seconds)


def pending_calls_options(most: int) -> list[tuple[str, int]]:
    """gRPC options for how many calls may wait, arrived but not yet started by the server.

    gRPC's core holds a call that arrived until the server asks for the next one (grpc.aio asks
    one at a time, from the event loop). Past 1,000 waiting it cancels new calls at random, and
    past 3,000 every new one (its defaults): a burst of connects, e.g. every bot of a replica
    that restarted, reads CANCELLED, or INTERNAL ("Internal error from Core") where its Hello
    was still being written, though the server would have welcomed them a moment later (2,000
    Play streams opened at once on a bare grpc.aio server: some 5-9 % of them). Raised to
    `most` (`BUMMERL_MAX_PENDING_CALLS`): a waiting call holds a few KB and a connection."""
    return [("grpc.server.max_pending_requests", most),
            ("grpc.server.max_pending_requests_hard_limit", most)]


def create_server(
    address: str = DEFAULT_ADDRESS,
    *,
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
    max_workers: int | None = None,
    tls_files: tls.TLSFiles | None = None,
    hosted_socket: str | Path | None = None,
) -> Server:
    """Build the service on `address` without starting it (tests use "127.0.0.1:0"); over TLS
    with `tls_files` (default: BUMMERL_TLS_CERT / BUMMERL_TLS_KEY, see services.api.tls); with
    `hosted_socket`, also on that unix socket, in clear text, for sandboxed hosted bots."""
    return Server(address, sessions=sessions, config=config, max_workers=max_workers,
                  tls_files=tls_files, hosted_socket=hosted_socket)


# The garbage collector's thresholds for the server process (Python's default: 700, 10, 10).
# A collection of the young generation every 700 net allocations ran 30-40 times a second under
# load and promoted objects that would have died soon; the full collections that followed
# walked some 200,000 objects and stopped the event loop for 40-75 ms each, every few seconds
# (the bench's p99 is 20-25 ms). With these, young collections run about twice a second (2-3 ms)
# and full ones rarely.
GC_THRESHOLDS = (10_000, 20, 100)


def tune_gc() -> None:
    """Tune the server process's garbage collection for latency (call once it is set up): the
    objects made so far (modules, the contracts, settings) are long-lived, so they are frozen
    out of every later collection (`gc.freeze`), and the thresholds are `GC_THRESHOLDS`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def serve(address: str = DEFAULT_ADDRESS, *, migrate: bool = True,
          hosted_socket: str | Path | None = None) -> None:
    """Run the service until interrupted, on the configured database (DATABASE_URL).

    Applies the migrations first, and installs the post-commit hooks named by `BUMMERL_HOOKS`
    (default "workers.hooks:install", which queues house-bot moves and ratings)."""
    if migrate:
        from db.migrate import upgrade

        upgrade()
    hooks.install(os.environ.get("BUMMERL_HOOKS", "workers.hooks:install"))
    server = create_server(address, hosted_socket=hosted_socket).start()
    tune_gc()
    print(f"bummerl service listening on {server.address}"
          + (f" and unix:{hosted_socket}" if hosted_socket else ""), flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        server.stop()
