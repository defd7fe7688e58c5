"""`bummerl up` as an operator runs it (issue 29), real processes on the embedded defaults:
its operator token is kept across restarts beside the database (mode 0600) unless one is given,
and without a terminal (`bummerl up | tee log`) it prints a line per finished match as they
finish, where it drew only the header."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MATCH_LINE = re.compile(r"^\d\d:\d\d:\d\d match \d+: \S+ beat \S+ in \d+ hands? \(\w+\)$")


def embedded_env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'bummerl.sqlite3'}",
           "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "COLUMNS": "400", **more}
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL", "BUMMERL_OPERATOR_TOKEN",
                 "BUMMERL_OPERATOR_TOKEN_SHA256", "BUMMERL_OPEN_REGISTRATION", "PYTHONPATH"):
        if name not in more:
            env.pop(name, None)
    return env


@contextlib.contextmanager
def up(tmp_path: Path, *args: str, **env: str):
    """`bummerl up` with stdout a pipe (no terminal), stopped by SIGTERM at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "up", "--address", "127.0.0.1:0", "--web", "off",
         "--matches", "2", "--duration", "240", *args], cwd=ROOT,
        env=embedded_env(tmp_path, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, bufsize=1)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def read_until(proc: subprocess.Popen, pattern: str, timeout: float) -> tuple[list[str], str]:
    """The lines `proc` printed until one matching `pattern` (returned too), read as they come."""
    assert proc.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if not ready:
            continue
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip("\n"))
        if re.search(pattern, seen[-1]):
            return seen, seen[-1]
    raise AssertionError(f"no line like {pattern!r} within {timeout} s:\n" + "\n".join(seen))


def header(proc: subprocess.Popen) -> dict[str, str]:
    """What the header says; piped, the join hint reads the token from its file (issue 44):
    "token" is the token that file holds, and it appears nowhere in the output."""
    lines, _ = read_until(proc, "Ctrl-C stops everything", 120)
    text = "\n".join(lines)
    found = {"service": re.search(r"service (\S+)", text).group(1)}  # type: ignore[union-attr]
    token = re.search(r'--operator-token "\$\(cat (\S+?)\)", then', text)
    note = re.search(r"operator token: (.*)", text)
    found["token"] = Path(token.group(1)).read_text().strip() if token else ""
    assert not found["token"] or found["token"] not in text
    found["note"] = note.group(1) if note else ""
    assert found["token"] or "kept in" not in found["note"], text  # a kept token is hinted
    found["text"] = text
    return found


def register(address: str, name: str, token: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", "bot", "register", name, "--server", address,
         "--operator-token", token], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


def test_the_token_is_kept_across_restarts_and_finished_matches_stream_without_a_terminal(
        tmp_path):
    kept = tmp_path / "bummerl.sqlite3.operator-token"
    with up(tmp_path) as first:
        got = header(first)
        assert got["token"] and got["note"] == f"new, kept in {kept}"
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert kept.read_text().strip() == got["token"]
        # A finished match's line arrives while `up` runs (the live table drew nothing here).
        _, line = read_until(first, r" match \d+: ", 180)
        assert MATCH_LINE.match(line), line
        assert first.poll() is None
    assert first.returncode == 0
    with up(tmp_path) as second:
        again = header(second)
        assert again["token"] == got["token"] and again["note"] == f"kept in {kept}"
        done = register(again["service"], "after-restart", got["token"])
        assert done.returncode == 0 and "bot id" in done.stdout, done.stderr
    assert second.returncode == 0


def test_a_given_token_is_used_and_not_stored(tmp_path):
    with up(tmp_path, "--operator-token", "given-by-flag") as proc:
        got = header(proc)
        assert got["token"] == "" and "the one given" in got["note"]
        assert register(got["service"], "by-flag", "given-by-flag").returncode == 0
        refused = register(got["service"], "by-other", "something-else")
        assert refused.returncode == 1 and "refused the operator token" in refused.stderr
    with up(tmp_path, BUMMERL_OPERATOR_TOKEN="given-by-env") as proc:
        got = header(proc)
        assert register(got["service"], "by-env", "given-by-env").returncode == 0
    assert not (tmp_path / "bummerl.sqlite3.operator-token").exists()


def test_a_token_file_others_may_read_is_refused_and_nothing_starts(tmp_path):
    kept = tmp_path / "bummerl.sqlite3.operator-token"
    kept.write_text("secret\n")
    kept.chmod(0o644)
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "up", "--address", "127.0.0.1:0", "--web", "off",
         "--duration", "5"], cwd=ROOT, env=embedded_env(tmp_path), capture_output=True,
        text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == (f"error: {kept} holds the operator token but others may "
                                   f"read it (mode 0644): run `chmod 600 {kept}`, or give a "
                                   "token with --operator-token or $BUMMERL_OPERATOR_TOKEN")
    assert "Ctrl-C" not in done.stdout and kept.read_text() == "secret\n"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o644


def test_a_stopped_worker_ends_up_with_one_error_line(tmp_path):
    with up(tmp_path) as proc:
        header(proc)
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert len(children) >= 2  # the worker and beat
        worker = next(int(c) for c in children
                      if b"worker" in Path(f"/proc/{c}/cmdline").read_bytes())
        os.killpg(worker, signal.SIGKILL)  # the worker leads its own process group
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(
        "error: a worker or the scheduler stopped: see the logs in /"), out
