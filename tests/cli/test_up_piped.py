"""`bummerl up` as a new user meets it with its output piped (`bash scripts/run | tee log`),
stopped with SIGINT (`kill -INT`, as Ctrl-C with no terminal), real processes on the embedded
defaults (issue 44):

- no line is wrapped: the join hint, the standings' title and rows come whole at any width;
- the join hint is a command that works as copied, from where the user is, with `bummerl` not
  on the PATH, and it names the operator token's file instead of holding the token;
- the standings' every column has a header;
- /metrics, at the address it prints, serves the service's, the workers' and the web's;
- SIGINT prints the final standings and stops it within seconds; the matches it left running
  resume and finish after a restart.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_up import embedded_env, read_until

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = str(Path(os.path.abspath(sys.executable)).parent)


def start(tmp_path: Path) -> subprocess.Popen:
    env = embedded_env(tmp_path, BUMMERL_VAR=str(tmp_path / "var"), BUMMERL_LADDER_EVERY="1")
    env.pop("COLUMNS", None)  # as a user's pipe: Rich's default width
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and os.path.abspath(p) != VENV_BIN)
    return subprocess.Popen(
        [sys.executable, "-m", "cli.main", "up", "--address", "127.0.0.1:0", "--web",
         "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--matches", "2"], cwd=ROOT, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        bufsize=1)


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read().decode()


def metric(text: str, name: str) -> float:
    """The sum of the samples of `name` (any labels) in a /metrics page."""
    values = [float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)]
    assert values, f"no {name} in /metrics"
    return sum(values)


def interrupt(proc: subprocess.Popen) -> tuple[str, float]:
    """SIGINT `proc`; all it printed after, and the seconds it took to exit."""
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    return out, time.monotonic() - began


def wait_for_a_new_match(database: Path, seconds: float) -> bool:
    """Whether a running match with few actions yet (far from its end) shows within `seconds`."""
    import sqlite3

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(sqlite3.OperationalError), \
                contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as c:
            if c.execute("SELECT 1 FROM matches WHERE state = 'running' AND seq < 10").fetchall():
                return True
        time.sleep(0.05)
    return False


def test_piped_output_is_whole_the_hint_works_metrics_served_and_sigint_stops_fast(tmp_path):
    proc = start(tmp_path)
    try:
        lines, _ = read_until(proc, "Ctrl-C stops everything", 120)
        text = "\n".join(lines)
        # The join hint: one line, a command that works from the repository's root though
        # `bummerl` is not on the PATH, reading the token from its file.
        hint = next(line for line in lines if line.startswith("join with a bot: "))
        assert hint.endswith(" bot run ... (see README)"), hint
        register = hint.removeprefix("join with a bot: ").split(", then ")[0]
        kept = tmp_path / "bummerl.sqlite3.operator-token"
        assert register.endswith(f'--operator-token "$(cat {kept})"'), register
        assert not register.startswith("bummerl "), register
        token = kept.read_text().strip()
        assert token not in text
        path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                               if os.path.abspath(p) != VENV_BIN)
        done = subprocess.run(["bash", "-c", register.replace("NAME", "copied-hint")],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env={**{k: v for k, v in os.environ.items()
                                      if k != "PYTHONPATH"}, "PATH": path})
        assert done.returncode == 0 and "bot id" in done.stdout, done.stdout + done.stderr

        # Metrics: the service's, the workers' and the dashboard's, on the port it printed.
        url = re.search(r"^metrics (http://\S+/metrics) ", text, re.M).group(1)  # type: ignore[union-attr]
        web = re.search(r"^dashboard (http://\S+/)$", text, re.M).group(1)  # type: ignore[union-attr]
        assert get(web + "healthz")
        read_until(proc, r" match \d+: ", 180)  # a match finished: moves were played
        page = get(url)
        assert metric(page, "bummerl_actions_applied_total") > 0  # the service's
        assert metric(page, r'bummerl_task_seconds_count\{task="bummerl.move"\}') > 0
        assert metric(page, "bummerl_web_requests_total") >= 1  # the dashboard's
        assert metric(page, "bummerl_matches_running") >= 0
        for family in ("bummerl_task_seconds", "bummerl_web_requests_total",
                       "bummerl_actions_applied_total"):  # each once
            assert len(re.findall(rf"^# TYPE {family} ", page, re.M)) == 1, family
        # Stop it while a match has just begun (between a match's end and the ladder's next
        # tick none may be running), so that the restart below has one to resume.
        assert wait_for_a_new_match(tmp_path / "bummerl.sqlite3", 120)
    except BaseException:
        proc.kill()
        print(proc.communicate(timeout=30)[0])
        raise
    out, took = interrupt(proc)
    print(f"bummerl up stopped {took:.1f} s after SIGINT")
    assert proc.returncode == 0, out
    assert took < 5, f"stopping took {took:.1f} s:\n{out}"

    # The final standings, whole: the title on one line, every row a full line of the table.
    last = out.splitlines()
    title = last.index("ladder standings · profile soft  (openskill μ ± 2σ, ranked by μ − 3σ)")
    table = last[title + 1:]
    table = table[:next(i for i, line in enumerate(table) if line.startswith("└")) + 1]
    assert len({len(line) for line in table}) == 1, "\n".join(table)
    assert len(table[0]) < 200  # its natural width, not padded to the unbounded console's
    heads = [h.strip() for h in table[1].strip("┃").split("┃")]
    assert heads == ["#", "bot", "kind", "rating", "μ−3σ", "matches", "won", "now",
                     "provisional"], heads
    assert sum(" house-" in line for line in table) == 9

    # After a restart the matches left running go on and finish (their turns are owed anew).
    from sqlalchemy import create_engine
    from sqlalchemy import text as sql

    engine = create_engine(f"sqlite:///{tmp_path / 'bummerl.sqlite3'}")
    with engine.connect() as c:
        left = [row[0] for row in c.execute(sql("SELECT id FROM matches WHERE state = "
                                                "'running'"))]
    assert left  # the ladder keeps 2 going
    again = start(tmp_path)
    try:
        read_until(again, "Ctrl-C stops everything", 120)
        end = time.monotonic() + 180
        while left and time.monotonic() < end:
            with engine.connect() as c:
                left = [i for i in left if c.execute(sql(
                    "SELECT state FROM matches WHERE id = :i"), {"i": i}).scalar() == "running"]
            time.sleep(1)
        assert not left, f"matches {left} did not resume"
    finally:
        out, took = interrupt(again)
        engine.dispose()
    print(f"bummerl up stopped {took:.1f} s after SIGINT (restarted)")
    assert again.returncode == 0 and "ladder standings · profile soft" in out


def test_the_hint_names_the_bummerl_that_works_from_where_the_user_is(tmp_path, monkeypatch):
    from cli.up import bummerl_command

    beside = Path(VENV_BIN) / "bummerl"
    if not beside.exists():
        pytest.skip("no bummerl script beside this Python (bash scripts/setup makes it)")
    monkeypatch.setenv("PATH", os.pathsep.join([VENV_BIN, "/usr/bin", "/bin"]))
    assert bummerl_command() == "bummerl"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(beside.parents[2])  # the repository's root
    assert bummerl_command() == os.path.join(beside.parent.parent.name, "bin", "bummerl")
    monkeypatch.chdir(tmp_path)  # elsewhere: its full path
    assert bummerl_command() == str(beside)


def test_ctrl_c_in_a_terminal_stops_it_within_seconds(tmp_path):
    """In a terminal (a pseudo-terminal here) the live table is drawn; Ctrl-C (SIGINT) draws
    the last standings and stops everything (issue 44: it took 9-12 s)."""
    import pty

    env = embedded_env(tmp_path, BUMMERL_VAR=str(tmp_path / "var"), COLUMNS="200",
                       LINES="60", TERM="xterm")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "up", "--address", "127.0.0.1:0", "--web", "off",
         "--metrics", "off", "--matches", "2"], cwd=ROOT, env=env, stdin=follower,
        stdout=follower, stderr=follower)
    os.close(follower)
    seen = b""
    try:
        end = time.monotonic() + 120
        while b"ladder standings" not in seen and time.monotonic() < end:
            seen += os.read(leader, 65536)
        assert b"ladder standings" in seen, seen.decode(errors="replace")
        time.sleep(3)  # the ladder plays
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        took = time.monotonic() - began
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            while chunk := os.read(leader, 65536):
                seen += chunk
        os.close(leader)
    print(f"bummerl up (terminal) stopped {took:.1f} s after Ctrl-C")
    assert proc.returncode == 0, seen.decode(errors="replace")
    assert took < 5, f"stopping took {took:.1f} s"
