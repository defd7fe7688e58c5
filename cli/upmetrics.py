"""The Prometheus metrics of `bummerl up`: one /metrics for the whole site on one machine.

`bummerl up` runs the engine service and the dashboard in its own process and the workers as
subprocesses, so one port serves what the separate processes serve on theirs
(`BUMMERL_METRICS_PORT`): the service's (`services/core/metrics.py`, with
`bummerl_matches_running`), the dashboard's (`web/metrics.py`) and the workers'
(`workers/metrics.py`: their pool processes write them to a folder this process reads, through
prometheus-client's multiprocess mode; with a Redis broker, the queues' depths too).

The workers are started without `BUMMERL_METRICS_PORT` (each would serve it) and with
`PROMETHEUS_MULTIPROC_DIR` set to the folder (`worker_env()`); this process never sets that
variable in its own environment, so its own metrics stay in memory.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.registry import Collector

DEFAULT_PORT = 9100  # the manifests' metrics port (README, "Metrics and health")


def metrics_of(module: Any) -> list[Any]:
    """The metrics (counters, gauges, histograms...) `module` defines."""
    from prometheus_client.metrics import MetricWrapperBase

    return [value for value in vars(module).values() if isinstance(value, MetricWrapperBase)]


def names_of(metrics: list[Any]) -> set[str]:
    return {family.name for metric in metrics for family in metric.describe()}


class SiteMetrics(Collector):
    """This process's metrics (the service's, and the dashboard's whichever registry
    `web/metrics.py` keeps them in) and the workers' own (read from `folder`). The workers'
    families are taken from the workers only (this process imports `workers.metrics` too,
    with nothing counted), and only those: the other modules a worker imports leave their
    zeros there."""

    def __init__(self, folder: str, queues: Collector | None = None) -> None:
        from prometheus_client import multiprocess

        from web import metrics as web_metrics
        from workers import metrics as worker_metrics

        self.workers = CollectorRegistry()
        multiprocess.MultiProcessCollector(self.workers, path=folder)
        self.queues = queues
        self.worker_names = names_of(metrics_of(worker_metrics))
        self.web = metrics_of(web_metrics)
        self.web_names = names_of(self.web)

    def collect(self) -> Iterator[Any]:
        mine = self.worker_names | self.web_names
        yield from (family for family in REGISTRY.collect() if family.name not in mine)
        for metric in self.web:
            yield from metric.collect()
        yield from (family for family in self.workers.collect()
                    if family.name in self.worker_names)
        if self.queues is not None:
            yield from self.queues.collect()


class Metrics:
    """The site's /metrics on `host:port` (0: any free port), and the workers' folder."""

    def __init__(self, host: str, port: int) -> None:
        from services.core.metrics import RunningMatches, serve
        from workers.broker import broker_url

        self.folder = tempfile.mkdtemp(prefix="bummerl-up-metrics-")
        queues = None
        url = broker_url()
        if url.startswith("redis"):
            import os

            from workers.metrics import QueueDepth

            queues = QueueDepth(url, os.environ.get("BUMMERL_BROKER_PREFIX", ""))
        registry = CollectorRegistry()
        registry.register(SiteMetrics(self.folder, queues))
        registry.register(RunningMatches())
        try:
            self.port = serve(port, registry, addr=host)
        except BaseException:
            self.close()
            raise
        self.url = f"http://{host}:{self.port}/metrics"

    def worker_env(self) -> dict[str, str]:
        """What the workers' environment needs: the folder, and no port of their own."""
        return {"PROMETHEUS_MULTIPROC_DIR": self.folder, "BUMMERL_METRICS_PORT": ""}

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def start(where: str) -> tuple[Metrics | None, str | None]:
    """The metrics served at HOST:PORT ('off': none) and their URL, or None and why not (a
    port in use does not stop the rest of the site)."""
    if where == "off":
        return None, None
    host, _, port = where.rpartition(":")
    try:
        metrics = Metrics(host or "127.0.0.1", int(port))
    except ValueError as e:
        return None, f"not served ({where}: {e})"
    except OSError as e:
        return None, f"not served ({where}: {e.strerror or e})"
    return metrics, metrics.url
