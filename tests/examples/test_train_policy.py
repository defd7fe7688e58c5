"""README's export → train → play (issue 45), as written: mybot's games exported from a real
service (`bummerl games export --bot mybot > games.jsonl`, the server's .venv), then with the kit
as step 1 installs it (tests/kitkit.py's fresh virtual environment: its `bummerl-kit` and
`python` first on PATH) analysed offline by `bummerl-kit analyse`, and examples/train_policy.py
fits a policy to them and plays it in-process against house level 1 on duplicate deals (as
`bummerl-kit practice` does); the saved policy then plays as a kit bot (`PolicyBot`)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kitkit import Kit, installed_kit
from servicekit import running_service

import engine
from client.__main__ import load_bot
from services.core import hooks
from services.core import matches as plain
from services.core.actions import submit_action

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ".venv/bin/bummerl games export --bot mybot > games.jsonl"


pytestmark = pytest.mark.timeout(900)  # the first test of a run may build and install the kit


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        yield svc


def finished(service, seats: list[int], seed: int) -> None:
    m = plain.create_match(seats, seed=seed, sessions=service.sessions, config=service.config)
    game = engine.Match(seed, "soft")
    rng = random.Random(seed)
    while not game.is_over:
        seat, action = game.to_act, rng.choice(game.legal_actions())
        submit_action(m.id, seat, action, expected_seq=len(game.history),
                      sessions=service.sessions, config=service.config)
        game.apply(seat, action)


def readme_lines() -> list[str]:
    """README's export line, then the lines of its "Train on them." block, comments cut."""
    text = (ROOT / "README.md").read_text()
    export = [line for line in text.splitlines() if line.startswith(EXPORT)]
    assert len(export) == 1, "README's export of mybot's games"
    block = re.search(r"\*\*Train on them\.\*\*.*?```sh\n(.*?)```", text, re.S)
    assert block, "README's Train on them. block"
    lines = [export[0], *block.group(1).splitlines()]
    return [line.split("  #")[0].strip() for line in lines if line.strip()]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_export_train_play_as_the_readme_writes_it(service, kit, tmp_path, monkeypatch):
    (a, _), (b, _) = service.register("mybot"), service.register("randy")
    finished(service, [a, b], 1)
    finished(service, [b, a], 2)
    lines = readme_lines()
    assert lines[1:] == [
        "bummerl-kit analyse games.jsonl -o analysed.jsonl",
        "python examples/train_policy.py analysed.jsonl --bot mybot -o policy.json "
        "--play 20 --vs level-1"]
    script = "\n".join(lines).replace(".venv/bin/", f"{ROOT}/.venv/bin/").replace(
        "examples/", f"{ROOT}/examples/")
    env = {**kit.env(), "BUMMERL_SERVER": service.server.address}
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    trained = re.search(r"^trained on (\d+) decisions, 5 epochs, loss [\d.]+ -> [\d.]+; "
                        r"wrote policy.json$", done.stdout, re.M)
    assert trained and int(trained.group(1)) > 20, done.stdout
    assert "practice: policy (A) vs house-level-1 (B), profile soft, seed 0\n" in done.stdout
    assert re.search(r"^deals played \(× 2 seatings\) +20 \(40 hands\)$", done.stdout, re.M), \
        done.stdout
    assert re.search(r"^net game points per deal, A − B +-?[\d.]+  \[-?[\d.]+, -?[\d.]+\]$",
                     done.stdout, re.M), done.stdout
    assert "no exceptions, no illegal actions in 40 hands" in done.stdout, done.stdout
    assert '"analysis"' in (tmp_path / "analysed.jsonl").read_text()
    # The saved policy is a kit bot: loaded as bummerl-kit loads one, it plays a match.
    monkeypatch.setenv("BUMMERL_POLICY", str(tmp_path / "policy.json"))
    bot = load_bot(f"{ROOT / 'examples' / 'train_policy.py'}:PolicyBot")
    match = engine.Match(9)
    while not match.is_over:
        seat = match.to_act
        action = bot.act(match.observe(seat))
        assert action in match.legal_actions()
        match.apply(seat, action)


def test_no_decisions_is_one_line(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "train_policy.py"),
                           str(tmp_path / "empty.jsonl"), "--bot", "mybot"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("error: no decisions to learn from in those records for --bot "
                           "mybot\n")


def test_an_unknown_house_bot_is_a_usage_error(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "train_policy.py"),
                           str(tmp_path / "empty.jsonl"), "--vs", "deepblue"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "error: unknown house bot 'deepblue': choose one of " in done.stderr, done.stderr


def test_docs_kit_envs_gives_the_readmes_lines():
    """docs/kit-envs.md's "Export, train, play" block is README's "Train on them" (run above)."""
    doc = (ROOT / "docs" / "kit-envs.md").read_text().split("## Export, train, play", 1)[1]
    block = re.search(r"```sh\n(.*?)```", doc, re.S)
    assert block, "docs/kit-envs.md's Export, train, play block"
    assert block.group(1).splitlines() == readme_lines()[1:]
