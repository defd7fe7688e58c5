"""Serving the dashboard: Werkzeug's threaded WSGI server, in the foreground or in a thread."""

from __future__ import annotations

import threading
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server


class Dashboard:
    """The dashboard served in a daemon thread (for `bummerl up`); `stop()` ends it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8000,
                 config: dict[str, Any] | None = None) -> None:
        from web import create_app

        self.server: BaseWSGIServer = make_server(host, port, create_app(config),
                                                  threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, name="dashboard",
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.server.host}:{self.server.port}/"

    def start(self) -> Dashboard:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
