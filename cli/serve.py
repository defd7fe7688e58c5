"""`bummerl serve`: run the gRPC engine service (migrates the database first).

`bummerl serve --check [--address A] [--service S] [--wait W]` is the service's health probe
where the platform has no gRPC probe of its own (a container's health command): exit status 0
once the service at A answers SERVING for S (grpc.health.v1; "" = ready: the database answers,
"liveness" = the process serves), 1 if it does not (not serving, or not answering within 3 s),
asking again every 0.05 s for up to W s (default 0: once).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from client.errors import KitError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the gRPC engine service",
        description="Run the gRPC engine service on ADDRESS, on the database of DATABASE_URL "
                    "(default: SQLite under var/). Settings: BUMMERL_OPERATOR_TOKEN, "
                    "BUMMERL_OPEN_REGISTRATION, BUMMERL_MOVE_MS, BUMMERL_BANK_MS, "
                    "BUMMERL_MAX_ILLEGAL, BUMMERL_HOOKS (see db/settings.py); TLS when "
                    "BUMMERL_TLS_CERT and BUMMERL_TLS_KEY are set (services/api/tls.py).")
    parser.add_argument("--address", default="127.0.0.1:50051",
                        help="host:port to listen on (default: %(default)s)")
    parser.add_argument("--hosted-socket", default=None, metavar="PATH",
                        help="also listen on this unix socket, for hosted bots' containers "
                             "(its folder is mounted into them: docs/hosted.md)")
    parser.add_argument("--no-migrate", action="store_true",
                        help="do not apply the Alembic migrations first")
    parser.add_argument("--check", action="store_true",
                        help="do not serve: exit 0 if the service at --address answers "
                             "SERVING to a gRPC health check, else 1; a health probe")
    parser.add_argument("--service", default="",
                        help='with --check: the health service to ask ("" = ready, the '
                             'default; "liveness")')
    parser.add_argument("--wait", type=float, default=0.0, metavar="S",
                        help="with --check: keep asking for up to S s until SERVING")
    parser.set_defaults(func=run)


class Unhelpful(logging.Filter):
    """Drops kombu's note that the embedded broker's URL (`bummerlfs://`) names no host: true,
    and nothing to act on (it is a folder, see workers.fsbroker)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("No hostname was supplied")


def quiet_logs() -> None:
    """The service's own lines at INFO; the libraries' only when something is wrong (alembic
    says each migration at INFO)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    logging.getLogger("kombu.connection").addFilter(Unhelpful())


def check(address: str, service: str, wait: float = 0.0) -> int:
    import time

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + wait
    while True:
        with grpc.insecure_channel(address) as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=service), timeout=3)
                status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                serving = reply.status == health_pb2.HealthCheckResponse.SERVING
            except grpc.RpcError as e:
                status, serving = f"{e.code().name} {e.details() or ''}".rstrip(), False
        if serving or time.monotonic() >= deadline:
            print(f"{address} {service or '(ready)'}: {status}")
            return 0 if serving else 1
        time.sleep(0.05)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return check(args.address, args.service, args.wait)
    from services.api.server import serve
    from services.core.metrics import start_from_env

    quiet_logs()
    start_from_env()  # /metrics on BUMMERL_METRICS_PORT, if set
    with cannot_bind(args.address, "--address"):
        serve(args.address, migrate=not args.no_migrate, hosted_socket=args.hosted_socket)
    return 0


@contextlib.contextmanager
def cannot_bind(address: str, flag: str) -> Iterator[None]:
    """gRPC's RuntimeError for an address it cannot listen on, as one line naming the flag."""
    try:
        yield
    except RuntimeError as e:
        if "Failed to bind" not in str(e):
            raise
        raise KitError(f"cannot listen on {address}: it is in use, or not a host:port of this "
                       f"machine (choose another with {flag})") from None
