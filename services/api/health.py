"""The service's gRPC health (grpc.health.v1) reflects its real dependency, the database.

A background thread runs `SELECT 1` every `every` seconds (`BUMMERL_HEALTH_EVERY`, default 5)
and sets every served name ("" and the services) to SERVING when it answers, NOT_SERVING when
it does not (so a Kubernetes readiness probe takes a replica that lost its database out of the
Service until it is back). The first check runs before the server reports anything. The name
"liveness" is SERVING as long as the process serves (the liveness probe's: a database outage
must not restart every replica).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence

from grpc_health.v1 import health_pb2
from sqlalchemy.orm import Session, sessionmaker

from db.base import ping
from services.core.connections import bound_engine

log = logging.getLogger(__name__)

# Always SERVING while the process runs (until it shuts down): what a liveness probe asks, so a
# lost database takes replicas out of the Service (readiness) without restarting them.
LIVENESS = "liveness"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def database_ok(sessions: sessionmaker[Session] | None) -> bool:
    """Whether the database answers `SELECT 1` (db.base.ping: bounded, safe reason)."""
    problem = ping(bound_engine(sessions))
    if problem:
        log.warning("health: %s", problem)
    return problem is None


class DatabaseHealth:
    """Keeps the health status of `names` (set with `set_status(name, status)`) in step with
    the database."""

    def __init__(self, set_status: Callable[[str, int], None],
                 sessions: sessionmaker[Session] | None,
                 names: Sequence[str], stop: threading.Event, every: float | None = None
                 ) -> None:
        self.set_status = set_status
        self.sessions = sessions
        self.names = list(names)
        self.stop = stop
        self.every = every or float(os.environ.get("BUMMERL_HEALTH_EVERY", "5"))
        self.status: int | None = None

    def check(self) -> bool:
        ok = database_ok(self.sessions)
        status = SERVING if ok else NOT_SERVING
        if status != self.status and not self.stop.is_set():
            if self.status is not None:
                log.warning("health: %s", "SERVING (database back)" if ok else "NOT_SERVING")
            self.status = status
            for name in self.names:
                self.set_status(name, status)
        return ok

    def start(self) -> DatabaseHealth:
        self.set_status(LIVENESS, SERVING)
        self.check()
        threading.Thread(target=self._run, daemon=True, name="bummerl-health").start()
        return self

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self.check()
