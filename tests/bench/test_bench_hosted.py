"""bench/hosted.py runs as docs/hosted-bench.md gives it, with its smallest settings (`--quick`:
2 hosted bots, one round) on the cached kit base image, and prints each figure beside a remote
bot's (or one hosted bot's) measured in the same run, with the ratio; it leaves no container,
image or socket folder behind. The figures belong to the bench, not here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hostedkit import podman_runs

from hosting import podman

ROOT = Path(__file__).resolve().parents[2]
NUMBER = r"[0-9]+\.[0-9]+"
RATIO = r"[0-9]+\.[0-9]+x"
LINES = [
    "upload -> validation match over", "upload -> live", "live -> connected",
    "live -> first challenge over", "upload -> first challenge over", "idle memory \\(RSS\\)",
    "idle CPU", "turn gap p50", "turn gap p99", "2 hosted: start -> all connected",
    "2 hosted: idle memory \\(RSS\\) in all", "2 hosted: idle CPU in all",
    "2 hosted: turn gap p50", "2 hosted: turn gap p99"]

pytestmark = pytest.mark.podman


def documented() -> list[str]:
    doc = (ROOT / "docs" / "hosted-bench.md").read_text()
    found = re.search(r"^(\.venv/bin/python bench/hosted\.py)$", doc, re.M)
    assert found, "docs/hosted-bench.md gives no `.venv/bin/python bench/hosted.py` line"
    return found.group(1).split()


def test_the_hosted_bench_prints_each_figure_beside_its_peer():
    podman_runs()
    done = subprocess.run(["bash", "scripts/image", "ensure-base"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    podman.ensure_base()  # cached before the bench's figures (it says so otherwise)
    done = subprocess.run([*documented(), "--quick"], capture_output=True, text=True,
                          timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"base localhost/bummerl-hosted-base:\w+ cached", out), out
    for label in LINES:
        assert re.search(rf"^{label} +{NUMBER} (s|MB|ms/s|ms) +{NUMBER} (s|MB|ms/s|ms) +{RATIO}",
                         out, re.M), f"no figure with a ratio for {label!r}:\n{out}"
    assert re.search(r"matches not played out: 0\)", out), out
    assert re.search(r"not played out: 0\)$", out, re.M), out
    left = re.search(r"every container and image it made \(site (bench\w+)\) removed", out)
    assert left, out
    site = left.group(1)
    assert podman.containers(f"bummerl.site={site}") == []
    assert site not in podman.podman("images", "--format", "{{.Repository}}").stdout
