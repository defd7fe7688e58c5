"""bench/hosted.py runs as docs/hosted-bench.md gives it, with its smallest settings (`--quick`:
2 hosted bots, one round) on the cached kit base image, and prints each figure beside a remote
bot's (or one hosted bot's, or the remote bot's beside no spinning hosted bot) measured in the
same run, with the ratio, and the spinning bot's match forfeited on time; it leaves no container,
image or folder behind, also when it is stopped (SIGTERM) halfway. The figures belong to the
bench, not here."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostedkit import podman_runs

from hosting import podman

ROOT = Path(__file__).resolve().parents[2]
NUMBER = r"[0-9]+\.[0-9]+"
RATIO = r"[0-9]+\.[0-9]+x"
LINES = [
    "upload -> validation match over", "upload -> live", "live -> connected",
    "live -> first ladder match over", "upload -> first ladder match started",
    "upload -> first ladder match over", "idle memory \\(RSS\\)",
    "idle CPU", "turn gap p50", "turn gap p99", "2 hosted: start -> all connected",
    "2 hosted: idle memory \\(RSS\\) in all", "2 hosted: idle CPU in all",
    "2 hosted: turn gap p50", "2 hosted: turn gap p99", "1 spinning: remote turn gap p50",
    "1 spinning: remote turn gap p99", "1 spinning: their CPU in all"]

pytestmark = pytest.mark.podman


def documented() -> list[str]:
    doc = (ROOT / "docs" / "hosted-bench.md").read_text()
    found = re.search(r"^(\.venv/bin/python bench/hosted\.py)$", doc, re.M)
    assert found, "docs/hosted-bench.md gives no `.venv/bin/python bench/hosted.py` line"
    return found.group(1).split()


def cached_base() -> None:
    """The kit's base image, built once if it is not here (the bench's figures assume it)."""
    podman_runs()
    done = subprocess.run(["bash", "scripts/image", "ensure-base"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    podman.ensure_base()


def left_behind(site: str) -> list[str]:
    """What the bench named `site` left: containers, images, folders."""
    images = podman.podman("images", "--format", "{{.Repository}}").stdout.split()
    return ([c.name for c in podman.containers(f"bummerl.site={site}")]
            + [i for i in images if site in i]
            + [str(p) for p in Path("/tmp").glob(f"bummerl-{site}")])  # its socket's folder


def test_the_hosted_bench_prints_each_figure_beside_its_peer(tmp_path):
    cached_base()
    done = subprocess.run([*documented(), "--quick"], capture_output=True, text=True,
                          timeout=240, cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"base localhost/bummerl-hosted-base:\w+ cached", out), out
    for label in LINES:
        assert re.search(rf"^{label} +{NUMBER} (s|MB|ms/s|ms) +{NUMBER} (s|MB|ms/s|ms) +{RATIO}",
                         out, re.M), f"no figure with a ratio for {label!r}:\n{out}"
    assert re.search(r"matches not played out: 0\)", out), out
    assert re.search(r"not played out: 0\)$", out, re.M), out
    # the spinning bot's one match is forfeited on time; the remote bot's beside it played out
    assert re.search(r"^1 spinning: forfeited on time +1 of 1 matches", out, re.M), out
    assert re.search(r"spinning the CPU.*not played out: 0\)$", out, re.M), out
    site = re.search(r"every container and image it made \((bench\w+)\) removed", out)
    assert site, out
    assert left_behind(site.group(1)) == []
    assert list(tmp_path.iterdir()) == []


def test_a_bench_stopped_halfway_removes_what_it_made(tmp_path):
    cached_base()
    bench = subprocess.Popen([sys.executable, "bench/hosted.py", "--quick"], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "TMPDIR": str(tmp_path)})
    assert bench.stdout is not None
    out = ""
    try:
        for line in bench.stdout:  # its hosted bot is live, its container running: stop it
            out += line
            if line.startswith("live -> connected"):
                bench.send_signal(signal.SIGTERM)
                break
        out += bench.stdout.read()
        assert bench.wait(60) == 143, out
    finally:
        bench.kill()
    site = re.search(r"named (bench\w+)", out)
    assert site and "live -> connected" in out, out
    assert left_behind(site.group(1)) == []
    assert list(tmp_path.iterdir()) == []
