"""The commands of README.md and docs/ that a bot author and an operator type, run as written
(issue 44; the list of every documented command and the test that runs it is the audit's). Each
command is read out of its doc, not copied here: only the placeholders the doc asks the reader
to fill in are filled (`HOST:50051`, `TOKEN`, `...`, `[--matches N]`, a bot or match name), and
the bot file is the README's `mybot.py`, written into a temporary folder. The site is `bummerl
up` on embedded defaults in a temporary folder (house bots on its workers), as `bash
scripts/run` starts it, on a free port and with no ladder matches, so that the machine is spent
on the documented commands."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kitkit import Kit, installed_kit

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
OPERATOR = "doc-operator"


def fenced(text: str, after: str) -> str:
    """The first ```sh block of `text` after the line that holds `after`."""
    rest = text.split(after, 1)[1]
    block = re.search(r"```sh\n(.*?)```", rest, re.S)
    assert block, f"no sh block after {after!r}"
    return block.group(1)


def command_lines(block: str) -> list[str]:
    """The block's commands, comments cut (a `# or:` line's command kept, without the `#`)."""
    lines = []
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("# or: "):
            line = line[len("# or: "):]
        elif line.startswith("#") or not line:
            continue
        lines.append(re.sub(r"\s+#\s.*$", "", line).strip())
    return lines


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def site_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'bummerl.sqlite3'}",
           "BUMMERL_BROKER_DIR": str(tmp_path / "broker"), "BUMMERL_VAR": str(tmp_path / "var"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "BUMMERL_LADDER_MATCHES": "0",
           "COLUMNS": "400"}
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL", "BUMMERL_OPERATOR_TOKEN", "BUMMERL_TOKEN",
                 "BUMMERL_OPERATOR_TOKEN_SHA256", "BUMMERL_OPEN_REGISTRATION", "PYTHONPATH",
                 "BUMMERL_SERVER", "BUMMERL_HOOKS", "BUMMERL_WEB_TOKEN", "BUMMERL_HOUSE_TOKEN"):
        env.pop(name, None)
    return env


class Site:
    def __init__(self, proc: subprocess.Popen, address: str, env: dict[str, str],
                 folder: Path) -> None:
        self.proc, self.address, self.env, self.folder = proc, address, env, folder

    def client_env(self, **more: str) -> dict[str, str]:
        """What a reader's shell has: no site variables but those the doc's steps set."""
        env = {k: v for k, v in os.environ.items() if k not in (
            "PYTHONPATH", "BUMMERL_SERVER", "BUMMERL_TOKEN", "BUMMERL_OPERATOR_TOKEN")}
        return {**env, **more}

    def run(self, line: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-e", "-c", line], cwd=ROOT, env=self.client_env(**env),
                              capture_output=True, text=True, timeout=timeout)

    def start(self, line: str, log: Path, cwd: Path = ROOT, **env: str) -> subprocess.Popen:
        out = open(log, "w")  # noqa: SIM115  (the process holds it; closed with the test folder)
        return subprocess.Popen(["bash", "-c", "exec " + line], cwd=cwd,
                                env=self.client_env(**env), stdout=out,
                                stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("docsite")
    env = site_env(folder)
    address = f"127.0.0.1:{free_port()}"
    log = folder / "up.log"
    with open(log, "w") as out:  # a file, not a pipe: its live table must never block on us
        proc = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "bummerl"), "up", "--address", address, "--web", "off",
             "--operator-token", OPERATOR, "--matches", "0"], cwd=ROOT, env=env, stdout=out,
            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wait_for_line(log, "Ctrl-C stops everything", 180)
        yield Site(proc, address, env, folder)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def mybot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's `mybot.py`, as its step 2 writes it."""
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    code = re.search(r"```python\n(.*?)```", guide, re.S).group(1)  # type: ignore[union-attr]
    path = tmp_path_factory.mktemp("author") / "mybot.py"
    path.write_text(code)
    return path


def as_reader(line: str, site: Site, mybot: Path) -> str:
    """The doc's line with what the reader fills in: the server, and where mybot.py is."""
    return line.replace("HOST:50051", site.address).replace("mybot.py:MyBot", f"{mybot}:MyBot")


def register(site: Site, mybot: Path, name: str) -> str:
    """README step 3 as written (the operator token in place of `...`): the bot's token."""
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    (line,) = command_lines(fenced(guide, "**3. Get a token.**"))
    assert line == ("BUMMERL_OPERATOR_TOKEN=... .venv/bin/bummerl bot register mybot "
                    "--server HOST:50051"), line
    line = as_reader(line, site, mybot).replace("=...", f"={OPERATOR}")
    done = site.run(line.replace(" register mybot ", f" register {name} "))
    assert done.returncode == 0, done.stdout + done.stderr
    token = re.search(r"^token\s+(\S+)", done.stdout, re.M)
    assert token, done.stdout
    return token.group(1)


def challenge(site: Site, token: str, vs: str, matches: int) -> None:
    done = site.run(f".venv/bin/bummerl bot challenge --vs {vs} --matches {matches} "
                    f"--token {shlex.quote(token)} --server {site.address}")
    assert done.returncode == 0, done.stdout + done.stderr


def wait_for_line(log: Path, pattern: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text())
        if found:
            return found.group(0)
        time.sleep(0.5)
    raise AssertionError(f"no {pattern!r} within {timeout} s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    """The kit as step 1 installs it (a fresh virtual environment; tests/kitkit.py)."""
    return installed_kit(tmp_path_factory)


def test_step_4_plays_until_ctrl_c(site, mybot, kit, tmp_path):
    """Step 4's first line as written, with the kit step 1 installed: the bot plays what it is
    given (a challenge of a house bot here) until Ctrl-C, which lets it finish and sum up."""
    token = register(site, mybot, "mybot")
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    run, _ = command_lines(fenced(guide, "**4. Play**"))
    assert run == "bummerl-kit mybot.py:MyBot --server HOST:50051 --token TOKEN"
    log = tmp_path / "bot.log"
    bot = site.start(as_reader(run, site, mybot).replace("TOKEN", shlex.quote(token)), log,
                     cwd=mybot.parent, PATH=kit.env()["PATH"])  # the author's folder
    try:
        wait_for_line(log, r"\[mybot\] connected", 60)
        challenge(site, token, "house-random", 1)
        wait_for_line(log, r"\[mybot\] match \d+ ended: (won|lost)", 180)
        bot.send_signal(signal.SIGINT)
        assert bot.wait(60) == 0, log.read_text()
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
    text = log.read_text()
    assert re.search(r"\[mybot\] turns \d+, won \d, lost \d, refused 0", text), text
    assert "Traceback" not in text, text


def test_step_4_the_kit_module_with_its_options(site, mybot, kit, tmp_path):
    """Step 4's `# or:` line as written, its options filled in (`--matches 1`, and
    `--challenges-only`), in the kit's environment: the bot exits after its one match."""
    token = register(site, mybot, "mybot2")
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    _, run = command_lines(fenced(guide, "**4. Play**"))
    assert run == ("python -m bummerl_kit mybot.py:MyBot --server HOST:50051 --token TOKEN "
                   "[--matches N] [--challenges-only]"), run
    run = as_reader(run, site, mybot).replace("TOKEN", shlex.quote(token))
    run = run.replace("[--matches N]", "--matches 1").replace("[--challenges-only]",
                                                                "--challenges-only")
    log = tmp_path / "bot.log"
    bot = site.start(run, log, cwd=mybot.parent, PATH=kit.env()["PATH"])  # the author's folder
    try:
        wait_for_line(log, r"\[mybot2\] connected", 60)
        challenge(site, token, "house-bully", 1)
        assert bot.wait(180) == 0, log.read_text()
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
    text = log.read_text()
    assert re.search(r"\[mybot2\] turns \d+, won \d, lost \d, refused 0", text), text
    assert "Traceback" not in text, text


def test_practise_right_away_against_a_house_bot(site, mybot, tmp_path):
    """"Practise right away" as written, both lines in one shell with the variables the
    walkthrough exported (`BUMMERL_SERVER`, `MYBOT_TOKEN`): five unrated challenges of
    house-rdeep, the bot connected for challenges only, exiting after its five."""
    token = register(site, mybot, "mybot3")
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    block = fenced(guide, "**Practise right away")
    assert command_lines(block) == [
        '.venv/bin/bummerl bot challenge --vs house-rdeep --matches 5 --token "$MYBOT_TOKEN"',
        '.venv/bin/bummerl bot run mybot.py:MyBot --token "$MYBOT_TOKEN" --challenges-only '
        '--matches 5'], block
    script = as_reader(block, site, mybot)
    done = site.run(script, timeout=600, BUMMERL_SERVER=site.address, MYBOT_TOKEN=token)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("unrated challenge") == 5, done.stdout
    assert "--matches 5 reached: taking no new matches" in done.stderr, done.stderr
    assert re.search(r"\[mybot3\] turns \d+, won \d, lost \d, refused 0", done.stdout), \
        done.stdout
    assert "Traceback" not in done.stderr, done.stderr


def test_practise_locally_with_the_kit(mybot, kit):
    """The README's `bummerl-kit practice` line as written, with the kit step 1 installed, from
    the author's folder: 50 deals against level 3, no server."""
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    (line,) = command_lines(fenced(guide, "Or practise locally, with no server at all"))
    assert line == "bummerl-kit practice mybot.py:MyBot --vs level-3 -n 50", line
    done = subprocess.run(["bash", "-e", "-c", line], cwd=mybot.parent, env=kit.env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "practice: MyBot (A) vs house-level-3 (B)" in done.stdout, done.stdout
    assert "50 (100 hands)" in done.stdout, done.stdout
    assert "no exceptions, no illegal actions in 100 hands" in done.stdout, done.stdout


def operator_rows() -> dict[str, str]:
    """docs/operators.md's table of operator controls: command → what it does."""
    text = (ROOT / "docs" / "operators.md").read_text().split("## Operator controls", 1)[1]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `(bummerl admin [^`]+)` \| (.*) \|$",
                                                          text, re.M)}


def test_the_operator_controls_as_the_table_gives_them(site, mybot):
    """docs/operators.md's operator controls, each as written with a bot's name and a match id
    filled in (the operator token and the server as for every client command: their
    variables): list, suspend, reinstate and abort a match."""
    rows = operator_rows()
    assert set(rows) >= {"bummerl admin bots [--suspended]", "bummerl admin suspend BOT REASON",
                         "bummerl admin reinstate BOT", "bummerl admin abort-match MATCH REASON"}
    token = register(site, mybot, "suspendme")
    env = {"BUMMERL_OPERATOR_TOKEN": OPERATOR, "BUMMERL_SERVER": site.address}

    def admin(line: str) -> subprocess.CompletedProcess:
        done = site.run(".venv/bin/" + line, **env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    assert "suspendme" in admin("bummerl admin bots").stdout
    admin("bummerl admin suspend BOT REASON".replace("BOT", "suspendme").replace(
        "REASON", "'too many forfeits'"))
    listed = admin("bummerl admin bots --suspended").stdout
    assert "suspendme" in listed and "too many forfeits" in listed, listed
    admin("bummerl admin reinstate BOT".replace("BOT", "suspendme"))
    assert "suspendme" not in admin("bummerl admin bots --suspended").stdout
    # a running match to abort: a challenge of a house bot the bot never answers
    challenge(site, token, "house-random", 1)
    matches = site.run(f".venv/bin/python -c {shlex.quote(LIST_RUNNING)} {site.address}")
    assert matches.returncode == 0, matches.stderr
    match_id = matches.stdout.split()[0]
    done = admin("bummerl admin abort-match MATCH REASON".replace("MATCH", match_id).replace(
        "REASON", "'a test'"))
    assert match_id in done.stdout, done.stdout


LIST_RUNNING = """
import sys, grpc
from bummerl.v1 import match_pb2, match_pb2_grpc
stub = match_pb2_grpc.MatchServiceStub(grpc.insecure_channel(sys.argv[1]))
reply = stub.ListMatches(match_pb2.ListMatchesRequest(state=match_pb2.MATCH_STATE_RUNNING))
print(" ".join(str(m.match_id) for m in reply.matches))
"""


def test_the_match_record_doc_gives_the_readme_export_commands():
    """docs/match-record.md's export commands are the README's "Your games as data", which
    tests/cli/test_readme_walkthrough.py runs as written after the walkthrough: the two docs
    must not drift apart (the comments may differ)."""
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    readme = command_lines(fenced(guide, "**Your games as data.**"))
    record = command_lines(fenced((ROOT / "docs" / "match-record.md").read_text(), "# "))
    assert record and all(line in readme for line in record), (record, readme)


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_first_command_bash_scripts_run(tmp_path):
    """The README's first command as written, `bash scripts/run`, from the checkout: it sets up
    (the .venv is there already, so that is quick) and starts the whole site on its default
    ports, the service on 127.0.0.1:50051 and the web on 127.0.0.1:8000, with the house bots on
    the ladder; SIGTERM stops it with the final standings. Only the site's folders are the
    test's (the database, the broker, `BUMMERL_VAR`)."""
    (line, _) = command_lines(fenced(README.read_text(), "# bummerl"))
    assert line == "bash scripts/run", line
    if port_taken(50051) or port_taken(8000):
        pytest.skip("127.0.0.1:50051 or :8000 is in use: `bash scripts/run` needs both")
    env = site_env(tmp_path)
    env.pop("BUMMERL_LADDER_MATCHES")
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(["bash", "-c", line], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_line(log, "Ctrl-C stops everything", 300)
        health = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                 "http://127.0.0.1:8000/healthz"], capture_output=True,
                                text=True, timeout=30)
        assert health.stdout == "200", health.stdout + log.read_text()
        wait_for_line(log, r"match \d+", 180)  # the ladder plays
        assert port_taken(50051)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(90)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "ladder standings" in text.rsplit("Ctrl-C stops everything", 1)[1], text
    assert "Traceback" not in text, text
