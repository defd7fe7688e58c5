"""docs/hosted.md's walkthrough runs as written, with podman: `bummerl up` hosts bots, the upload
follows its version to live through its validation match against house-random, the hosted bot
plays a ladder match (`up.log`'s match lines: the one line the test adds waits for it), lists,
logs, stops, and `bummerl up` stopping leaves no container of its site. Only the port, the
database, the broker's and var folders, the log's path and the site's label are changed."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from hosting import podman

pytestmark = pytest.mark.podman
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "hosted.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def walkthrough() -> str:
    block = DOC.read_text().split("<!-- hosted-walkthrough -->", 1)[1]
    found = re.search(r"```sh\n(.*?)```", block, re.S)
    assert found
    return found.group(1)


@pytest.mark.timeout(600)
def test_the_walkthrough_runs_as_written(tmp_path, base):
    script = walkthrough()
    port = free_port()
    log = tmp_path / "up.log"
    script = script.replace("127.0.0.1:50051", f"127.0.0.1:{port}").replace(" up.log", f" {log}")
    # the one line added: wait until the hosted bot has played a ladder match after its
    # validation match (two of up.log's match lines name it)
    versions = ".venv/bin/bummerl bot versions"
    assert versions in script
    script = script.replace(versions, "for _ in $(seq 1 240); do [ \"$(grep -Ec 'match [0-9]+: "
                            "(mybot beat|.* beat mybot)' " + str(log) + ")\" -ge 2 ] && break; "
                            "sleep 1; done\n" + versions, 1)
    script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    site = f"doc{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "BUMMERL_TOKEN", "REDIS_URL", "BUMMERL_BROKER_URL",
                        "DATABASE_URL", "BUMMERL_HOOKS")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'hosted.sqlite3'}",
               BUMMERL_BROKER_DIR=str(tmp_path / "broker"), BUMMERL_VAR=str(tmp_path / "var"),
               BUMMERL_BEAT_SCHEDULE=str(tmp_path / "beat"), BUMMERL_HOSTED_SITE=site,
               COLUMNS="400")
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, stdout=out,
                              stderr=err, timeout=560)
    stdout, stderr = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    up = log.read_text() if log.exists() else ""
    shown = f"{stdout}\n--- stderr\n{stderr}\n--- up.log\n{up}"
    assert done.returncode == 0, shown
    assert re.search(r"^uploaded mybot version 1\.0: building$", stdout, re.M), shown
    assert re.search(r"^validating \(validation match \d+\)$", stdout, re.M), shown
    assert re.search(r"^live$", stdout, re.M), shown
    assert re.search(r"^mybot\s+1\.0\s+live\s+0", stdout, re.M), shown
    assert re.search(r"^# mybot 1\.0: live$", stdout, re.M), shown
    assert re.search(r"^mybot 1\.0: stopped$", stdout, re.M), shown
    assert len(re.findall(r"match \d+: (mybot beat \S+|\S+ beat mybot) in \d+ hands?", up)) >= 2, \
        shown  # the validation match, then a ladder match
    assert podman.containers(f"bummerl.site={site}") == [], shown
