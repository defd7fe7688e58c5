"""`bummerl up` keeps the web's token for PeopleService across restarts beside its database,
owner-only (cli/tokenfile.py), and a service started with it accepts exactly that token."""

from __future__ import annotations

import os
import stat

import pytest

from cli.tokenfile import WEB, ensure_web_token
from client.errors import KitError
from db.settings import Settings
from services.core.errors import PermissionDenied, Unauthenticated
from services.ops import people


def test_the_web_token_is_made_once_kept_0600_and_read_again(tmp_path, monkeypatch):
    monkeypatch.delenv("BUMMERL_WEB_TOKEN", raising=False)
    monkeypatch.setenv("BUMMERL_WEB_TOKEN_SHA256", "0" * 64)  # replaced by the kept token's
    url = f"sqlite:///{tmp_path / 'site' / 'bummerl.sqlite3'}"
    path = ensure_web_token(url, tmp_path / "var")
    assert path == tmp_path / "site" / "bummerl.sqlite3.web-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = os.environ["BUMMERL_WEB_TOKEN"]
    assert len(first) >= 32 and path.read_text().strip() == first
    # a restart: the same token, from the file
    monkeypatch.delenv("BUMMERL_WEB_TOKEN")
    assert ensure_web_token(url, tmp_path / "var") == path
    assert os.environ["BUMMERL_WEB_TOKEN"] == first
    # the service made from this environment takes it, and only it
    config = Settings.from_env()
    people.require_web(first, config, "GetTable")
    with pytest.raises(Exception, match="not it"):
        people.require_web(first + "x", config, "GetTable")
    # a database server: var/web-token
    assert WEB.path_for("postgresql://db/bummerl", tmp_path / "var") == \
        tmp_path / "var" / "web-token"


def test_a_web_token_given_is_used_and_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("BUMMERL_WEB_TOKEN", "given-token")
    url = f"sqlite:///{tmp_path / 'bummerl.sqlite3'}"
    assert ensure_web_token(url, tmp_path / "var") is None
    assert os.environ["BUMMERL_WEB_TOKEN"] == "given-token"
    assert not (tmp_path / "bummerl.sqlite3.web-token").exists()


def test_a_token_file_others_may_read_or_an_empty_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("BUMMERL_WEB_TOKEN", raising=False)
    path = tmp_path / "bummerl.sqlite3.web-token"
    path.write_text("secret\n")
    path.chmod(0o644)
    url = f"sqlite:///{tmp_path / 'bummerl.sqlite3'}"
    with pytest.raises(KitError, match="chmod 600"):
        ensure_web_token(url, tmp_path / "var")
    path.write_text("")
    path.chmod(0o600)
    with pytest.raises(KitError, match="is empty"):
        ensure_web_token(url, tmp_path / "var")


def test_a_service_without_a_web_token_refuses_every_people_call():
    with pytest.raises(PermissionDenied, match="this service has no web token set"):
        people.require_web("anything", Settings(), "GetTable")
    with pytest.raises(Unauthenticated):
        people.require_web(None, Settings(), "GetTable")
