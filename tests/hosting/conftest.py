"""The kit's base image for the hosted bots' tests: built once per run (then cached by podman)."""

from __future__ import annotations

import subprocess

import pytest
from hostedkit import ROOT, podman_runs

from hosting import podman


@pytest.fixture(scope="session")
def base() -> str:
    podman_runs()
    # the project's base, built once if no base is here (tests/image may be building it too:
    # scripts/image builds it once, the other waits)
    done = subprocess.run(["bash", "scripts/image", "ensure-base"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return podman.ensure_base()
