"""`bummerl web`: the operators' web dashboard (read-only) on the configured database."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "web", help="serve the operators' web dashboard (standings, matches, simulations)",
        description="Serve the read-only web dashboard on the database of DATABASE_URL "
                    "(default: SQLite under var/): ladder standings, live matches with their "
                    "hands and action logs, simulations; JSON under /api/.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port to listen on (default: %(default)s)")
    parser.add_argument("--refresh", type=int, default=5, metavar="SECONDS",
                        help="live pages reload themselves this often (default: %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from web.server import Dashboard

    dashboard = Dashboard(args.host, args.port, {"REFRESH_SECONDS": args.refresh})
    print(f"bummerl dashboard on {dashboard.url} (Ctrl-C stops it)", flush=True)
    try:
        dashboard.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        dashboard.server.server_close()
    return 0
