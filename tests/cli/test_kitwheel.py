"""`bummerl up` builds the kit's wheel for the dashboard (cli/kitwheel.py) when it is missing or
older than its sources, with the kit's own build, and leaves an up-to-date one alone."""

from __future__ import annotations

import os
import zipfile

import pytest

from cli.kitwheel import stale, start_build, wheel_path
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
