"""`bummerl serve --check`: the service's health probe for a container (docs/deploy.md) exits 0
on a real service that answers SERVING, 1 where nothing answers (at once, or after --wait)."""

from __future__ import annotations

import socket
import time

from servicekit import fresh_database, running_service

from cli.main import main as bummerl


def test_check_passes_on_a_serving_service(request, tmp_path, capsys):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        assert bummerl(["serve", "--check", "--address", svc.server.address]) == 0
        assert bummerl(["serve", "--check", "--address", svc.server.address,
                        "--service", "liveness"]) == 0
    assert "SERVING" in capsys.readouterr().out


def test_check_fails_where_nothing_answers(capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    assert bummerl(["serve", "--check", "--address", address]) == 1
    started = time.monotonic()
    assert bummerl(["serve", "--check", "--address", address, "--wait", "1"]) == 1
    assert time.monotonic() - started >= 1  # it kept asking for the whole --wait
    assert "UNAVAILABLE" in capsys.readouterr().out
