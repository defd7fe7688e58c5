"""A light site for the sign-in tests: a fresh SQLite database, the engine service (real gRPC,
in this process, with the web token) and the web app (`web.create_app`) driven through Flask's
test client, which lets a test choose the client's address (`REMOTE_ADDR`) and headers. No
worker: these tests sign in and out, they do not play a game to its end.

`Browser` does what the pages do: it keeps its cookies, reads a page's CSRF token and posts
forms with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peoplekit import play_house_turns
from sqlalchemy.orm import Session, sessionmaker
from tablekit import HOUSE_TOKEN, WEB_TOKEN, settings

from db.base import make_session_factory
from db.models import HOUSE
from db.schema import create_all
from db.settings import Settings
from services.api.server import create_server
from services.core import hooks
from services.ops import bots
from web import create_app


@dataclass
class Site:
    app: Flask
    sessions: sessionmaker[Session]
    service: str

    def browser(self, address: str = "127.0.0.1", **headers: str) -> Browser:
        return Browser(self.app.test_client(), address, headers)


class Browser:
    """One browser: its cookies, its address, the CSRF token of the last page it read."""

    def __init__(self, client: FlaskClient, address: str, headers: dict[str, str]) -> None:
        self.client = client
        self.address = address
        self.headers = headers
        self.csrf = ""
        self.pinned = ""  # a cookie sent with every request, whatever the web answers

    def _environ(self) -> dict[str, Any]:
        if self.pinned:
            self.set_cookie(self.pinned)
        return {"REMOTE_ADDR": self.address}

    def get(self, path: str, **headers: str) -> Any:
        answer = self.client.get(path, headers={**self.headers, **headers},
                                 environ_base=self._environ())
        found = re.search(r'name="csrf_token" value="([^"]+)"', answer.text) or re.search(
            r'data-csrf="([^"]+)"', answer.text)
        if found:
            self.csrf = found.group(1)
        return answer

    def post(self, path: str, data: dict[str, str] | None = None, **headers: str) -> Any:
        if not self.csrf:
            self.get("/login")
        return self.client.post(path, data={**(data or {}), "csrf_token": self.csrf},
                                headers={**self.headers, **headers},
                                environ_base=self._environ())

    def post_json(self, path: str, body: dict[str, Any], **headers: str) -> Any:
        return self.client.post(path, json=body,
                                headers={**self.headers, "X-CSRFToken": self.csrf, **headers},
                                environ_base=self._environ())

    def login(self, name: str, password: str, **data: str) -> Any:
        self.get("/login")
        return self.post("/login", {"name": name, "password": password, **data})

    def signup(self, name: str, password: str) -> Any:
        self.get("/signup")
        answer = self.post("/signup", {"name": name, "password": password,
                                       "password2": password})
        assert answer.status_code == 302, answer.text
        return answer

    def guest(self, name: str, **data: str) -> Any:
        self.get("/play")
        return self.post("/guest", {"name": name, **data})

    def cookie(self) -> str:
        found = self.client.get_cookie("bummerl_session")
        assert found is not None
        return found.value

    def set_cookie(self, value: str) -> None:
        self.client.set_cookie("bummerl_session", value)


@contextmanager
def signin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                web_config: dict[str, Any] | None = None, house_turns: bool = False,
                config: Settings | None = None) -> Iterator[Site]:
    """The site; a house bot's turn is left unplayed unless `house_turns` (then the workers'
    code plays it, on a thread: tests/services/peoplekit.py); the service's `config`
    (default: tablekit's settings())."""
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    tmp_path.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{tmp_path / 'signin.sqlite3'}"
    sessions = make_session_factory(url)
    create_all(sessions)
    bots.register_bot("house-random", kind=HOUSE, house_strategy="random", sessions=sessions)
    server = create_server("127.0.0.1:0", sessions=sessions,
                           config=config or settings()).start()
    if house_turns:
        play_house_turns(monkeypatch, server.address, sessions)
        monkeypatch.setenv("BUMMERL_HOUSE_TOKEN", HOUSE_TOKEN)
    app = create_app({"DATABASE_URL": url, "SERVICE_ADDRESS": server.address,
                      "WEB_TOKEN": WEB_TOKEN, **(web_config or {})})
    try:
        yield Site(app, sessions, server.address)
    finally:
        people = app.extensions.get("bummerl.people")
        if people is not None:
            people.close()
        server.stop(grace=0)
        app.extensions["bummerl.sessions"].kw["bind"].dispose()
        sessions.kw["bind"].dispose()
