"""An author's own image (`bummerl bot upload --image REF`): docs/any-language.md's commands, as
written, build the TypeScript example (examples/typescript/Containerfile) into an image and
upload it to a real local site with podman; the version goes building → validating → live (its
validation match against a kit bot on the host is played out, the TypeScript bot reaching the
service from its sandbox over the mounted unix socket), then the supervisor starts it and it
plays a challenge to its end. Its image is removed after.

Changed from the doc: the service's address, the image's name (one of its own: the machine is
shared) and the base, the doc's `--build-arg BASE=localhost/bummerl-base:bookworm` for where
Docker Hub cannot be reached (podman keeps its layers: the first build on a machine installs
Debian's nodejs and npm, a minute or two; later ones take seconds). The site's worker is this
process: the upload hook builds the version in a thread (workers/hooks.py sends a task)."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hostedkit import Site, challenge, played_out, podman_runs
from servicekit import CONFIG
from sqlalchemy import select

from client import Runner
from db import hosted
from db.hosted import HostedVersion
from db.models import FINISHED, PLAYED, Bot, Match
from examples.random_bot import RandomBot
from hosting import podman
from services.core import hooks
from services.ops import hosting as hosting_ops
from workers import hosted as supervisor
from workers.testing import wait_until

pytestmark = pytest.mark.podman
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "any-language.md"
HOSTING = replace(CONFIG, hosting="podman")
IMAGE = "localhost/mybot-ts:1.0"  # the doc's


def commands() -> tuple[str, str]:
    """The doc's block of commands, and the build argument it gives for a machine without
    Docker Hub."""
    text = DOC.read_text()
    block = re.search(r"<!-- typescript-image -->\n```sh\n(.*?)```", text, re.S)
    base = re.search(r"adding `(--build-arg BASE=\S+)` to `podman build`", text)
    assert block and base
    return block.group(1), base.group(1)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A site hosting with podman whose uploads are built here (the upload hook), with a kit
    bot on the host as the validation opponent."""
    podman_runs()
    if not podman.image_exists(podman.LOCAL_BASE):
        done = subprocess.run(["bash", "scripts/image", "base"], cwd=ROOT, capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
    site = Site(tmp_path, HOSTING)
    monkeypatch.setenv("BUMMERL_HOSTED_SOCKET", str(site.socket_dir / "service.sock"))
    monkeypatch.setenv("BUMMERL_SERVICE_ADDRESS", site.server.address)
    monkeypatch.setenv("BUMMERL_HOSTED_SITE", f"image{os.getpid()}")
    monkeypatch.setenv("BUMMERL_HOSTED_VALIDATION_OPPONENT", "sparring")
    monkeypatch.setenv("BUMMERL_VAR", str(tmp_path / "var"))
    builds: list[threading.Thread] = []

    def build(version_id: int) -> None:  # the worker's bummerl.hosted_build
        thread = threading.Thread(target=supervisor.build, args=(version_id,),
                                  kwargs={"sessions": site.sessions}, daemon=True)
        thread.start()
        builds.append(thread)
    monkeypatch.setattr(hooks, "on_hosted_upload", [build])
    _, token = site.register("sparring")
    sparring = Runner(RandomBot(), site.server.address, token)
    thread = threading.Thread(target=sparring.run, daemon=True)
    thread.start()
    site.sparring = token  # type: ignore[attr-defined]
    try:
        yield site
    finally:
        sparring.stop()
        thread.join(10)
        for build_thread in builds:
            build_thread.join(60)
        for container in podman.containers(f"bummerl.site={supervisor.site()}"):
            podman.stop(container.name, grace_s=0)
        site.close()


@pytest.mark.timeout(600)
def test_the_typescript_bot_as_an_image_goes_live_and_plays(site: Site, tmp_path: Path):
    script, base = commands()
    assert "podman build -t " + IMAGE + " -f examples/typescript/Containerfile ." in script
    assert "--image " + IMAGE in script and "127.0.0.1:50051" in script
    image = f"localhost/mybot-ts-{uuid.uuid4().hex[:8]}:1.0"
    script = (script.replace("podman build ", f"podman build {base} ", 1)
              .replace(IMAGE, image).replace("127.0.0.1:50051", site.server.address))
    bot_id, token = site.register("mybot")
    env = {k: v for k, v in podman.environment().items()
           if k not in ("PYTHONPATH", "BUMMERL_TOKEN", "BUMMERL_SERVER")}
    env.update(MYBOT_TOKEN=token, COLUMNS="400")
    try:
        with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
            done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, stdout=out,
                                  stderr=err, timeout=540)
        stdout, stderr = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
        with site.sessions() as s:
            row = s.scalars(select(HostedVersion).where(HostedVersion.bot_id == bot_id)).one()
            s.expunge(row)
        shown = f"{stdout}\n--- stderr\n{stderr[-4000:]}\n--- reason\n{row.reason}\n" \
                f"--- run log\n{row.run_log}"
        assert done.returncode == 0, shown
        assert re.search(r"^uploaded mybot version 1\.0: building$", stdout, re.M), shown
        assert re.search(r"^validating \(validation match \d+\)$", stdout, re.M), shown
        assert re.search(r"^live$", stdout, re.M), shown
        assert (row.kind, row.image_ref, row.image, row.state) == (
            hosted.IMAGE, image, image, hosted.LIVE), shown
        assert "not pulled" in (row.build_log or ""), row.build_log

        # its validation match against the kit bot was played out, unrated; the bot said so
        with site.sessions() as s:
            match = s.get(Match, row.validation_match_id)
            assert (match.state, match.end_reason, match.forfeit_seat, match.rated) == (
                FINISHED, PLAYED, None, False), shown
        assert "[mybot] connected to unix:/run/bummerl/service.sock as mybot" in row.run_log, \
            shown
        assert f"[mybot] match {match.id} ended:" in row.run_log, shown

        # live: the supervisor starts it, and it plays a challenge to its end
        name = supervisor.container_name(row.id)
        assert supervisor.reconcile_once(sessions=site.sessions) == [f"started {name}"]

        def connected() -> bool:
            with site.sessions() as s:
                return s.get(Bot, bot_id).connected_since is not None
        wait_until(connected, 60, what="the hosted TypeScript bot connected")
        played_out(site, challenge(site, site.sparring, "mybot"),  # type: ignore[attr-defined]
                   "the challenge played out")

        hosting_ops.stop(token, "1.0", config=HOSTING, sessions=site.sessions)
        assert supervisor.reconcile_once(sessions=site.sessions) == [f"removed {name}"]
    finally:
        for container in podman.containers(f"bummerl.site={supervisor.site()}"):
            podman.stop(container.name, grace_s=0)
        podman.remove_image(image)
    assert not podman.image_exists(image)
