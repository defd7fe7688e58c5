"""Health: `/healthz` (JSON, for probes) and `/health` (the operators' page).

Every check is bounded in time (`TIMEOUT_S` each), so neither page hangs on a dead dependency:
- database: `SELECT 1` (the dashboard's own dependency: 503 when it fails);
- engine service: the standard gRPC health check at `BUMMERL_SERVICE_ADDRESS`
  (default 127.0.0.1:50051);
- broker: when it is Redis, PING, and the lengths of the `moves` and `batch` queues (LLEN);
- workers (page only): Celery's remote-control ping through the Redis broker (in a child
  process), and what the
  workers last did, read from the database (house moves, ratings, simulation chunks): the
  dashboard never imports `workers/`.
`/healthz` is 200 "ok" when all answer, 200 "degraded" when the database answers but the
engine service or the broker does not (the dashboard still serves), 503 without the database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from flask import Blueprint, current_app, jsonify, render_template

from db.base import ping
from web import queries
from web.db import sessions

bp = Blueprint("health", __name__)

TIMEOUT_S = 0.5
PING_LIMIT_S = 8  # the workers' ping, child process start included
QUEUES = ("moves", "batch")


def first_line(e: BaseException) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0][:200]


def service_address() -> str:
    return (current_app.config.get("SERVICE_ADDRESS")
            or os.environ.get("BUMMERL_SERVICE_ADDRESS") or "127.0.0.1:50051")


def broker_url() -> str | None:
    """The Celery broker's URL if it is Redis (the embedded broker has no queues to read)."""
    url = (current_app.config.get("BROKER_URL") or os.environ.get("BUMMERL_BROKER_URL")
           or os.environ.get("REDIS_URL"))
    return url if url and url.startswith(("redis://", "rediss://")) else None


def check_database() -> dict[str, Any]:
    problem = ping(sessions().kw["bind"])  # bounded: answers within ~2 s, safe text
    return {"ok": False, "error": problem} if problem else {"ok": True}


def check_service() -> dict[str, Any]:
    """The engine service's gRPC health (`grpc.health.v1`, overall status)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    address = service_address()
    try:
        with grpc.insecure_channel(address) as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_S)
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
    except grpc.RpcError as e:
        call: Any = e  # a grpc.Call as well
        return {"ok": False, "address": address,
                "error": f"{call.code().name}: {call.details()}"}
    return {"ok": status == "SERVING", "address": address, "status": status}


def check_broker() -> dict[str, Any]:
    """Redis PING and the queue lengths (None when the broker is not Redis)."""
    url = broker_url()
    if url is None:
        return {"ok": None, "note": "embedded broker (not Redis): no queue lengths"}
    import redis

    prefix = os.environ.get("BUMMERL_BROKER_PREFIX", "")
    client = redis.Redis.from_url(url, socket_timeout=TIMEOUT_S,
                                  socket_connect_timeout=TIMEOUT_S)
    try:
        client.ping()
        lengths = {q: int(client.llen(prefix + q)) for q in QUEUES}  # type: ignore[arg-type]
    except Exception as e:  # noqa: BLE001
        return {"ok": False, "error": first_line(e)}
    finally:
        client.close()
    return {"ok": True, "queues": lengths}


PING = """
import json, sys
from celery import Celery
url, prefix, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
app = Celery("bummerl-dashboard", broker=url, set_as_current=False)
if prefix:
    app.conf.broker_transport_options = {"global_keyprefix": prefix}
app.conf.broker_connection_timeout = timeout
app.conf.broker_connection_retry_on_startup = False
print(json.dumps(sorted(n for answer in app.control.ping(timeout=timeout) or [] for n in answer)))
"""


def ping_workers() -> dict[str, Any]:
    """Celery workers answering a remote-control ping through the Redis broker. The ping runs
    in a short-lived child process (bounded: `PING_LIMIT_S`): Celery's control client leaves
    broker state behind in the process that uses it, and the dashboard serves on."""
    url = broker_url()
    if url is None:
        return {"ok": None, "note": "embedded broker: see the workers' last tasks below"}
    prefix = os.environ.get("BUMMERL_BROKER_PREFIX", "")
    try:
        done = subprocess.run([sys.executable, "-c", PING, url, prefix, str(2 * TIMEOUT_S)],
                              capture_output=True, text=True, timeout=PING_LIMIT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"no answer within {PING_LIMIT_S} s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["the ping failed"]
        return {"ok": False, "error": lines[-1][:200]}
    names = json.loads(done.stdout or "[]")
    return {"ok": bool(names), "workers": names}


@bp.get("/healthz")
def healthz() -> Any:
    database = check_database()
    if not database["ok"]:
        return jsonify(status="error", database=database["error"]), 503
    service, broker = check_service(), check_broker()
    status = "ok" if service["ok"] and broker["ok"] is not False else "degraded"
    return jsonify(status=status, database="ok",
                   service="ok" if service["ok"] else service.get("error", service.get("status")),
                   broker={True: "ok", None: "embedded", False: broker.get("error")}[broker["ok"]])


@bp.get("/health")
def page() -> str:
    database = check_database()
    activity = queries.activity(sessions()) if database["ok"] else None
    return render_template("health.html", database=database, service=check_service(),
                           broker=check_broker(), workers=ping_workers(), activity=activity)
