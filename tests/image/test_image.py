"""The image (the Dockerfile) runs the site: `bash scripts/image smoke` builds it with podman and
runs the site from it with `bash scripts/image up` as docs/deploy.md does (serve, two workers,
beat and web, separate containers: uid 10001, read-only root, the manifests' writable paths) on
the real Redis and PostgreSQL; a kit bot on the host plays a
match against a house bot through them, the dashboard answers, each container's health check
passes, and everything is removed after: the containers, the database, and the image itself (a
tag of the test's own, built without keeping its steps' layers, removed with `bash scripts/image
remove`; only the base and the dependencies' image stay, for reuse). Needs podman with runc
(Debian: podman runc mmdebstrap; .ci/run installs them)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.podman


def podman_runs() -> None:
    """Skip (fail under BUMMERL_REQUIRE_SERVICES=1) where podman cannot run here."""
    done = subprocess.run(["bash", "scripts/image", "check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    if done.returncode == 0:
        return
    message = f"podman cannot run containers here: {(done.stderr or done.stdout).strip()}"
    if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: this test must run)")
    pytest.skip(message)


UNTAGGED = "<none>:<none>"


def images() -> dict[str, set[str]]:
    """Every image podman holds (intermediate ones too): id -> its names (`<none>:<none>` for
    an untagged one)."""
    done = subprocess.run(["podman", "images", "-a", "--no-trunc", "--format",
                           "{{.ID}} {{.Repository}}:{{.Tag}}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        image, _, name = line.partition(" ")
        found.setdefault(image, set()).add(name)
    return found


@pytest.mark.timeout(1200)
def test_the_site_runs_from_the_image(redis_url, postgres_url):
    podman_runs()
    before = images()
    ours = f"localhost/bummerl:test-{os.getpid()}"
    env = {**os.environ, "BUMMERL_IMAGE": ours, "BUMMERL_IMAGE_LAYERS": "false"}
    try:
        done = subprocess.run(["bash", "scripts/image", "smoke"], cwd=ROOT, capture_output=True,
                              text=True, timeout=1100, env=env)
    finally:
        removed = subprocess.run(["bash", "scripts/image", "remove"], cwd=ROOT,
                                 capture_output=True, text=True, timeout=300, env=env)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    # new images: ours, or untagged (the base, built on a first run, is kept for reuse; an
    # image another process tagged meanwhile is not ours)
    stray = {i: names for i, names in images().items()
             if i not in before and (ours in names or names == {UNTAGGED})}
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    lines = done.stdout.splitlines()
    assert "smoke: ok" in lines, out
    match = re.search(r"^image: match \d+ finished in [\d.]+ s: (\S+) won \((\w+)\)", done.stdout,
                      re.M)
    assert match, out
    assert match.group(2) != "forfeit_timeout", out  # the house bot moved: the worker played it
    assert re.search(r"^image: serve: SERVING [\d.]+ s after podman run$", done.stdout, re.M), out
    assert "image: health checks pass" in done.stdout, out
    assert re.search(r"^image: dashboard: HTTP 200", done.stdout, re.M), out
    # nothing left behind
    tag = re.search(r"removed the containers, the database (bummerl_smoke_\d+)", done.stdout)
    assert tag, out
    left = subprocess.run(["bash", "scripts/image", "leftovers", tag.group(1).split("_")[-1]],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert left.returncode == 0 and left.stdout.strip() == "", left.stdout + left.stderr
    assert not stray, f"the test left images behind: {stray}"
