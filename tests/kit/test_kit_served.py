"""The dashboard serves the kit of the running version (web.kit, docs/kit.md): `/kit` gives the
one-line `pip install` command with the site's own address, `/kit/bummerl_kit-VERSION-py3-none-
any.whl` the wheel built into the kit folder (a clear 404 without one), and that command, run
as the page writes it against the dashboard under waitress (real HTTP), installs the kit into a
fresh virtual environment."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from kitkit import Kit, installed_kit

from db.schema import create_all
from web import create_app
from web.kit import site_version, wheel_name
from web.server import shutdown, url_of, waitress_server

pytestmark = pytest.mark.timeout(900)  # builds the kit (once per run) and installs it again


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


def config(tmp_path: Path, kit_dir: Path) -> dict[str, object]:
    url = f"sqlite:///{tmp_path / 'site.sqlite3'}"
    create_all(url)
    return {"DATABASE_URL": url, "KIT_DIR": str(kit_dir), "TESTING": True}


def test_no_wheel_built_is_a_clear_404(tmp_path):
    client = create_app(config(tmp_path, tmp_path / "kit")).test_client()
    name = wheel_name(site_version())
    answer = client.get(f"/kit/{name}")
    assert answer.status_code == 404
    text = html.unescape(answer.get_data(as_text=True))
    assert f"no kit wheel was built for version {site_version()}" in text
    assert "bash scripts/kit --outdir DIR" in text
    page = client.get("/kit")
    assert page.status_code == 200
    assert "No kit wheel was built" in page.get_data(as_text=True)


def test_a_fresh_app_serves_the_built_wheel(kit, tmp_path):
    folder = tmp_path / "kit"
    folder.mkdir()
    name = wheel_name(site_version())
    assert Path(kit.wheel).name == name  # the build names it as the web serves it
    shutil.copyfile(kit.wheel, folder / name)
    client = create_app(config(tmp_path, folder)).test_client()
    answer = client.get(f"/kit/{name}")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/zip"
    assert answer.data == Path(kit.wheel).read_bytes()
    other = client.get("/kit/bummerl_kit-0.0.1-py3-none-any.whl")  # not this version's
    assert other.status_code == 404
    assert f"its kit is /kit/{name}" in html.unescape(other.get_data(as_text=True))
    page = client.get("/kit", base_url="https://bummerl.test")
    assert page.status_code == 200
    assert f"pip install https://bummerl.test/kit/{name}" in page.get_data(as_text=True)


def test_pip_install_from_the_running_dashboard(kit, tmp_path):
    folder = tmp_path / "kit"
    folder.mkdir()
    shutil.copyfile(kit.wheel, folder / Path(kit.wheel).name)
    server = waitress_server("127.0.0.1", 0, config(tmp_path, folder), threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(url_of(server) + "kit", timeout=10) as answer:
            page = answer.read().decode()
        found = re.search(r"<code>(pip install (\S+))</code>", page)
        assert found, page
        assert found.group(2).startswith(url_of(server) + "kit/bummerl_kit-")
        venv = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        command = found.group(1).split()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run([str(venv / "bin" / command[0]), *command[1:]],
                              capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        shutdown(server)
        thread.join(10)
    done = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import bummerl_kit, importlib.metadata as m; "
                           "print(m.version('bummerl-kit'), bummerl_kit.Bot.__module__)"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [site_version(), "bummerl_kit.client.bot"]
