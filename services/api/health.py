"""The service's gRPC health (grpc.health.v1) reflects its real dependency, the database.

A background thread runs `SELECT 1` every `every` seconds (`BUMMERL_HEALTH_EVERY`, default 1)
and sets every served name ("" and the services) to SERVING when it answers, NOT_SERVING when
it does not (so a Kubernetes readiness probe takes a replica that lost its database out of the
Service until it is back). The first check runs before the server reports anything. The name
"liveness" is SERVING as long as the process serves (the liveness probe's: a database outage
must not restart every replica).

The same check opens the database's breaker (`services.core.breaker`) when the ping fails, so
the calls that need the database fail at once with UNAVAILABLE, and the first ping that
succeeds closes it; while it is open the check runs every `breaker.RECHECK_S` (0.5 s).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence

from grpc_health.v1 import health_pb2
from sqlalchemy.orm import Session, sessionmaker

from db.base import ping
from services.core import breaker, failures
from services.core.connections import bound_engine

log = logging.getLogger(__name__)

# Always SERVING while the process runs (until it shuts down): what a liveness probe asks, so a
# lost database takes replicas out of the Service (readiness) without restarting them.
LIVENESS = "liveness"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def database_problem(sessions: sessionmaker[Session] | None) -> str | None:
    """None if the database answers `SELECT 1`, else why not (db.base.ping: bounded, safe)."""
    return ping(bound_engine(sessions))


class DatabaseHealth:
    """Keeps the health status of `names` (set with `set_status(name, status)`) in step with
    the database."""

    def __init__(self, set_status: Callable[[str, int], None],
                 sessions: sessionmaker[Session] | None,
                 names: Sequence[str], stop: threading.Event, every: float | None = None,
                 recover: Callable[[], object] | None = None) -> None:
        self.set_status = set_status
        self.sessions = sessions
        self.names = list(names)
        self.stop = stop
        self.every = every or float(os.environ.get("BUMMERL_HEALTH_EVERY", "1"))
        self.status: int | None = None
        self.breaker = breaker.of_sessions(sessions)
        # Run when the database answers again after an outage, before the breaker closes (the
        # server gives the running matches fresh turn clocks: the outage is not charged).
        self.recover = recover

    def check(self) -> bool:
        """Ping the database; set the health and the breaker (a line in the log for each
        change, none for each failed ping of an outage)."""
        problem = database_problem(self.sessions)
        ok = problem is None
        if ok and self.breaker.is_open:
            breaker.resume(bound_engine(self.sessions))  # the recovery below needs the database
        if ok and self.breaker.is_open and self.recover is not None:
            for attempt in (1, 2):  # the pool's connections from before the outage may be
                try:                # dead: the first failure drops them, the second try is new
                    self.recover()
                    break
                except Exception as e:  # noqa: BLE001  (still out: stay open, retry next check)
                    if attempt == 2 or not failures.unavailable(e):
                        failures.log_failure("recovering from a database outage (retried)", e)
                        return False
        if ok:
            if self.breaker.close():
                log.warning("database breaker closed: the database answers again")
        elif self.breaker.open():
            log.warning("database breaker open (%s): calls that need the database fail at "
                        "once with UNAVAILABLE until it answers again", problem)
        status = SERVING if ok else NOT_SERVING
        if status != self.status and not self.stop.is_set():
            if self.status is not None or not ok:
                log.warning("health: %s", "SERVING (database back)" if ok
                            else f"NOT_SERVING ({problem})")
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
        while not self.stop.wait(min(self.every, breaker.RECHECK_S) if self.breaker.is_open
                                 else self.every):
            self.check()
