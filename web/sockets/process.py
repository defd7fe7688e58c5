"""Running the socket tier: `serve` (the `bummerl sockets` command's loop) and `SocketTier`
(in a thread of `bummerl up`), each one aiohttp site (with `reuse_port`, more processes on one
host share its port: the kernel spreads the connections)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web
from sqlalchemy.orm import Session, sessionmaker

from db.base import make_engine
from web.db import read_only
from web.sockets.server import Settings, make_app
from web.sockets.spectate import Render, Spectators
from web.sockets.upstream import Upstream


@dataclass
class Options:
    host: str = "127.0.0.1"
    port: int = 8001
    service_address: str | None = None  # BUMMERL_SERVICE_ADDRESS, else 127.0.0.1:50051
    web_token: str | None = None  # BUMMERL_WEB_TOKEN
    secret: str | None = None  # BUMMERL_WEB_SECRET
    database_url: str | None = None  # DATABASE_URL, else the SQLite file under var/
    allow_origin: str | None = None  # the web's origin, when pages come from another address
    max_streams: int = 20_000
    keepalive_s: float = 20.0  # the upstream's keepalive pings (web.sockets.upstream)
    reuse_port: bool = False  # SO_REUSEPORT: more processes share the port on one host
    per_session: int = 16  # streams of one session at once (its tabs)
    max_matches: int = 2000  # matches followed at once (BUMMERL_MAX_WEB_WATCH_STREAMS: 5,000)
    per_address: int = 32  # spectators' streams per client address
    trusted_proxies: int | None = None  # None: BUMMERL_WEB_TRUSTED_PROXIES (the web's), else 0
    sessions: sessionmaker[Session] | None = None  # the database's, made from database_url


class NotConfigured(ValueError):
    """The tier lacks what it needs (says which variable to set)."""


def credentials(options: Options) -> tuple[str, str]:
    """The web's secret and token the tier needs (from `options`, else the environment), or
    NotConfigured naming the variable to set."""
    secret = options.secret or os.environ.get("BUMMERL_WEB_SECRET")
    token = options.web_token or os.environ.get("BUMMERL_WEB_TOKEN")
    if not secret:
        raise NotConfigured("the socket tier needs the web's secret to check tickets: set "
                            "BUMMERL_WEB_SECRET to the web's (bummerl up sets both)")
    if not token:
        raise NotConfigured("the socket tier needs the web's credential for the engine "
                            "service: set BUMMERL_WEB_TOKEN (bummerl up sets it)")
    return secret, token


def match_render(sessions: sessionmaker[Session], secret: str) -> Render:
    """A match page's live part as the web renders it (its own Flask app, templates and
    queries, on this process's `sessions`): (its seq, the payload), or None for no match."""
    from web import create_app, matches, queries

    app = create_app({"DATABASE_URL": sessions.kw["bind"].url.render_as_string(False),
                      "SECRET_KEY": secret})
    app.extensions["bummerl.sessions"].kw["bind"].dispose()
    app.extensions["bummerl.sessions"] = sessions

    def render(match_id: int) -> tuple[int, dict[str, object]] | None:
        with app.test_request_context(f"/matches/{match_id}"):
            try:
                match = queries.match_detail(sessions, match_id)
            except queries.Missing:
                return None
            return int(match["seq"]), matches.live_parts(match)

    return render


def settings_of(options: Options
                ) -> tuple[Settings, Upstream, sessionmaker[Session], Spectators]:
    secret, token = credentials(options)
    address = (options.service_address or os.environ.get("BUMMERL_SERVICE_ADDRESS")
               or "127.0.0.1:50051")
    sessions = options.sessions
    if sessions is None:
        engine = make_engine(options.database_url)
        read_only(engine)
        sessions = sessionmaker(engine)
    proxies = options.trusted_proxies
    if proxies is None:
        proxies = int(os.environ.get("BUMMERL_WEB_TRUSTED_PROXIES") or 0)
    settings = Settings(secret=secret, allow_origin=options.allow_origin,
                        max_streams=options.max_streams, per_session=options.per_session,
                        max_matches=options.max_matches, per_address=options.per_address,
                        trusted_proxies=proxies)
    upstream = Upstream(address, token, options.keepalive_s)
    spectators = Spectators(address, upstream.options, upstream.metadata,
                            match_render(sessions, secret))
    return settings, upstream, sessions, spectators


async def _serve_until(options: Options, stop: asyncio.Event,
                       started: Callable[[web.AppRunner], object] = lambda _runner: None
                       ) -> None:
    """Serve the tier's site until `stop` is set (`started` is told once it listens)."""
    settings, upstream, sessions, spectators = settings_of(options)
    # (handler_cancellation: a browser gone ends its stream at once, not at its next write)
    runner = web.AppRunner(make_app(settings, upstream, sessions, spectators), access_log=None,
                           shutdown_timeout=1.0, handler_cancellation=True)
    await runner.setup()
    try:
        await web.TCPSite(runner, options.host, options.port, reuse_port=options.reuse_port,
                          backlog=4096).start()
        started(runner)
        await stop.wait()
    finally:
        await runner.cleanup()


def serve(options: Options) -> None:
    """Serve until Ctrl-C or SIGTERM (a pod's stop): the streams are closed, and their browsers
    reconnect (elsewhere behind the same address) from the last seq they saw."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await _serve_until(options, stop)

    asyncio.run(main())


class SocketTier:
    """The socket tier in a daemon thread (for `bummerl up`); `stop()` ends it."""

    def __init__(self, options: Options) -> None:
        credentials(options)  # fail here, in the caller's thread, when not configured
        self.options = options
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.ready = threading.Event()
        self.failed: BaseException | None = None
        self.port = options.port  # the port bound (when asked for 0: the one chosen)
        self.thread = threading.Thread(target=self._run, name="sockets", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.options.host}:{self.port}"

    def _run(self) -> None:
        def started(runner: web.AppRunner) -> None:
            self.port = runner.addresses[0][1]
            self.ready.set()

        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self.stopping = asyncio.Event()
            await _serve_until(self.options, self.stopping, started)

        try:
            asyncio.run(main())
        except BaseException as e:  # noqa: BLE001  (start() reports it)
            self.failed = e
            self.ready.set()

    def start(self, timeout: float = 10.0) -> SocketTier:
        self.thread.start()
        self.ready.wait(timeout)
        if self.failed is not None:
            raise self.failed
        return self

    def stop(self) -> None:
        if self.loop is not None and self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(5)
