"""`bummerl web` and the dashboard served over HTTP (a thread, and the command itself)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from cli.main import build_parser
from db.schema import create_all
from web.server import Dashboard

ROOT = Path(__file__).resolve().parents[2]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_web_command_is_registered():
    args = build_parser().parse_args(["web", "--host", "0.0.0.0", "--port", "8123"])
    assert (args.host, args.port, args.streams, args.threads) == ("0.0.0.0", 8123, 64, 8)


def test_dashboard_in_a_thread(tmp_path):
    url = f"sqlite:///{tmp_path / 'd.sqlite3'}"
    create_all(url)
    dashboard = Dashboard("127.0.0.1", 0, {"DATABASE_URL": url}).start()
    try:
        assert dashboard.url.startswith("http://127.0.0.1:")
        status, body = get(dashboard.url + "healthz")
        assert status == 200 and json.loads(body)["database"] == "ok"  # the engine: elsewhere
        status, body = get(dashboard.url)
        assert status == 200 and "Ladder standings" in body
        status, body = get(dashboard.url + "api/matches/5")
        assert status == 404 and json.loads(body)["error"] == "no match with id 5"
    finally:
        dashboard.stop()


def test_bummerl_web_serves_until_stopped(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.sqlite3'}"
    create_all(url)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": url}
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "web", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        end = time.monotonic() + 15
        while True:
            try:
                status, body = get(f"http://127.0.0.1:{port}/matches")
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < end, "bummerl web did not answer"
                time.sleep(0.1)
        assert status == 200 and "No matches." in body
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}/" in out


def test_up_starts_the_dashboard_and_survives_a_busy_port(tmp_path, monkeypatch):
    from cli.up import header_lines, start_dashboard

    url = f"sqlite:///{tmp_path / 'u.sqlite3'}"
    create_all(url)
    monkeypatch.setenv("DATABASE_URL", url)
    assert start_dashboard("off") == (None, None)
    dashboard, web_url = start_dashboard("127.0.0.1:0")
    try:
        assert web_url is not None and get(web_url + "healthz")[0] == 200
        busy, why = start_dashboard(f"127.0.0.1:{dashboard.server.port}")
        assert busy is None and why is not None and why.startswith("not started")
        header = {"service": "127.0.0.1:50051", "broker": "redis", "database": url,
                  "logs": "var/log", "token": None, "web": why}
        assert any("dashboard not started" in str(line) for line in header_lines(header))
    finally:
        dashboard.stop()


def test_bummerl_web_passes_its_stream_caps_and_refuses_negative_ones(monkeypatch, capsys):
    import web.server
    from cli.main import main

    given: dict[str, object] = {}

    def server(host: str, port: int, config: dict[str, object], threads: int) -> None:
        given.update(config, threads=threads)
        raise OSError(98, "taken")  # stop before serving

    monkeypatch.setattr(web.server, "waitress_server", server)
    assert main(["web", "--streams", "3", "--table-streams", "5", "--threads", "2"]) == 1
    assert given == {"MAX_STREAMS": 3, "TABLE_STREAMS": 5, "threads": 2}
    assert "cannot listen on 127.0.0.1:8000" in capsys.readouterr().err
    given.clear()
    assert main(["web", "--table-streams", "-1"]) == 1
    assert given == {}  # refused before anything started
    assert "error: --table-streams must be 0 or more, not -1" in capsys.readouterr().err
