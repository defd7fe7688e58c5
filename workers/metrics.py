"""Prometheus metrics of the Celery workers, served by the worker's main process on
`BUMMERL_METRICS_PORT` (unset: not served).

| metric | type | what |
|---|---|---|
| `bummerl_task_seconds{task}` | histogram | run time of each task |
| `bummerl_task_failures_total{task}` | counter | tasks that raised |
| `bummerl_queue_depth{queue}` | gauge | messages waiting in `moves` / `batch` (LLEN at scrape) |
| `bummerl_simulation_deals_total` | counter | simulation deals played (deals/s: `rate()` of it) |
| `bummerl_simulation_deals_per_second` | gauge | deals/s of the last simulation chunk played |

Tasks run in the pool's child processes, so the counts go through prometheus-client's
multiprocess mode: `PROMETHEUS_MULTIPROC_DIR` names a writable folder (the manifests set it to
/tmp/metrics on the emptyDir /tmp: it is made here when missing, as prometheus-client does not;
when only `BUMMERL_METRICS_PORT` is set, a temporary folder is made). That variable is read
when prometheus-client is imported, so this module is imported first by `workers.app` (and never
imports it).
"""

from __future__ import annotations

import os
import tempfile

if os.environ.get("BUMMERL_METRICS_PORT") and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="bummerl-metrics-")
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

import logging  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

from celery import signals  # noqa: E402
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram  # noqa: E402
from prometheus_client.core import GaugeMetricFamily  # noqa: E402
from prometheus_client.registry import Collector  # noqa: E402

from workers.broker import broker_url  # noqa: E402

log = logging.getLogger(__name__)

TASK_SECONDS = Histogram(
    "bummerl_task_seconds", "Run time of each Celery task", ["task"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900))
TASK_FAILURES = Counter("bummerl_task_failures_total", "Celery tasks that raised", ["task"])
DEALS = Counter("bummerl_simulation_deals_total", "Simulation deals played")
DEALS_PER_SECOND = Gauge("bummerl_simulation_deals_per_second",
                         "Deals per second of the last simulation chunk played",
                         multiprocess_mode="mostrecent")

_started: dict[str, float] = {}


@signals.task_prerun.connect
def _task_started(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        _started[task_id] = time.perf_counter()


@signals.task_postrun.connect
def _task_ended(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    started = _started.pop(task_id or "", None)
    if started is not None:
        TASK_SECONDS.labels(getattr(task, "name", "unknown")).observe(
            time.perf_counter() - started)


@signals.task_failure.connect
def _task_failed(sender: Any = None, **_: Any) -> None:
    TASK_FAILURES.labels(getattr(sender, "name", "unknown")).inc()


def deals_played(count: int, seconds: float) -> None:
    """Record a simulation chunk of `count` deals that took `seconds`."""
    DEALS.inc(count)
    if seconds > 0:
        DEALS_PER_SECOND.set(count / seconds)


class QueueDepth(Collector):
    """`bummerl_queue_depth{queue}`: LLEN of each queue's Redis list at scrape time."""

    def __init__(self, url: str, prefix: str = "", queues: tuple[str, ...] = ("moves", "batch")
                 ) -> None:
        self.url, self.prefix, self.queues = url, prefix, queues

    def collect(self) -> Iterator[GaugeMetricFamily]:
        import redis

        family = GaugeMetricFamily("bummerl_queue_depth", "Messages waiting in a queue",
                                   labels=["queue"])
        try:
            client = redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)
            try:
                for queue in self.queues:
                    family.add_metric([queue], client.llen(self.prefix + queue))
            finally:
                client.close()
        except Exception:  # noqa: BLE001  (a scrape must not fail on Redis)
            log.warning("bummerl_queue_depth: Redis not readable", exc_info=True)
            return
        yield family


def registry() -> CollectorRegistry:
    """The registry the main process serves: every pool process's values, and queue depths."""
    from prometheus_client import multiprocess

    reg = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(reg)
    url = broker_url()
    if url.startswith("redis"):
        reg.register(QueueDepth(url, os.environ.get("BUMMERL_BROKER_PREFIX", "")))
    return reg


@signals.worker_init.connect
def _serve(**_: Any) -> None:
    """In the worker's main process: serve /metrics on BUMMERL_METRICS_PORT, if set."""
    from services.core.metrics import metrics_port, serve

    port = metrics_port()
    if port is None:
        return
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:  # the values of a previous run of this container are stale
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.endswith(".db"):
                os.unlink(os.path.join(folder, name))
    log.info("worker metrics on :%d/metrics", serve(port, registry()))
