"""`bummerl serve`: run the gRPC engine service (migrates the database first)."""

from __future__ import annotations

import argparse
import logging
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the gRPC engine service",
        description="Run the gRPC engine service on ADDRESS, on the database of DATABASE_URL "
                    "(default: SQLite under var/). Settings: BUMMERL_OPERATOR_TOKEN, "
                    "BUMMERL_OPEN_REGISTRATION, BUMMERL_MOVE_MS, BUMMERL_BANK_MS, "
                    "BUMMERL_MAX_ILLEGAL, BUMMERL_HOOKS (see services/core/config.py); TLS when "
                    "BUMMERL_TLS_CERT and BUMMERL_TLS_KEY are set (services/api/tls.py).")
    parser.add_argument("--address", default="127.0.0.1:50051",
                        help="host:port to listen on (default: %(default)s)")
    parser.add_argument("--no-migrate", action="store_true",
                        help="do not apply the Alembic migrations first")
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


def run(args: argparse.Namespace) -> int:
    from services.api.server import serve
    from services.core.metrics import start_from_env

    quiet_logs()
    start_from_env()  # /metrics on BUMMERL_METRICS_PORT, if set
    serve(args.address, migrate=not args.no_migrate)
    return 0
