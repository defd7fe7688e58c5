"""Every `bummerl` command answers an error with one line saying what went wrong and what to do
(exit status 1), never a traceback unless --debug (issue 11). Real commands (the installed
`bummerl` script, run from the repository root) against a real service."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from servicekit import OPERATOR, fresh_database, running_service

ROOT = Path(__file__).resolve().parents[2]
BUMMERL = Path(sys.executable).parent / "bummerl"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli-errors")
    with fresh_database("sqlite", None, tmp) as database, running_service(database) as svc:  # type: ignore[arg-type]
        yield svc


def bummerl(*args: str, server: str, operator: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "BUMMERL_OPERATOR_TOKEN", "BUMMERL_TOKEN",
                        "BUMMERL_BOT_TOKEN")}
    env["BUMMERL_SERVER"] = server
    if operator is not None:
        env["BUMMERL_OPERATOR_TOKEN"] = operator
    command = [str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]
    return subprocess.run([*command, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_duplicate_bot_name(service):
    address = service.server.address
    assert bummerl("bot", "register", "twice", server=address, operator=OPERATOR).returncode == 0
    line = one_line_error(bummerl("bot", "register", "twice", server=address,
                                  operator=OPERATOR))
    assert "a bot named 'twice' exists: choose another name" in line


@pytest.mark.parametrize("operator", [None, "not-the-operator"])
def test_missing_or_wrong_operator_token(service, operator):
    line = one_line_error(bummerl("bot", "register", "nobody", server=service.server.address,
                                  operator=operator))
    assert "refused the operator token" in line and "--operator-token" in line
    line = one_line_error(bummerl("match", "create", "1", "2", server=service.server.address,
                                  operator=operator))
    assert "refused the operator token" in line


def test_wrong_bot_token_with_the_module_form_from_the_repository_root(service):
    line = one_line_error(bummerl("bot", "run", "examples.random_bot:RandomBot", "--token",
                                  "-wrong", server=service.server.address))
    assert "refused the bot token (no bot has this token)" in line, line
    assert "--token or $BUMMERL_TOKEN" in line and "RegisterBot" not in line, line


@pytest.mark.parametrize("spec, expected", [
    ("nowhere.py:X", "no such file: nowhere.py"),
    ("examples.random_bot:Nope", "examples.random_bot has no class 'Nope' (its bots: RandomBot)"),
    ("no_such_module:Bot", "no module named 'no_such_module'"),
    ("examples.random_bot:random", "is not a subclass of client.Bot"),
])
def test_bad_bot_class_or_module(service, spec, expected):
    line = one_line_error(bummerl("bot", "run", spec, "--token", "t",
                                  server=service.server.address))
    assert expected in line


def test_no_token():
    line = one_line_error(bummerl("bot", "run", "examples.random_bot:RandomBot",
                                  server=free_address()))
    assert "no bot token" in line and "BUMMERL_TOKEN" in line


def test_server_unreachable_after_a_bounded_wait_with_progress():
    address = free_address()
    done = bummerl("bot", "register", "x", "--wait", "2", server=address, operator="op")
    line = one_line_error(done)
    assert f"cannot reach the bummerl service at {address} after 2 s" in line
    assert "bummerl serve" in line and "--server" in line
    assert f"waiting for the service at {address} ... 1 s" in done.stderr


def test_debug_shows_the_traceback(service):
    done = bummerl("--debug", "bot", "run", "examples.random_bot:Nope", "--token", "t",
                   server=service.server.address)
    assert done.returncode == 1 and "Traceback" in done.stderr
    done = bummerl("bot", "run", "examples.random_bot:Nope", "--token", "t", "--debug",
                   server=service.server.address)
    assert done.returncode == 1 and "Traceback" in done.stderr


def test_match_create_prints_who_sits_where(service):
    address = service.server.address
    ids = []
    for name in ("north", "south"):
        out = bummerl("bot", "register", name, server=address, operator=OPERATOR).stdout
        ids.append(out.split("bot id ", 1)[1].split()[0])
    done = bummerl("match", "create", *ids, server=address, operator=OPERATOR)
    assert done.returncode == 0, done.stderr
    assert f"seat 0: north (bot id {ids[0]})" in done.stdout
    assert f"seat 1: south (bot id {ids[1]})" in done.stdout
    line = one_line_error(bummerl("match", "create", ids[0], "999999", server=address,
                                  operator=OPERATOR))
    assert "999999" in line


def test_match_create_takes_names_as_the_readme_says(service):
    """`bummerl match create BOT0 BOT1` with names (issue 22: it printed a usage text and
    `invalid int value: 'mybot'`, exit 2), ids, or one of each."""
    address = service.server.address
    ids = {}
    for name in ("mybot", "tsbot"):
        out = bummerl("bot", "register", name, server=address, operator=OPERATOR).stdout
        ids[name] = out.split("bot id ", 1)[1].split()[0]
    for args in (["mybot", "tsbot"], [ids["mybot"], "tsbot"], [ids["mybot"], ids["tsbot"]]):
        done = bummerl("match", "create", *args, server=address, operator=OPERATOR)
        assert done.returncode == 0, done.stderr
        assert f"seat 0: mybot (bot id {ids['mybot']})" in done.stdout
        assert f"seat 1: tsbot (bot id {ids['tsbot']})" in done.stdout
    line = one_line_error(bummerl("match", "create", "mybot", "nosuch", server=address,
                                  operator=OPERATOR))
    assert "no bot named 'nosuch'" in line


@pytest.mark.parametrize("args, expected", [
    (["simulate", "rdeep", "nosuch"], "unknown house strategy 'nosuch'"),
    (["simulate", "rdeep"], "give two strategies"),
    (["match", "create", "mybot"], "the following arguments are required: BOT"),
    (["bot", "run", "x.py:X", "--matches", "many"], "invalid int value: 'many'"),
    (["bot", "run", "examples.random_bot:RandomBot", "--token", "t", "--matches", "0"],
     "--matches must be at least 1"),
])
def test_bad_command_lines_exit_1_with_one_line(service, tmp_path, args, expected):
    """The README promises exit status 1 and one line for every error (`simulate rdeep
    nosuch` exited 2; argparse's own errors printed a usage text and exited 2)."""
    env_url = f"sqlite:///{tmp_path / 'sim.sqlite3'}"
    done = subprocess.run(
        [*([str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]), *args],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": env_url,
                       "BUMMERL_SERVER": service.server.address},
        capture_output=True, text=True, timeout=60)
    line = one_line_error(done)
    assert expected in line, line
    assert "usage:" not in done.stderr


def test_challenging_a_house_bot_where_there_are_none_says_so(service):
    """On `bummerl serve` alone there are no house bots: the error said `house bots are named
    like house-rdeep` to someone who had typed house-rdeep."""
    address = service.server.address
    out = bummerl("bot", "register", "newbie", server=address, operator=OPERATOR).stdout
    token = out.split("token ", 1)[1].split()[0]
    line = one_line_error(bummerl("bot", "challenge", "--vs", "house-rdeep", "--token", token,
                                  server=address))
    assert "no bot named 'house-rdeep'" in line
    assert "this server has no house bots" in line and "bummerl up" in line
    assert "named like" not in line


def test_challenging_a_bot_that_is_not_connected_waits_then_says_so(service):
    address = service.server.address
    bummerl("bot", "register", "offline", server=address, operator=OPERATOR)
    out = bummerl("bot", "register", "eager", server=address, operator=OPERATOR).stdout
    token = out.split("token ", 1)[1].split()[0]
    done = bummerl("bot", "challenge", "--vs", "offline", "--wait", "2", "--token", token,
                   server=address)
    line = one_line_error(done)
    assert "bot offline is not connected" in line
    assert "waiting for offline to connect ... 1 s (--wait 2)" in done.stderr


def test_version_tests_without_a_token_name_the_flags(service):
    """`bummerl test list` without a token answered with the service's words ("send metadata
    'authorization: Bearer <bot token>'") under its own prefix ("bummerl test:"); a person at a
    terminal needs the flags (issue 29)."""
    for args in (["test", "list"], ["test", "show", "1"], ["test", "stop", "1"]):
        line = one_line_error(bummerl(*args, server=service.server.address))
        assert "--token or $BUMMERL_TOKEN" in line and "--operator-token" in line, line
        assert "metadata" not in line and "Bearer" not in line, line


@pytest.mark.parametrize("flag, expected", [
    ("--token", "the service refused the token (it is not one the service knows): pass your "
                "bot's token with --token or $BUMMERL_TOKEN (its own), or the operator token "
                "with --operator-token or $BUMMERL_OPERATOR_TOKEN (any)"),
    ("--operator-token", "the service refused the token"),
])
def test_version_tests_with_a_wrong_token_name_the_flags(service, flag, expected):
    line = one_line_error(bummerl("test", "list", flag, "not-a-token",
                                  server=service.server.address))
    assert expected in line and "metadata" not in line, line


def test_admin_without_the_operator_token_names_the_flags(service):
    """`bummerl admin` printed `bummerl admin: UNAUTHENTICATED: ... send metadata ...`."""
    line = one_line_error(bummerl("admin", "bots", server=service.server.address))
    assert line == ("error: the service refused the operator token (none was given): pass the "
                    "server's operator token with --operator-token or $BUMMERL_OPERATOR_TOKEN")
    line = one_line_error(bummerl("admin", "bots", server=service.server.address,
                                  operator="wrong"))
    assert "refused the operator token" in line and "--operator-token" in line, line


@pytest.mark.parametrize("args, expected", [
    (["tournament", "show", "424242"], "424242"),
    (["tournament", "export", "424242"], "424242"),
    (["test", "show", "424242"], "424242"),
    (["admin", "suspend", "424242", "why"], "424242"),
    (["admin", "suspend", "@nobody", "why"], "no bot or person named '@nobody'"),
    (["match", "create", "424242", "424243"], "424242"),
])
def test_a_runtime_error_is_one_line_without_a_usage_hint(service, args, expected):
    """One style for every command's runtime error: `error: ...`, and no "(see --help)" (it
    follows a bad command line only: the service's NOT_FOUND is no usage error)."""
    done = bummerl(*args, server=service.server.address, operator=OPERATOR)
    line = one_line_error(done)
    assert expected in line, line
    assert "--help" not in line and "bummerl " not in done.stderr.split("error: ")[0], line
    assert done.stderr.strip() == line, done.stderr


def test_a_usage_error_points_at_help(service):
    line = one_line_error(bummerl("tournament", "show", "one", server=service.server.address))
    assert line.endswith("(see `bummerl tournament show --help`)"), line


def test_web_on_a_port_in_use_says_so_in_the_one_style(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*([str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]),
             "web", "--port", str(port)], cwd=ROOT, capture_output=True, text=True, timeout=60,
            env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}"})
    line = one_line_error(done)
    assert f"cannot listen on 127.0.0.1:{port}" in line and "--port" in line, line


@pytest.mark.parametrize("args, expected", [
    (["--actions-older-than", "-1", "--archive", "table"],
     "error: --actions-older-than must be 0 or more, not -1 (see `bummerl db prune --help`)"),
    (["--actions-older-than", "3", "--archive", "table", "--batch", "0"],
     "error: --batch must be 1 or more, not 0 (see `bummerl db prune --help`)"),
    (["--actions-older-than", "3", "--archive", "records"],
     "error: --archive records needs a directory for the record files: give it with --dir "
     "(see `bummerl db prune --help`)"),
    (["--actions-older-than", "3", "--archive", "records", "--dir", "{tmp}/nope"],
     "error: {tmp}/nope is not a directory: make it first"),
])
def test_db_prune_names_its_flags_and_points_at_help_for_usage_errors_only(tmp_path, args,
                                                                           expected):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run(
        [*([str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]), "db",
         "prune", *args, "--database-url", f"sqlite:///{tmp_path / 'prune.sqlite3'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert one_line_error(done) == expected.replace("{tmp}", str(tmp_path))


def test_serve_on_an_address_it_cannot_bind_names_the_flag(tmp_path):
    """It said `unexpected error: RuntimeError: Failed to bind to address ...`."""
    done = subprocess.run(
        [*([str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]),
         "serve", "--address", "127.0.0.1:notaport"], cwd=ROOT, capture_output=True, text=True,
        timeout=60, env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 's.sqlite3'}"})
    line = one_line_error(done)
    assert line == ("error: cannot listen on 127.0.0.1:notaport: it is in use, or not a "
                    "host:port of this machine (choose another with --address)")


@pytest.mark.parametrize("args, command", [
    (["tournament", "list", "--wait", "1"], "bummerl tournament list"),
    (["admin", "bots", "--nope"], "bummerl admin bots"),
    (["--nope"], "bummerl"),
])
def test_an_unknown_flag_points_at_the_help_of_its_command(args, command):
    """`bummerl tournament list --wait 1` pointed at `bummerl --help`, which does not list
    tournament list's flags."""
    done = subprocess.run(
        [*([str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    line = one_line_error(done)
    assert line.startswith("error: unrecognized arguments: ") and line.endswith(
        f"(see `{command} --help`)"), line
