"""`bummerl web`: the operators' web dashboard (read-only) and the people's table on the
configured database, served by waitress."""

from __future__ import annotations

import argparse
from typing import Any

from client.errors import KitError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "web", help="serve the operators' web dashboard and the people's table",
        description="Serve the read-only web dashboard on the database of DATABASE_URL "
                    "(default: SQLite under var/): ladder standings, live matches with their "
                    "hands and action logs, simulations; JSON under /api/. And the people's "
                    "table (/play), which acts through the engine service "
                    "(BUMMERL_SERVICE_ADDRESS, BUMMERL_WEB_TOKEN).")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port to listen on (default: %(default)s)")
    parser.add_argument("--streams", type=int, default=64,
                        help="live pages open at once: each holds a server thread for its "
                             "event stream; past it a page is not live (default: %(default)s)")
    parser.add_argument("--table-streams", type=int, default=256,
                        help="people's tables live at once: each has two server threads, "
                             "for its event stream and its page's requests; past it a table "
                             "polls every 2 s "
                             "(default: %(default)s)")
    parser.add_argument("--threads", type=int, default=8,
                        help="threads for ordinary requests, on top of one per live stream "
                             "(default: %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from web.server import shutdown, url_of, waitress_server

    for flag, value, least in (("--streams", args.streams, 0),
                               ("--table-streams", args.table_streams, 0),
                               ("--threads", args.threads, 1)):
        if value < least:
            raise KitError(f"{flag} must be {least} or more, not {value}")
    try:
        server = waitress_server(args.host, args.port, {"MAX_STREAMS": args.streams,
                                                        "TABLE_STREAMS": args.table_streams},
                                 threads=args.threads)
    except OSError as e:
        raise KitError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e} (choose "
                       "another with --host/--port)") from None
    from services.core.metrics import metrics_port, serve
    from web.metrics import REGISTRY, instrument

    server.application = instrument(server.application)  # counted, served on its own port:
    port = metrics_port()
    if port is not None:  # /metrics on BUMMERL_METRICS_PORT: the web's own metrics only
        serve(port, REGISTRY)
    print(f"bummerl dashboard on {url_of(server)} (Ctrl-C stops it)", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        shutdown(server)
    return 0
