"""Prometheus metrics of the dashboard, served on their own port (`BUMMERL_METRICS_PORT`) by
`bummerl web`, never on the dashboard's port. They live in their own registry (`REGISTRY`, with
the process's own collectors): the web process serves only them, never the service's counters
it would never increment.

| metric | type | what |
|---|---|---|
| `bummerl_web_requests_total{method,status}` | counter | requests answered |
| `bummerl_web_request_seconds` | histogram | time to answer a request |

`instrument(app)` wraps the WSGI app; nothing in the Flask app changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Histogram,
)

REGISTRY = CollectorRegistry(auto_describe=True)
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)
REQUESTS = Counter("bummerl_web_requests_total", "Dashboard requests answered",
                   ["method", "status"], registry=REGISTRY)
REQUEST_SECONDS = Histogram("bummerl_web_request_seconds", "Time to answer a dashboard request",
                            registry=REGISTRY)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def instrument(app: WSGIApp) -> WSGIApp:
    """`app`, counting and timing every request."""

    def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        started = time.perf_counter()
        seen: list[str] = []

        def respond(status: str, headers: Any, *exc_info: Any) -> Any:
            seen.append(status.split(" ", 1)[0])
            return start_response(status, headers, *exc_info)

        try:
            return app(environ, respond)
        finally:
            REQUESTS.labels(environ.get("REQUEST_METHOD", "?"), seen[-1] if seen else "500").inc()
            REQUEST_SECONDS.observe(time.perf_counter() - started)

    return counted
