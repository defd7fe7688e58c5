"""Hostile hosted bots, each contained (issue 46's evidence), with podman: ONE image holding
tests/hosting/bots/hostile.py is built on the cached kit base (hosting.podman.ensure_base),
and every attack runs in a container of it (hosting.podman.start: the sandbox of
hosting.sandbox) against a real service listening on a unix socket, the socket's folder mounted
into the container. The bot's own registered token is its BUMMERL_TOKEN. It connects nowhere
but the socket, finds no secret but its own token, cannot fork, allocate, write or print past
its limits, gets at most half a core, forfeits on time when it spins at its turn; a syntax
error and a missing requirement fail their builds with the line that says why; the good bot
plays a whole match against a kit bot on the host, and finds a restarted service again through
the same socket."""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from bummerl.v1 import match_pb2, match_pb2_grpc
from hostedkit import Site
from servicekit import OPERATOR, auth

from client import Runner
from examples.random_bot import RandomBot
from hosting import podman
from hosting.archive import pack
from hosting.sandbox import Limits

pytestmark = pytest.mark.podman
ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "bots"
LABEL = f"bummerl.hosted.test={os.getpid()}"
# secrets of the site's processes (in this process's environment, so in podman's too): none
# may reach a container
SITE_SECRETS = {"BUMMERL_OPERATOR_TOKEN": f"operator-{uuid.uuid4().hex}",
                "BUMMERL_HOUSE_TOKEN": f"house-{uuid.uuid4().hex}",
                "DATABASE_URL": f"postgresql://secret-{uuid.uuid4().hex}@db/bummerl"}


@pytest.fixture(scope="module")
def image(base: str) -> Iterator[str]:
    tag = f"localhost/bummerl-hosted-test/hostile-{os.getpid()}:1"
    result = podman.build_version(tag, pack(BOTS, "hostile.py:Hostile"), "hostile.py:Hostile")
    assert result.ok, result.log
    try:
        yield tag
    finally:
        for container in podman.containers(LABEL):
            podman.stop(container.name, grace_s=0)
        podman.remove_image(tag)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    site = Site(tmp_path_factory.mktemp("hosted-site"))
    try:
        yield site
    finally:
        site.close()


def run_to_end(site: Site, image: str, attack: str, timeout: float = 60, *,
               version_image: str | None = None) -> tuple[podman.Container, str]:
    """Start the hostile bot with `attack` (or the image `version_image`) under a fresh
    bot's token, wait until it exits; its container and its log."""
    name = f"hostile-{attack.split(':')[0]}-{uuid.uuid4().hex[:6]}"
    _, token = site.register(name)
    podman.start(name, version_image or image, token, site.socket_dir, Limits(),
                 {LABEL.split("=")[0]: LABEL.split("=")[1]}, ["--version", attack])
    try:
        deadline = time.monotonic() + timeout
        while True:
            found = {c.name: c for c in podman.containers(LABEL)}
            if found[name].state == "exited":
                return found[name], podman.logs(name)
            assert time.monotonic() < deadline, podman.logs(name)
            time.sleep(0.2)
    finally:
        podman.stop(name, grace_s=0)


def results(log: str) -> dict[str, str]:
    return dict(re.findall(r"^RESULT (\S+) (.*)$", log, re.M))


def test_no_network_but_the_socket(site: Site, image: str):
    port = site.server.port
    container, log = run_to_end(site, image, f"net:6379,5432,{port},8000")
    found = results(log)
    assert container.exit_code == 3, log
    for target in ("127.0.0.1:6379", "127.0.0.1:5432", f"127.0.0.1:{port}", "127.0.0.1:8000",
                   "1.1.1.1:443", "10.0.2.2:80"):
        assert found[f"connect:{target}"].startswith("refused:"), log
    assert found["dns"].startswith("refused:"), log
    assert found["interfaces"] == "lo", log  # a loopback of its own, nothing else


def test_its_own_token_is_the_only_secret_it_finds(site: Site, image: str, monkeypatch):
    for name, value in SITE_SECRETS.items():
        monkeypatch.setenv(name, value)
    words = ",".join([OPERATOR, *SITE_SECRETS.values()])
    container, log = run_to_end(site, image, f"secrets:{words}")
    found = results(log)
    assert found["own_token"] == "present", log
    env = set(found["env"].split(","))
    assert env & {*SITE_SECRETS, "REDIS_URL", "BUMMERL_HOUSE_TOKEN_SHA256"} == set(), log
    assert "BUMMERL_TOKEN" in env and "BUMMERL_TOKEN" in found["pid1env"].split(","), log
    assert found["files"] == "none", log  # not even its own token is in a file
    assert found["Uid"] == "10001/10001/10001/10001", log
    assert found["CapEff"] == found["CapBnd"] == "0000000000000000", log  # no capabilities
    assert found["NoNewPrivs"] == "1", log
    assert found["Seccomp"] == "2", log  # a filter: podman's default profile


def test_forking_without_end_stops_at_the_process_limit(site: Site, image: str):
    container, log = run_to_end(site, image, "fork")
    stopped = re.fullmatch(r"stopped:(\d+):11", results(log)["fork"])  # EAGAIN
    assert stopped and int(stopped.group(1)) < Limits().pids, log


def test_allocating_without_end_is_killed_at_the_memory_limit(site: Site, image: str):
    container, log = run_to_end(site, image, "alloc")
    assert container.exit_code == 137, log  # SIGKILL by the cgroup's OOM killer
    reached = [int(mb) for mb in re.findall(r"^RESULT allocated_mb (\d+)$", log, re.M)]
    assert reached and max(reached) <= Limits().memory_mb, log


def test_writing_a_gigabyte_is_refused_everywhere(site: Site, image: str):
    container, log = run_to_end(site, image, "write")
    found = results(log)
    assert found["write:/bot/big"] == "stopped:0:30", log  # EROFS: read-only root
    assert found["write:/big"] == "stopped:0:30", log
    assert found["write:/run/bummerl/big"] == "stopped:0:30", log  # the socket's folder: ro
    tmp = re.fullmatch(r"stopped:(\d+):28", found["write:/tmp/big"])  # ENOSPC
    assert tmp and int(tmp.group(1)) <= Limits().tmp_mb, log
    shm = re.fullmatch(r"stopped:(\d+):28", found["write:/dev/shm/big"])
    assert shm and int(shm.group(1)) <= 1, log


def test_printing_100_mb_keeps_at_most_the_log_limit(site: Site, image: str):
    container, log = run_to_end(site, image, "print", timeout=120)
    assert container.exit_code == 3
    assert "RESULT done print" in log, log[-500:]
    assert len(log.encode()) <= Limits().log_mb << 20, len(log)


def test_spinning_gets_at_most_half_a_core(site: Site, image: str):
    container, log = run_to_end(site, image, "spin")
    found = results(log)
    if "cgroup:cpu.max" in found:  # cgroups v2: "quota/period"
        quota, period = (int(n) for n in found["cgroup:cpu.max"].split("/"))
    else:
        quota, period = int(found["cgroup:cpu.cfs_quota_us"]), int(
            found["cgroup:cpu.cfs_period_us"])
    assert quota / period == Limits().cpus, log
    # what it got in 2 s of spinning: never more than the quota (less on a busy machine)
    assert 0 < float(found["cpu_share"]) <= Limits().cpus + 0.1, log


def play_one_match(site: Site, image: str, attack: str) -> tuple[match_pb2.Match, str]:
    """A match between the hosted bot (seat 0, `--version attack --matches 1`) and a kit bot on
    the host over the loopback port, to its end; the match, and the container's log."""
    hosted_id, hosted_token = site.register(f"hosted-{attack}")
    host_id, host_token = site.register(f"host-vs-{attack}")
    match = match_pb2_grpc.MatchServiceStub(site.channel).CreateMatch(
        match_pb2.CreateMatchRequest(bot_ids=[hosted_id, host_id], seed=46),
        metadata=auth(OPERATOR)).match
    runner = Runner(RandomBot(seed=1), site.server.address, host_token, max_matches=1)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    name = f"hostile-{attack}-{uuid.uuid4().hex[:6]}"
    podman.start(name, image, hosted_token, site.socket_dir, Limits(),
                 {LABEL.split("=")[0]: LABEL.split("=")[1]}, ["--version", attack,
                                                              "--matches", "1"])
    stub = match_pb2_grpc.MatchServiceStub(site.channel)
    try:
        deadline = time.monotonic() + 120
        while (done := stub.GetMatch(match_pb2.GetMatchRequest(match_id=match.match_id),
                                     metadata=auth(OPERATOR)).match).state == \
                match_pb2.MATCH_STATE_RUNNING:
            assert time.monotonic() < deadline, podman.logs(name)
            time.sleep(0.5)
        if attack == "good":  # it leaves once its match is over
            while {c.name: c for c in podman.containers(LABEL)}[name].state != "exited":
                assert time.monotonic() < deadline, podman.logs(name)
                time.sleep(0.2)
            assert {c.name: c for c in podman.containers(LABEL)}[name].exit_code == 0
        log = podman.logs(name)
    finally:
        podman.stop(name, grace_s=0)
        thread.join(30)
        runner.stop()
    return done, log


def test_the_good_bot_plays_a_whole_match_through_the_socket(site: Site, image: str):
    match, log = play_one_match(site, image, "good")
    assert match.state == match_pb2.MATCH_STATE_FINISHED, (match, log)
    assert match.end_reason == match_pb2.END_REASON_PLAYED, (match, log)


def test_spinning_at_its_turn_forfeits_on_time(site: Site, image: str):
    match, log = play_one_match(site, image, "slow")
    assert match.end_reason == match_pb2.END_REASON_FORFEIT_TIMEOUT, (match, log)
    assert match.forfeit_seat == 0, match  # the hosted bot's seat


def wait_for(name: str, text: str, timeout: float = 60) -> str:
    """The container's log once it holds `text`."""
    deadline = time.monotonic() + timeout
    while text not in (log := podman.logs(name)):
        assert time.monotonic() < deadline, log
        time.sleep(0.2)
    return log


def test_a_restarted_service_is_found_again_through_the_same_socket(site: Site, image: str):
    _, token = site.register("hosted-restart")
    name = f"hostile-restart-{uuid.uuid4().hex[:6]}"
    podman.start(name, image, token, site.socket_dir, Limits(),
                 {LABEL.split("=")[0]: LABEL.split("=")[1]}, ["--version", "good"])
    try:
        wait_for(name, "connected to unix:/run/bummerl/service.sock")
        site.restart()  # the socket file is made again: the mounted folder shows the new one
        log = wait_for(name, "reconnected to unix:/run/bummerl/service.sock")
        assert {c.name: c for c in podman.containers(LABEL)}[name].state == "running", log
    finally:
        podman.stop(name, grace_s=0)


def test_a_syntax_error_fails_the_build_with_its_line(base: str, tmp_path: Path):
    (tmp_path / "bad.py").write_text("class Bad:\n    def act(self, o)\n        return 0\n")
    tag = f"localhost/bummerl-hosted-test/bad-{os.getpid()}:1"
    result = podman.build_version(tag, pack(tmp_path / "bad.py", "bad.py:Bad"), "bad.py:Bad",
                                  base=base)
    podman.remove_image(tag)
    assert not result.ok
    assert re.search(r'File "/bot/bad.py", line 2', result.log), result.log
    assert "SyntaxError" in result.log, result.log


def test_a_missing_requirement_fails_the_build_naming_it(base: str, tmp_path: Path):
    (tmp_path / "ok.py").write_text("X = 1\n")
    tag = f"localhost/bummerl-hosted-test/req-{os.getpid()}:1"
    result = podman.build_version(tag, pack(tmp_path / "ok.py", "ok.py:X"), "ok.py:X",
                                  "bummerl-no-such-package-46==1.0\n", base=base)
    podman.remove_image(tag)
    assert not result.ok
    assert "bummerl-no-such-package-46" in result.log, result.log
    assert re.search(r"No matching distribution|Could not find a version", result.log), \
        result.log


NESTED = """import os
from helper import VALUE
print("RESULT nested", VALUE, os.getcwd(), open("data.txt").read().strip(), flush=True)
raise SystemExit(3)
"""


def test_a_bot_in_a_folder_imports_its_neighbours_and_prune_keeps_what_is_asked(
        site: Site, image: str, tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "nested.py").write_text(NESTED)
    (tmp_path / "src" / "helper.py").write_text("VALUE = 46\n")
    (tmp_path / "src" / "data.txt").write_text("beside it\n")
    prefix = f"localhost/bummerl-hosted-test/prune-{os.getpid()}-"
    assert podman.build_version(f"{prefix}1:v", pack(tmp_path, "src/nested.py:Nested"),
                                "src/nested.py:Nested").ok
    # the entry's folder is its working folder and on its path, as where its author runs it
    container, log = run_to_end(site, image, "nested", version_image=f"{prefix}1:v")
    assert results(log)["nested"] == "46 /bot/src beside it", log
    assert podman.build_version(f"{prefix}2:v", pack(BOTS / "hostile.py", "hostile.py:Hostile"),
                                "hostile.py:Hostile").ok
    removed = podman.prune(keep={f"{prefix}2:v"}, prefix=prefix, bases=False)
    assert removed == [f"{prefix}1:v"]
    assert podman.remove_image(f"{prefix}2:v") and not podman.remove_image(f"{prefix}2:v")
    assert podman.image_exists(image)


def test_podman_errors_name_the_command():
    with pytest.raises(podman.PodmanError, match=r"`podman logs no-such-container-46` failed"):
        podman.logs("no-such-container-46")
    podman.stop("no-such-container-46")  # nothing to stop: no error
