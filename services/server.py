"""The gRPC server of the engine service: `create_server()` builds it, `serve()` runs it.

Health checking (grpc.health.v1) and server reflection are on, so `grpcurl -plaintext
localhost:50051 list` works. A referee thread enforces the time control (see services.actions).
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent import futures

import grpc
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from sqlalchemy.orm import Session, sessionmaker

from services import actions, admin_servicer, hooks, limits, status, tls
from services.config import Settings, settings
from services.health import DatabaseHealth
from services.servicers import BotServicer, MatchServicer

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
    ) -> None:
        self.sessions = sessions
        self.config = config or settings()
        # Each Play or WatchMatch stream holds one thread while it is open.
        threads = max_workers or int(os.environ.get("BUMMERL_GRPC_THREADS", "1024"))
        self.grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=threads),
                                interceptors=[limits.RequestGuard()],
                                options=limits.SERVER_OPTIONS)
        match_pb2_grpc.add_MatchServiceServicer_to_server(
            MatchServicer(sessions, self.config), self.grpc)
        bot_pb2_grpc.add_BotServiceServicer_to_server(BotServicer(sessions, self.config),
                                                      self.grpc)
        admin_service = admin_servicer.add_to_server(self.grpc, sessions, self.config)
        self.health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.grpc)
        reflection.enable_server_reflection(
            (MATCH_SERVICE, BOT_SERVICE, admin_service, health.SERVICE_NAME,
             reflection.SERVICE_NAME),
            self.grpc)
        self.tls = tls_files or tls.from_env()  # TLS when given a certificate and key
        self.port = tls.add_port(self.grpc, address, self.tls)
        host = address.rsplit(":", 1)[0]
        self.address = f"{host}:{self.port}"
        self._stop = threading.Event()
        self._referee = threading.Thread(target=self._referee_loop, daemon=True,
                                         name="bummerl-referee")

    def start(self) -> Server:
        """Resume every unfinished match, start serving and refereeing."""
        resumed = actions.resume_all(sessions=self.sessions, config=self.config)
        self.grpc.start()
        self._referee.start()
        # SERVING while the database answers, NOT_SERVING while it does not (services.health)
        DatabaseHealth(self.health, self.sessions, ("", MATCH_SERVICE, BOT_SERVICE),
                       self._stop).start()
        log.info("bummerl service on %s%s (%d running matches resumed)", self.address,
                 " (TLS)" if self.tls else "", resumed)
        return self

    def stop(self, grace: float | None = 0.5) -> None:
        self.health.enter_graceful_shutdown()
        self._stop.set()
        self.grpc.stop(grace).wait()
        if self._referee.is_alive():
            self._referee.join(timeout=2)

    def wait(self) -> None:
        self.grpc.wait_for_termination()

    def _referee_loop(self) -> None:
        while not self._stop.wait(REFEREE_SECONDS):
            try:
                actions.enforce_deadlines(sessions=self.sessions)
            except Exception as e:  # noqa: BLE001  (keep refereeing; the next round retries)
                status.log_failure("referee round", e)


def create_server(
    address: str = DEFAULT_ADDRESS,
    *,
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
    max_workers: int | None = None,
    tls_files: tls.TLSFiles | None = None,
) -> Server:
    """Build the service on `address` without starting it (tests use "127.0.0.1:0"); over TLS
    with `tls_files` (default: BUMMERL_TLS_CERT / BUMMERL_TLS_KEY, see services.tls)."""
    return Server(address, sessions=sessions, config=config, max_workers=max_workers,
                  tls_files=tls_files)


def serve(address: str = DEFAULT_ADDRESS, *, migrate: bool = True) -> None:
    """Run the service until interrupted, on the configured database (DATABASE_URL).

    Applies the migrations first, and installs the post-commit hooks named by `BUMMERL_HOOKS`
    (default "workers.hooks:install", which queues house-bot moves and ratings)."""
    if migrate:
        from db.migrate import upgrade

        upgrade()
    hooks.install(os.environ.get("BUMMERL_HOOKS", "workers.hooks:install"))
    server = create_server(address).start()
    print(f"bummerl service listening on {server.address}", flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        server.stop()
