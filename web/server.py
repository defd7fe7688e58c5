"""Serving the dashboard: waitress in the foreground (`bummerl web`), or Werkzeug's threaded
server in a daemon thread beside the rest of the site (`bummerl up`), which stops cleanly.

waitress stays the production server: a live page's event stream holds one of its threads
while open (the poller, not the stream, does the work, so a waiting stream costs a thread and
no CPU), so the pool is sized as the cap of streams (`MAX_STREAMS`) plus `threads` for ordinary
requests, and a stream past the cap is refused with 503 (web.live) before it takes a thread for
long. waitress writes each event at once (`send_bytes` 1). An asyncio server would hold
thousands of streams, but the dashboard's audience is operators: tens of pages, not thousands.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server


def waitress_server(host: str = "127.0.0.1", port: int = 8000,
                    config: dict[str, Any] | None = None, threads: int = 8) -> Any:
    """A bound waitress server of a new dashboard app; `.run()` serves until interrupted.
    It has `threads` for ordinary requests plus one per live stream (`MAX_STREAMS`) and two
    per table stream (`TABLE_STREAMS`): the stream's and its page's requests'."""
    from waitress import create_server

    from web import create_app

    app = create_app(config)
    # A table's page also sends requests that wait for the engine service (an action, the
    # table's JSON): one more thread per table stream, so that when the service is busy those
    # wait at the service, not in waitress's queue in front of the operators' pages.
    streams = int(app.config["MAX_STREAMS"]) + 2 * int(app.config["TABLE_STREAMS"])
    # Each open table or live page keeps its stream's connection and, in a browser, one more
    # for its requests: waitress's default limit (100 connections) would refuse the 51st table.
    # poll(), not select(): select() fails on a descriptor past 1024 (some 500 open tables).
    server = create_server(app, host=host, port=port, threads=threads + streams,
                           connection_limit=100 + 2 * streams, asyncore_use_poll=True,
                           ident="bummerl")
    server.dashboard = app  # for `shutdown`
    return server


def shutdown(server: Any) -> None:
    """Stop a waitress server of `waitress_server`: end its live streams (they would hold
    their threads), wait for its threads (a few seconds at most), stop listening, and close
    the connections still open (a browser keeps its own alive), so `run()` returns."""
    server.dashboard.extensions["bummerl.hub"].close()
    server.dashboard.extensions["bummerl.tables"].close()
    server.task_dispatcher.shutdown(timeout=5)  # the streams end, their threads return

    def close_all() -> None:  # in the loop's thread, which ends once its socket map is empty
        for channel in list(server._map.values()):  # kept-alive browser connections too
            if channel is not server and channel is not server.trigger:
                channel.close()
        server.close()  # the listening socket and the trigger

    with contextlib.suppress(OSError):  # its trigger closed already: no loop left to wake
        server.trigger.pull_trigger(close_all)
    end = time.monotonic() + 2
    while server._map and time.monotonic() < end:
        time.sleep(0.01)
    if server._map:  # no loop ran it (a server never run): close here
        close_all()


def url_of(server: Any) -> str:
    """`http://host:port/` of a bound waitress server."""
    return f"http://{server.effective_host}:{server.effective_port}/"


class Dashboard:
    """The dashboard served in a daemon thread (for `bummerl up`); `stop()` ends it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8000,
                 config: dict[str, Any] | None = None) -> None:
        from web import create_app

        self.app = create_app(config)
        self.server: BaseWSGIServer = make_server(host, port, self.app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, name="dashboard",
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.server.host}:{self.server.port}/"

    def start(self) -> Dashboard:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.app.extensions["bummerl.hub"].close()
        self.app.extensions["bummerl.tables"].close()
        self.server.shutdown()
        self.server.server_close()
