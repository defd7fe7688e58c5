"""Prometheus metrics of the engine service (and the plain functions it runs), and serving
them: `start_from_env()` serves /metrics on `BUMMERL_METRICS_PORT` (unset: not served).

| metric | type | what |
|---|---|---|
| `bummerl_actions_applied_total` | counter | actions applied to matches (appended to the log) |
| `bummerl_action_seconds` | histogram | time to handle one submitted action (applied or refused) |
| `bummerl_commit_seconds` | histogram | one group commit: its batch sent until all are answered |
| `bummerl_commit_actions` | histogram | actions per group commit |
| `bummerl_illegal_actions_total` | counter | actions refused as illegal by the rules |
| `bummerl_turns_pushed_total` | counter | turns sent to bots on Play streams |
| `bummerl_matches_finished_total{reason}` | counter | matches this process ended, by end reason |
| `bummerl_forfeits_total{reason}` | counter | forfeits (`forfeit_timeout`, `forfeit_illegal`) |
| `bummerl_play_streams` | gauge | Play streams open on this process |
| `bummerl_connected_bots` | gauge | distinct bots with a Play stream open on this process |
| `bummerl_matches_running` | gauge | running matches in the database (read at scrape time) |

Counters and gauges are per process: sum them over the replicas (except
`bummerl_matches_running`, the same on every replica: aggregate it with max).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

ACTIONS_APPLIED = Counter("bummerl_actions_applied_total", "Actions applied to matches")
ACTION_SECONDS = Histogram(
    "bummerl_action_seconds", "Time to handle one submitted action (applied or refused)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
COMMIT_SECONDS = Histogram(
    "bummerl_commit_seconds", "Time of one group commit: a batch of actions sent to the "
    "database until each has its answer",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
COMMIT_ACTIONS = Histogram("bummerl_commit_actions", "Actions per group commit",
                           buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500))
ILLEGAL_ACTIONS = Counter("bummerl_illegal_actions_total", "Actions refused as illegal")
TURNS_PUSHED = Counter("bummerl_turns_pushed_total", "Turns sent to bots on Play streams")
MATCHES_FINISHED = Counter("bummerl_matches_finished_total",
                           "Matches ended by this process, by end reason", ["reason"])
FORFEITS = Counter("bummerl_forfeits_total", "Forfeited matches, by reason", ["reason"])
PLAY_STREAMS = Gauge("bummerl_play_streams", "Play streams open on this process")
CONNECTED_BOTS = Gauge("bummerl_connected_bots",
                       "Distinct bots with a Play stream open on this process")
BUS_RECEIVED = Counter("bummerl_bus_received_total",
                       "Changes of other processes heard on the change bus")
BUS_CHANNELS = Gauge("bummerl_bus_channels", "Change-bus channels this process listens to")


def action_seconds(started: float) -> None:
    """Record the time since `started` (time.perf_counter()) as one action's latency."""
    ACTION_SECONDS.observe(time.perf_counter() - started)


def committed(actions: int, started: float) -> None:
    """Record one group commit of `actions` actions begun at `started` (time.perf_counter())."""
    COMMIT_SECONDS.observe(time.perf_counter() - started)
    COMMIT_ACTIONS.observe(actions)


def match_ended(reason: str | None) -> None:
    MATCHES_FINISHED.labels(reason or "unknown").inc()


class RunningMatches(Collector):
    """`bummerl_matches_running`: a COUNT in the database at scrape time."""

    def __init__(self, sessions: Callable[[], Any] | None = None) -> None:
        self.sessions = sessions

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from sqlalchemy import func, select

        from db.models import RUNNING, Match
        from services.core.connections import factory_of

        family = GaugeMetricFamily("bummerl_matches_running", "Running matches (database)")
        try:
            with factory_of(self.sessions)() as s:  # type: ignore[arg-type]
                family.add_metric([], s.scalar(
                    select(func.count(Match.id)).where(Match.state == RUNNING)) or 0)
        except Exception:  # noqa: BLE001  (a scrape must not fail on the database)
            log.warning("bummerl_matches_running: database not readable", exc_info=True)
            return
        yield family


def metrics_port() -> int | None:
    value = os.environ.get("BUMMERL_METRICS_PORT") or None
    if value is None:
        return None
    try:
        port = int(value)
    except ValueError:
        raise ValueError(f"BUMMERL_METRICS_PORT must be a port number, not {value!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"BUMMERL_METRICS_PORT must be 0-65535, not {port}")
    return port


def serve(port: int, registry: CollectorRegistry = REGISTRY, addr: str = "0.0.0.0") -> int:
    """Serve `registry` as /metrics on `port` (0: any free port) in a daemon thread; the port."""
    from prometheus_client import start_http_server

    server, _ = start_http_server(port, addr=addr, registry=registry)
    return int(server.server_port)


_running: RunningMatches | None = None


def start_from_env(with_database: bool = True, addr: str = "0.0.0.0") -> int | None:
    """Serve this process's metrics on BUMMERL_METRICS_PORT if set (the service also reports
    `bummerl_matches_running` from the configured database); the port, or None."""
    global _running
    port = metrics_port()
    if port is None:
        return None
    if with_database and _running is None:
        _running = RunningMatches()
        REGISTRY.register(_running)
    port = serve(port, addr=addr)
    log.info("metrics on :%d/metrics", port)
    return port
