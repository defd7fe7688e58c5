"""`bummerl up` builds the kit's wheel for the dashboard (cli/kitwheel.py) when it is missing or
older than its sources, with the kit's own build, and leaves an up-to-date one alone."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from cli.kitwheel import kit_url, stale, start_build, wheel_path
from cli.up import header_lines

pytestmark = pytest.mark.timeout(600)


def test_a_missing_or_older_wheel_is_built_an_up_to_date_one_is_left(tmp_path):
    folder = tmp_path / "kit"
    folder.mkdir()
    assert stale(folder)
    proc, note = start_build(folder, tmp_path / "kit.log")
    assert proc is not None and note.startswith(f"building {wheel_path(folder)}")
    assert proc.wait(300) == 0, (tmp_path / "kit.log").read_text()
    wheel = wheel_path(folder)
    with zipfile.ZipFile(wheel) as built:
        assert "bummerl_kit/client/runner.py" in built.namelist()
    assert not stale(folder)
    proc, note = start_build(folder, tmp_path / "kit.log")
    assert proc is None and note == f"{wheel} (up to date)"
    os.utime(wheel, (0, 0))  # older than every source
    assert stale(folder)


def test_up_says_where_the_kit_is_served():
    header = {"service": "127.0.0.1:50051", "broker": "redis", "database": "sqlite://",
              "logs": "var/log", "token": None, "token_note": "", "web": "http://h:8000/",
              "kit": "var/kit/bummerl_kit-0.1.0-py3-none-any.whl (up to date)"}
    text = [str(line) for line in header_lines(header)]
    assert ("the bot kit (http://h:8000/kit): var/kit/bummerl_kit-0.1.0-py3-none-any.whl "
            "(up to date)") in text


def test_the_url_the_service_names_to_a_too_old_kit():
    name = wheel_path(Path()).name
    assert kit_url("127.0.0.1:8000") == f"http://127.0.0.1:8000/kit/{name}"
    assert kit_url("0.0.0.0:8080") == f"http://127.0.0.1:8080/kit/{name}"
    assert kit_url("site.example:80") == f"http://site.example:80/kit/{name}"


def test_the_service_reads_the_kit_url_from_the_environment(monkeypatch):
    from db.settings import Settings

    monkeypatch.setenv("BUMMERL_KIT_URL", "http://site.test/kit/bummerl_kit-1-py3-none-any.whl")
    assert Settings.from_env().kit_url == "http://site.test/kit/bummerl_kit-1-py3-none-any.whl"
    monkeypatch.delenv("BUMMERL_KIT_URL")
    assert Settings.from_env().kit_url is None
