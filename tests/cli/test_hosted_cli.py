"""`bummerl bot upload|versions|logs|stop|resume` against the real service (what docs/hosted.md
and docs/operators.md give): a file with its class, a folder and a zip with --entry, the class's
version attribute as the version, each refusal one line naming what is wrong; the operator's
--bot forms. (Building and running are the workers': tests/hosting.)"""

from __future__ import annotations

import zipfile
from dataclasses import replace

import pytest
from servicekit import OPERATOR, running_service
from sqlalchemy import select

from cli.main import main
from db import hosted
from db.hosted import HostedVersion
from services.core import hooks

BOT = "from bummerl_kit import Bot\n\n\nclass MyBot(Bot):\n    version = '3.1'\n"


@pytest.fixture
def service(database, monkeypatch):
    from servicekit import CONFIG

    monkeypatch.setattr(hooks, "on_hosted_upload", [])
    monkeypatch.setattr(hooks, "on_hosted_changed", [])
    with running_service(database, replace(CONFIG, hosting="podman")) as svc:
        yield svc


def bummerl(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as e:
        status = int(e.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_upload_list_logs_stop_resume(service, capsys, tmp_path):
    _, token = service.register("mybot")
    server = ("--server", service.server.address, "--token", token)
    (tmp_path / "mybot.py").write_text(BOT)
    status, out, err = bummerl(capsys, "bot", "upload", f"{tmp_path / 'mybot.py'}:MyBot",
                               *server)
    assert status == 0, err
    assert out.startswith("uploaded mybot version 3.1: building\n")  # the class's version
    folder = tmp_path / "src"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "mybot.py").write_text(BOT)
    status, out, err = bummerl(capsys, "bot", "upload", str(folder), "--entry",
                               "pkg/mybot.py:MyBot", "--version", "3.2", "--people", "casual",
                               *server)
    assert status == 0 and "version 3.2: building" in out, err
    with zipfile.ZipFile(tmp_path / "bot.zip", "w") as zf:
        zf.writestr("mybot.py", BOT)
    status, out, err = bummerl(capsys, "bot", "upload", str(tmp_path / "bot.zip"), "--entry",
                               "mybot.py:MyBot", "--version", "3.3", *server)
    assert status == 0 and "version 3.3: building" in out, err
    with service.sessions() as s:
        rows = s.scalars(select(HostedVersion).order_by(HostedVersion.id)).all()
    assert [(r.version, r.entry, r.people) for r in rows] == [
        ("3.1", "mybot.py:MyBot", None), ("3.2", "pkg/mybot.py:MyBot", "casual"),
        ("3.3", "mybot.py:MyBot", None)]

    status, out, err = bummerl(capsys, "bot", "versions", *server)
    assert status == 0 and out.splitlines()[1].split()[:4] == ["mybot", "3.3", "building", "0"]
    with service.sessions() as s:  # what a failed build leaves (the workers' part)
        row = s.scalar(select(HostedVersion).where(HostedVersion.version == "3.1"))
        hosted.set_state(row, hosted.FAILED, "the build failed:\nFile \"/bot/mybot.py\", line 2")
        row.build_log = "STEP 1/5\nSyntaxError\n"
        s.commit()
    status, out, err = bummerl(capsys, "bot", "logs", "3.1", "--build", *server)
    assert status == 0 and out == ("# mybot 3.1: failed — the build failed:\nFile "
                                   "\"/bot/mybot.py\", line 2\nSTEP 1/5\nSyntaxError\n")
    status, out, err = bummerl(capsys, "bot", "stop", "3.3", "--reason", "enough", *server)
    assert (status, out) == (0, "mybot 3.3: stopped\n"), err
    status, out, err = bummerl(capsys, "bot", "resume", "3.3", *server)
    assert status == 1 and out == "" and err.count("\n") == 1 and "validation" in err

    # the operator names the bot
    operator = ("--server", service.server.address, "--token", OPERATOR, "--bot", "mybot")
    status, out, err = bummerl(capsys, "bot", "versions", *operator)
    assert status == 0 and [line.split()[1] for line in out.splitlines()[1:]] == [
        "3.3", "3.2", "3.1"]
    status, out, err = bummerl(capsys, "bot", "stop", "3.2", *operator)
    assert (status, out) == (0, "mybot 3.2: stopped\n"), err


@pytest.mark.parametrize("args, words", [
    (["bot.py"], "name the class"),
    (["nothere.py:MyBot"], "nothere.py"),
    (["src"], "--entry"),
    (["--image", "ghcr.io/me/bot:1", "bot.py:MyBot"], "--image"),
])
def test_a_bad_upload_is_one_line_and_sends_nothing(service, capsys, tmp_path, monkeypatch,
                                                   args, words):
    _, token = service.register("mybot")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text(BOT)
    (tmp_path / "src").mkdir()
    status, out, err = bummerl(capsys, "bot", "upload", *args, "--server",
                               service.server.address, "--token", token)
    assert status == 1 and out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert words in err, err
    with service.sessions() as s:
        assert s.scalar(select(HostedVersion)) is None
