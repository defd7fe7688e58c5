"""A reader that goes away (`bummerl tournament list | head -2`) stops a command quietly, with
the status a shell reports for a Unix tool ended by SIGPIPE (141), never a traceback or
"unexpected error: BrokenPipeError" (issue 29). Real commands writing into real pipes: one whose
reading end is closed before the command writes (so every write fails, whatever the timing), and
the shell pipelines of the issue."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from servicekit import OPERATOR, fresh_database, running_service

ROOT = Path(__file__).resolve().parents[2]
BUMMERL = Path(sys.executable).parent / "bummerl"
COMMAND = [str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]
CLOSED_PIPE = 141


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli-pipes")
    with fresh_database("sqlite", None, tmp) as database, running_service(database) as svc:  # type: ignore[arg-type]
        for name in ("pipe-a", "pipe-b", "pipe-c"):
            svc.register(name)
        env = environment(svc.server.address, tmp)
        for _ in range(3):
            done = subprocess.run([*COMMAND, "tournament", "create", "--format", "round-robin",
                                   "--bots", "pipe-a,pipe-b,pipe-c"], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        yield svc, tmp


def environment(address: str, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BUMMERL_TOKEN")}
    return {**env, "BUMMERL_SERVER": address, "BUMMERL_OPERATOR_TOKEN": OPERATOR,
            "DATABASE_URL": f"sqlite:///{tmp / 'offline.sqlite3'}"}


def into_a_closed_pipe(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `bummerl ARGS` with stdout a pipe whose reading end is already closed."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*COMMAND, *args], cwd=ROOT, env=env, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    return done


COMMANDS = [
    ["tournament", "list"],
    ["tournament", "show", "1"],
    ["tournament", "export", "1"],
    ["tournament", "export", "1", "--format", "json"],
    ["test", "list"],
    ["admin", "bots"],
    ["bot", "register", "pipe-new"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_closed_pipe_stops_the_command_quietly(service, args):
    svc, tmp = service
    done = into_a_closed_pipe(args, environment(svc.server.address, tmp))
    assert done.stderr == "", done.stderr
    assert done.returncode == CLOSED_PIPE


@pytest.mark.parametrize("args", [["--help"], ["tournament", "--help"]], ids=" ".join)
def test_help_into_a_closed_pipe_is_quiet(service, args):
    """argparse prints help and exits 0 itself, ignoring a failed write (Lib/argparse.py
    `_print_message`); what is left to check is that nothing reaches stderr."""
    svc, tmp = service
    done = into_a_closed_pipe(args, environment(svc.server.address, tmp))
    assert done.stderr == "" and done.returncode in (0, CLOSED_PIPE), done.stderr


def test_an_offline_command_too(service, tmp_path):
    svc, tmp = service
    documents = tmp_path / "documents.jsonl"
    documents.write_text('{"not": "a case"}\n' * 5000)  # many output lines, one per document
    done = into_a_closed_pipe(["replay", str(documents)], environment(svc.server.address, tmp))
    assert done.stderr == "" and done.returncode == CLOSED_PIPE, done.stderr


@pytest.mark.parametrize("command", [
    "bummerl tournament show 1 | head -2",
    "bummerl tournament list | head -2",
    "bummerl test list | head -1",
    "bummerl admin bots | head -1",
])
def test_the_pipelines_of_the_issue(service, command):
    """As a person types them: the first lines come out, nothing on stderr, and the command
    ends 0 (it wrote all before `head` left) or 141 (it did not)."""
    svc, tmp = service
    env = environment(svc.server.address, tmp)
    env["PATH"] = f"{Path(COMMAND[0]).parent}{os.pathsep}{env['PATH']}" if BUMMERL.exists() \
        else env["PATH"]
    if not BUMMERL.exists():
        pytest.skip("the installed `bummerl` script is needed for a shell pipeline")
    done = subprocess.run(["bash", "-c", f"{command}; echo \"status ${{PIPESTATUS[0]}}\""],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.stderr == "", done.stderr
    *lines, status = done.stdout.splitlines()
    assert lines and status in ("status 0", f"status {CLOSED_PIPE}"), done.stdout


def test_rich_output_too(service, tmp_path):
    """`simulate` prints its table with Rich, whose own answer to a closed pipe is exit 1."""
    svc, tmp = service
    done = into_a_closed_pipe(["simulate", "random", "bully", "-n", "4", "--seed", "1",
                               "--inline", "--chunk", "4"],
                              environment(svc.server.address, tmp_path))
    assert done.returncode == CLOSED_PIPE, done.stderr
    assert "Traceback" not in done.stderr and "error" not in done.stderr, done.stderr


def processes_with(marker: str) -> list[int]:
    """The processes whose environment holds `marker`."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def test_up_into_a_closed_pipe_stops_with_its_worker_and_scheduler(tmp_path):
    """`bummerl up | head -1`: the header cannot be written; up stops its worker and beat."""
    env = {**environment("127.0.0.1:1", tmp_path), "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat")}
    env.pop("BUMMERL_OPERATOR_TOKEN")
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL"):
        env.pop(name, None)
    done = into_a_closed_pipe(["up", "--address", "127.0.0.1:0", "--web", "off", "--duration",
                               "60"], env)
    assert done.returncode == CLOSED_PIPE and "Traceback" not in done.stderr, done.stderr
    deadline = time.monotonic() + 30
    while processes_with(str(tmp_path / "broker")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_with(str(tmp_path / "broker")), "a worker or beat was left running"
