"""A token starting with '-' (secrets.token_urlsafe makes some) works with `--token T`,
`--token=T` and $BUMMERL_TOKEN (issue 8 item 10)."""

from __future__ import annotations

import argparse

import pytest

from cli.main import build_parser
from client.__main__ import add_arguments
from client.argv import join_values

TOKEN = "-Xq3_dash-first-token"


def kit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser


def test_argparse_alone_breaks_on_such_a_token():
    with pytest.raises(SystemExit):
        kit_parser().parse_args(["m:C", "--token", TOKEN])


@pytest.mark.parametrize("argv", [
    ["examples.random_bot:RandomBot", "--token", TOKEN],
    ["examples.random_bot:RandomBot", f"--token={TOKEN}"],
    ["--token", TOKEN, "examples.random_bot:RandomBot"],
])
def test_python_m_client_takes_it(argv):
    args = kit_parser().parse_args(join_values(argv))
    assert args.token == TOKEN and args.bot == "examples.random_bot:RandomBot"


def test_bummerl_bot_run_and_operator_token_take_it():
    parser = build_parser()
    args = parser.parse_args(join_values(["bot", "run", "x.py:X", "--token", TOKEN]))
    assert args.token == TOKEN
    args = parser.parse_args(join_values(["bot", "register", "me", "--operator-token", "-op"]))
    assert args.operator_token == "-op"


def test_the_environment_variable(monkeypatch):
    monkeypatch.setenv("BUMMERL_TOKEN", TOKEN)
    monkeypatch.delenv("BUMMERL_BOT_TOKEN", raising=False)
    assert kit_parser().parse_args(["m:C"]).token == TOKEN
    monkeypatch.delenv("BUMMERL_TOKEN")
    monkeypatch.setenv("BUMMERL_BOT_TOKEN", "old-name")
    assert kit_parser().parse_args(["m:C"]).token == "old-name"


def test_other_arguments_are_kept():
    argv = ["bot", "run", "a:B", "--matches", "3", "--", "--token", "x"]
    assert join_values(argv) == argv
