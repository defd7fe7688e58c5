"""`bummerl test start|list|show|stop` against a real service: what each prints, the service's
refusal as one line naming the field, a bot's and the operator's tokens."""

from __future__ import annotations

import pytest
from bummerl.v1 import bot_pb2
from servicekit import OPERATOR, running_service
from serviceprocs import PlayStream
from sqlalchemy import select

from cli.main import main
from db.versiontests import BotVersion
from services.core import hooks
from workers.testing import wait_until


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        yield svc


def bummerl(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as e:
        status = int(e.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_start_list_show_stop(service, capsys):
    _, token = service.register("mybot")
    streams = []
    for version in ("1.9", "2.0"):
        stream = PlayStream(service.channel, token)
        stream.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(version=version)))
        streams.append(stream)

    def both() -> bool:
        with service.sessions() as s:
            return len(list(s.scalars(select(BotVersion).where(BotVersion.open_streams > 0)))) == 2

    wait_until(both, 10, every=0.05, what="both versions connected")
    server = ("--server", service.server.address)
    try:
        status, out, err = bummerl(capsys, "test", "start", "--candidate", "mybot@2.0",
                                   "--baseline", "mybot@2.0", "--token", token, *server)
        assert status == 1 and out == ""
        assert err.startswith("error: baseline:") and err.count("\n") == 1
        status, out, err = bummerl(capsys, "test", "start", "--candidate", "mybot@2.0",
                                   "--baseline", "mybot@1.9", "--elo0", "0", "--elo1", "10",
                                   "--time-control", "1500+4000", "--concurrency", "2",
                                   "--token", token, *server)
        assert status == 0, err
        assert out.startswith("test 1: WAITING") and "candidate  mybot@2.0  connected" in out
        assert "SPRT       elo0 0  elo1 10  alpha 0.05  beta 0.05" in out
        assert "pairs      0 (lost both 0, split 0, won both 0" in out
        # before any pair: no score or Elo with an interval that says nothing (issue 44: it
        # printed "score 0.500 95% [0.000, 1.000]", "Elo -0.0 95% [-2400.0, +2400.0]")
        assert "score      no pairs played yet\nElo        no pairs played yet\n" in out, out
        assert "95%" not in out and "0.500" not in out and "2400" not in out, out
        assert out.endswith("matches    none yet\n"), out
        status, out, _ = bummerl(capsys, "test", "list", "--token", token, *server)
        assert status == 0 and out.split()[:4] == ["1", "WAITING", "mybot@2.0", "vs"]
        assert out.rstrip().endswith("score -"), out
        status, out, _ = bummerl(capsys, "test", "list", "--state", "H1",
                                 "--operator-token", OPERATOR, *server)
        assert status == 0 and out == "no version tests\n"
        status, out, _ = bummerl(capsys, "test", "show", "1", "--token", token, *server)
        assert status == 0 and "started by bot mybot" in out
        status, out, err = bummerl(capsys, "test", "stop", "1", "no longer needed",
                                   "--operator-token", OPERATOR, *server)
        assert status == 0, err
        assert out.startswith("test 1: STOPPED (stopped by operator: no longer needed)")
        status, _, err = bummerl(capsys, "test", "show", "2", "--token", token, *server)
        assert status == 1 and err.startswith("error: no version test with id 2"), err
    finally:
        for stream in streams:
            stream.close()
