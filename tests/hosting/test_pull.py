"""hosting.podman.pull, an author's image (`bummerl bot upload --image REF`): a `localhost/`
image (built with podman on this machine, in no registry) is used as it is when it is here, and
named when it is not, without asking a registry; any other reference is pulled (no podman
needed: its calls are recorded)."""

from __future__ import annotations

import subprocess

import pytest

from hosting import podman


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    made: list[tuple[str, ...]] = []
    here = {"localhost/mybot-ts:1.0"}

    def fake(*args: str, **_: object) -> subprocess.CompletedProcess[str]:
        made.append(args)
        code = 0 if args[:2] != ("image", "exists") or args[2] in here else 1
        return subprocess.CompletedProcess(["podman", *args], code, "pulled\n", "")
    monkeypatch.setattr(podman, "podman", fake)
    return made


def test_a_local_image_is_used_as_it_is(calls):
    result = podman.pull("localhost/mybot-ts:1.0")
    assert result.ok and "not pulled" in result.log
    assert calls == [("image", "exists", "localhost/mybot-ts:1.0")]


def test_a_local_image_not_here_is_named_not_pulled(calls):
    result = podman.pull("localhost/other:2")
    assert not result.ok
    assert "localhost/other:2 is not on this machine" in result.log and "push it" in result.log
    assert ("pull", "localhost/other:2") not in calls


@pytest.mark.parametrize("ref", ["docker.io/someone/mybot:1.0", "localhost:5000/mybot:1.0",
                                 "ghcr.io/someone/mybot@sha256:" + "a" * 64])
def test_other_references_are_pulled(calls, ref):
    assert podman.pull(ref).ok
    assert calls == [("pull", ref)]
