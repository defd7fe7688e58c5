"""A whole site for the people tests, in temporary folders: a fresh SQLite database with house
bots, the engine service (real gRPC, in this process) with the house and web credentials, a
real Celery worker process (kombu's filesystem broker) that plays the house seats, and the web
(waitress, in a thread) as a client of the service with the web token.

`Site.person(...)` is an HTTP client of the web doing what the page does (a session cookie,
the CSRF token of a page, the table's JSON and actions).
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from servicekit import CONFIG
from serviceprocs import free_port
from sqlalchemy.orm import Session, sessionmaker

from db.base import make_session_factory
from db.models import HOUSE
from db.schema import create_all
from db.settings import Settings, sha256
from services.api.server import Server, create_server
from services.core import hooks
from services.ops import bots

HOUSE_TOKEN = "house-secret-for-people-tests"
WEB_TOKEN = "web-secret-for-people-tests"
HOUSE_BOTS = {"house-random": "random", "house-bully": "bully"}
SECRET = "web-secret-key-for-people-tests"  # the web's SECRET_KEY, shared with its socket tier


@dataclass
class Site:
    web: str  # the web's base URL, no trailing slash
    service: str  # the gRPC service's address
    sessions: sessionmaker[Session]
    server: Server
    config: Settings
    tmp: Path
    web_app: Any = None
    stoppers: list[Any] = field(default_factory=list)
    sockets: Any = None  # the socket tier (web.sockets.process.SocketTier), when started
    sockets_proxy: Any = None  # the proxy between the tier and the service, if asked for

    def person(self) -> Person:
        return Person(self.web)

    def sockets_health(self) -> dict[str, Any]:
        """The socket tier's /sockets/health: {"streams": N, "upstream": bool}."""
        with urllib.request.urlopen(self.sockets.url + "/sockets/health", timeout=10) as r:
            found: dict[str, Any] = json.loads(r.read())
            return found

    def sockets_connected(self) -> bool:
        """Whether the socket tier's FollowTables stream to the service is open."""
        return bool(self.sockets_health()["upstream"])


class Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any] | str) -> None:
        super().__init__(f"{status}: {body}")
        self.status, self.body = status, body


class Person:
    """An HTTP client of the web with its own cookies (one browser)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = ""

    def get(self, path: str) -> tuple[int, str, Any]:
        try:
            with self.opener.open(self.base + path, timeout=30) as r:
                body = r.read().decode()
                status, headers = r.status, r.headers
        except urllib.error.HTTPError as e:
            body, status, headers = e.read().decode(), e.code, e.headers
        found = re.search(r'name="csrf_token" value="([^"]+)"', body) or re.search(
            r'data-csrf="([^"]+)"', body)
        if found:
            self.csrf = found.group(1)
        return status, body, headers

    def post_form(self, path: str, data: dict[str, str], csrf: bool = True) -> tuple[int, str]:
        fields = {**data, **({"csrf_token": self.csrf} if csrf else {})}
        request = urllib.request.Request(self.base + path,
                                         data=urllib.parse.urlencode(fields).encode(),
                                         method="POST")
        try:
            with self.opener.open(request, timeout=30) as r:
                return r.status, r.geturl()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post_json(self, path: str, body: dict[str, Any], csrf: bool = True) -> Any:
        request = urllib.request.Request(
            self.base + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json",
                     **({"X-CSRFToken": self.csrf} if csrf else {})})
        try:
            with self.opener.open(request, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            try:
                raise Refused(e.code, json.loads(text)) from None
            except json.JSONDecodeError:
                raise Refused(e.code, text) from None

    def guest(self, name: str) -> None:
        self.get("/play")
        status, where = self.post_form("/guest", {"name": name})
        assert status == 200 and where.endswith("/play"), (status, where)

    def signup(self, name: str, password: str) -> None:
        self.get("/signup")
        status, where = self.post_form("/signup", {"name": name, "password": password,
                                                   "password2": password})
        assert status == 200 and where.endswith("/play"), (status, where)

    def start(self, opponent: str, rated: bool = False, time: str = "rapid",
              profile: str = "soft") -> int:
        self.get("/play")
        data = {"opponent": opponent, "time": time, "profile": profile}
        if rated:
            data["rated"] = "1"
        status, where = self.post_form("/play", data)
        assert status == 200 and "/table/" in where, (status, where)
        match_id = int(where.rsplit("/", 1)[1])
        self.get(f"/table/{match_id}")  # the table page's CSRF token
        return match_id

    def table(self, match_id: int) -> dict[str, Any]:
        status, body, _ = self.get(f"/api/table/{match_id}")
        if status != 200:
            raise Refused(status, json.loads(body))
        result: dict[str, Any] = json.loads(body)
        return result

    def act(self, match_id: int, action: str, seq: int) -> dict[str, Any]:
        result: dict[str, Any] = self.post_json(f"/api/table/{match_id}/act",
                                                {"action": action, "seq": seq})
        return result


def wait_for(condition: Any, timeout: float, what: str) -> Any:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def settings(**changes: Any) -> Settings:
    """The service's settings for these tests: the house and web tokens, a person's time."""
    base = replace(CONFIG, house_token_sha256=sha256(HOUSE_TOKEN),
                   web_token_sha256=sha256(WEB_TOKEN), move_ms=60_000, bank_ms=120_000)
    return replace(base, **changes)


@contextmanager
def people_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: Settings | None = None,
                web_config: dict[str, Any] | None = None, min_think_ms: int = 150,
                sockets: dict[str, Any] | None = None, sockets_via: Any = None
                ) -> Iterator[Site]:
    """The site (see the module docstring); house bots answering a person wait at least
    `min_think_ms` (BUMMERL_HOUSE_MIN_THINK_MS of the worker). With `sockets` (options of
    web.sockets.process.Options), the socket tier too, in a thread, and the web sends its
    tables there (through a `faultproxy.Proxy` to the service with `sockets_via=Proxy`)."""
    from web.server import shutdown, url_of, waitress_server
    from workers import procs
    from workers.app import make_app
    from workers.tasks import move_message

    monkeypatch.delenv("BUMMERL_BROKER_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("BUMMERL_BROKER_DIR", str(tmp_path / "broker"))
    monkeypatch.setenv("BUMMERL_HOUSE_MIN_THINK_MS", str(min_think_ms))  # the service's side
    url = f"sqlite:///{tmp_path / 'people.sqlite3'}"
    sessions = make_session_factory(url)
    create_all(sessions)
    for name, strategy in HOUSE_BOTS.items():
        bots.register_bot(name, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    celery = make_app()

    def on_turn(match_id: int, seat: int, seq: int, turn: hooks.HouseTurn) -> None:
        args, kwargs, options = move_message(  # as workers.hooks sends it on the site's broker
            match_id, seat, seq, strategy=turn.strategy or None, observation=turn.encoded(),
            person=turn.opponent_person, since=turn.committed)
        celery.send_task("bummerl.move", args, kwargs, **options)

    def on_match_end(match_id: int) -> None:
        celery.send_task("bummerl.rate", (match_id,), queue="moves")

    monkeypatch.setattr(hooks, "on_turn", [on_turn])
    monkeypatch.setattr(hooks, "on_match_end", [on_match_end])
    config = config or settings()
    server = create_server("127.0.0.1:0", sessions=sessions, config=config).start()
    worker = procs.start_worker(
        {"DATABASE_URL": url, "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
         "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_LADDER_EVERY": "3600",
         "BUMMERL_SERVICE_ADDRESS": server.address, "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN,
         "BUMMERL_HOUSE_MIN_THINK_MS": str(min_think_ms)},
        concurrency=4, pool="threads", logfile=tmp_path / "worker.log")
    tier_port = free_port() if sockets is not None else None
    if tier_port is not None:
        web_config = {"SOCKETS_URL": f"http://127.0.0.1:{tier_port}", **(web_config or {})}
    web = waitress_server("127.0.0.1", 0, {
        "DATABASE_URL": url, "SERVICE_ADDRESS": server.address, "WEB_TOKEN": WEB_TOKEN,
        "LIVE_POLL_SECONDS": 0.1, "MAX_STREAMS": 8, "TABLE_STREAMS": 16, "SECRET_KEY": SECRET,
        **(web_config or {})}, threads=8)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    tier = proxy = None
    if sockets is not None:  # the pages come from the web's origin: the tier allows it
        from web.sockets.process import Options, SocketTier

        address = server.address
        if sockets_via is not None:
            host, port = server.address.rsplit(":", 1)
            proxy = sockets_via((host, int(port)))
            address = f"127.0.0.1:{proxy.port}"
        tier = SocketTier(Options("127.0.0.1", tier_port, service_address=address,
                                  web_token=WEB_TOKEN, secret=SECRET, sessions=sessions,
                                  allow_origin=url_of(web).rstrip("/"), **sockets)).start()
    site = Site(url_of(web).rstrip("/"), server.address, sessions, server, config, tmp_path,
                web.dashboard, sockets=tier, sockets_proxy=proxy)
    try:
        yield site
    finally:
        shutdown(web)
        thread.join(5)
        if tier is not None:
            tier.stop()
        if proxy is not None:
            proxy.close()
        procs.stop(worker)
        site.server.stop(grace=0)  # (a test may have started it again)
        sessions.kw["bind"].dispose()
