"""`bummerl sockets`: the socket tier (web.sockets), the people's tables' and the match pages'
live streams, as a process of its own (more of them may share one port: SO_REUSEPORT)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from client.errors import KitError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sockets", help="serve the people's tables' live streams (the socket tier)",
        description="Serve the tables' server-sent event streams on one event loop, fed by "
                    "one FollowTables stream to the engine service (BUMMERL_SERVICE_ADDRESS, "
                    "BUMMERL_WEB_TOKEN); tickets are checked with the web's secret "
                    "(BUMMERL_WEB_SECRET) and sessions in the database (DATABASE_URL). Point "
                    "the web at it with BUMMERL_SOCKETS_URL.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8001,
                        help="port to listen on (default: %(default)s)")
    parser.add_argument("--allow-origin", default=None, metavar="ORIGIN",
                        help="the web's origin when its pages come from another address, "
                             "e.g. http://127.0.0.1:8000 (default: none, same address)")
    parser.add_argument("--max-streams", type=int, default=20_000,
                        help="streams open at once; past it a table reloads every 2 s "
                             "(default: %(default)s)")
    parser.add_argument("--max-matches", type=int, default=2000,
                        help="matches whose pages follow them here at once (a WatchMatch "
                             "stream each; the service admits BUMMERL_MAX_WEB_WATCH_STREAMS per "
                             "address for the web's credential); past it a page streams from "
                             "the web "
                             "(default: %(default)s)")
    parser.add_argument("--reuse-port", action="store_true",
                        help="listen with SO_REUSEPORT, so more `bummerl sockets` processes on "
                             "this host share the port (the kernel spreads the streams)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from web.sockets.process import NotConfigured, Options, credentials, serve

    if args.max_matches < 0:
        raise KitError(f"--max-matches must be 0 or more, not {args.max_matches}")
    if args.max_streams < 1:
        raise KitError(f"--max-streams must be 1 or more, not {args.max_streams}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    options = Options(args.host, args.port, allow_origin=args.allow_origin,
                      max_streams=args.max_streams, max_matches=args.max_matches,
                      reuse_port=args.reuse_port)
    try:
        credentials(options)
    except NotConfigured as e:
        raise KitError(str(e)) from None
    print(f"bummerl sockets on http://{args.host}:{args.port}/sockets/ (Ctrl-C stops it)",
          flush=True)
    try:
        serve(options)
    except OSError as e:
        raise KitError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e} (choose "
                       "another with --host/--port)") from None
    except KeyboardInterrupt:
        pass
    return 0
