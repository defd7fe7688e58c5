"""The conformance cases (shared/conformance, copied into tests/data as test vectors) and the
`bummerl replay` command contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.replay import InvalidCaseError, replay_case

CASES = sorted((Path(__file__).parent.parent / "data" / "conformance").glob("*.json"))


def test_there_are_cases() -> None:
    assert len(CASES) >= 38


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case_gives_its_expect(path: Path) -> None:
    case = json.loads(path.read_text())
    assert replay_case(case) == case["expect"], case["title"]


def _bummerl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, cwd=Path(__file__).parents[2], timeout=120)


def test_replay_command_prints_one_line_per_case() -> None:
    done = _bummerl("replay", *map(str, CASES))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(CASES)
    for path, line in zip(CASES, lines, strict=True):
        assert json.loads(line) == json.loads(path.read_text())["expect"], path.name


def test_replay_command_goes_on_after_an_invalid_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    no_deck = tmp_path / "no-deck.json"
    no_deck.write_text(json.dumps({"profile": "soft", "first_dealer": 0, "hands": [{}]}))
    done = _bummerl("replay", str(broken), str(CASES[0]), str(no_deck),
                    str(tmp_path / "missing.json"))
    assert done.returncode == 2
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == 4
    assert "invalid" in lines[0] and "JSON" in lines[0]["invalid"]
    assert lines[1] == json.loads(CASES[0].read_text())["expect"]
    assert "deck" in lines[2]["invalid"]
    assert "cannot read" in lines[3]["invalid"]


def _case(actions: list[dict], **extra: object) -> dict:
    base = json.loads(CASES[0].read_text())
    base["hands"][0]["actions"] = actions
    base.update(extra)
    return base


def test_unknown_action_cites_r11_1_after_the_turn_check() -> None:
    case = _case([{"seat": 0, "do": "pass"}])
    assert replay_case(case)["error"] == {"hand": 0, "action": 0, "rule": "R11.1"}
    case = _case([{"seat": 1, "do": "pass"}])  # seat 0 leads first: the turn comes first
    assert replay_case(case)["error"] == {"hand": 0, "action": 0, "rule": "R3.1"}


def test_an_action_after_the_hand_is_over_cites_r8_6() -> None:
    case = json.loads(CASES[0].read_text())
    case["hands"][0]["actions"].append({"seat": 0, "do": "play", "card": "AS"})
    out = replay_case(case)
    assert out["error"] == {"hand": 0, "action": 20, "rule": "R8.6"}
    assert out["hands"] == case["expect"]["hands"] and out["match"] is None


def test_unfinished_hand_gives_null() -> None:
    case = _case(json.loads(CASES[0].read_text())["hands"][0]["actions"][:5])
    assert replay_case(case) == {"hands": [None], "error": None, "match": None}


@pytest.mark.parametrize("bad", [
    [], {"profile": "hard", "first_dealer": 0, "hands": []},
    {"profile": "soft", "first_dealer": 2, "hands": [{"deck": [], "actions": []}]},
])
def test_invalid_cases_are_named(bad: object) -> None:
    with pytest.raises(InvalidCaseError):
        replay_case(bad)
