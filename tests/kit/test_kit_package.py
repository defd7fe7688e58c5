"""The kit as its own distribution (issue 45), as an author installs it (tests/kitkit.py: README's
`bash scripts/kit` and `pip install dist/bummerl_kit-*.whl` into a fresh virtual environment):
only the kit, grpcio and protobuf (and theirs) arrive, nothing is importable under a generic
name, the installed files are this tree's sources with their imports moved (no copy that can
drift), the sdist rebuilds the same wheel, README's bot plays a match to its end through the
installed `bummerl-kit` against a real service, and every conformance case replays to its
expected result through the installed engine."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from bummerl.v1 import match_pb2
from kitkit import Kit, guide, installed_kit, kitbuild
from servicekit import OPERATOR, auth, fresh_database, running_service

from client import Runner
from examples.random_bot import RandomBot

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "data" / "conformance").glob("*.json"))
SHARED = ROOT.parent / "shared" / "conformance" / "cases"  # the rulebook's, where present
GENERIC = ("client", "engine", "bummerl", "services", "workers", "web", "db", "cli", "events",
           "analysis", "bots", "examples", "proto")

pytestmark = pytest.mark.timeout(900)  # the first test builds and installs the kit


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


def requirement_names(requires: list[str]) -> set[str]:
    return {re.match(r"[A-Za-z0-9._-]+", r).group(0).lower().replace("_", "-")
            for r in requires if "extra ==" not in r}


def test_only_the_kit_grpcio_and_protobuf_arrive_and_no_generic_name(kit):
    done = kit.run("import importlib.metadata as m, json; print(json.dumps({"
                   "d.metadata['Name'].lower().replace('_', '-'): d.requires or [] "
                   "for d in m.distributions()}))")
    assert done.returncode == 0, done.stderr
    installed = {name: requirement_names(requires)
                 for name, requires in json.loads(done.stdout).items()}
    assert installed["bummerl-kit"] == {"grpcio", "protobuf"}
    theirs: set[str] = set()
    todo = ["grpcio", "protobuf"]
    while todo:  # grpcio's and protobuf's own dependencies, as installed
        name = todo.pop()
        if name not in theirs:
            theirs.add(name)
            todo += sorted(installed.get(name, set()))
    arrived = set(installed) - set(kit.before)
    assert {"bummerl-kit", "grpcio", "protobuf"} <= arrived
    assert arrived <= {"bummerl-kit"} | theirs, arrived
    done = kit.run("import importlib.util, json, sys; print(json.dumps("
                   "[n for n in sys.argv[1:] if importlib.util.find_spec(n) is not None]))",
                   *GENERIC, "bummerl_kit")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["bummerl_kit"]
    with zipfile.ZipFile(kit.wheel) as wheel:
        tops = {name.split("/")[0] for name in wheel.namelist()}
        info = next(t for t in tops if t.endswith(".dist-info"))
        assert tops == {"bummerl_kit", info}
        assert wheel.read(f"{info}/top_level.txt").decode().split() == ["bummerl_kit"]


def test_the_installed_kit_is_this_trees_sources_under_its_name(kit):
    done = kit.run("import bummerl_kit, bummerl_kit.engine, os; "
                   "print(os.path.dirname(bummerl_kit.__file__)); "
                   "print(bummerl_kit.Bot.__module__, bummerl_kit.engine.Match.__module__)")
    assert done.returncode == 0, done.stderr
    where, modules = done.stdout.splitlines()
    assert Path(where).is_relative_to(Path(kit.python).parent.parent), where
    assert modules == "bummerl_kit.client.bot bummerl_kit.engine.match"
    package = Path(where).parent
    sources = kitbuild.sources()
    assert len(sources) > 30
    for path, inside in sources:
        assert (package / inside).read_text() == kitbuild.rewrite(path.read_text()), inside


def test_the_sdist_rebuilds_the_same_wheel(kit, tmp_path):
    with tarfile.open(kit.sdist) as sdist:
        sdist.extractall(tmp_path / "src", filter="data")
    (tree,) = (tmp_path / "src").iterdir()
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir",
                    str(tmp_path / "again"), str(tree)], check=True, capture_output=True,
                   timeout=300, cwd=tmp_path)
    (again,) = (tmp_path / "again").glob("*.whl")
    assert again.name == Path(kit.wheel).name

    def contents(path: Path | str) -> dict[str, bytes]:
        with zipfile.ZipFile(path) as wheel:
            return {name: wheel.read(name) for name in wheel.namelist()}

    assert contents(again) == contents(kit.wheel)


def test_the_command_takes_the_flags_of_python_m_client(kit):
    flags = re.compile(r"--[a-z][a-z-]+")
    ours = subprocess.run([sys.executable, "-m", "client", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert ours.returncode == 0, ours.stderr
    for command in ([kit.command], [kit.python, "-m", "bummerl_kit"]):
        done = subprocess.run([*command, "--help"], env=kit.env(), capture_output=True,
                              text=True, timeout=60, cwd=kit.folder)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("usage: bummerl-kit ")
        assert set(flags.findall(done.stdout)) == set(flags.findall(ours.stdout))
    done = subprocess.run([kit.command, "mybot.py:MyBot"], env=kit.env(), capture_output=True,
                          text=True, timeout=60, cwd=kit.folder)
    assert done.returncode == 1 and done.stderr.startswith("error: no bot token"), done.stderr


def test_the_readme_bot_plays_a_match_to_its_end_through_the_installed_command(kit, request,
                                                                               tmp_path):
    code = re.search(r"```python\n(.*?)```", guide(), re.S).group(1)
    assert code.startswith("from bummerl_kit import Bot\n"), code
    (tmp_path / "mybot.py").write_text(code)
    play = guide().split("**4. Play**", 1)[1]
    line = re.search(r"```sh\n(.*?)\n", play, re.S).group(1)
    assert line == "bummerl-kit mybot.py:MyBot --server HOST:50051 --token TOKEN", line
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        me_id, me_token = service.register("mybot")
        other_id, other_token = service.register("randy")
        created = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=[me_id, other_id], seed=45), metadata=auth(OPERATOR), timeout=10)
        match_id = created.match.match_id
        randy = Runner(RandomBot(45), service.server.address, other_token, max_matches=1)
        thread = threading.Thread(target=randy.run, daemon=True)
        thread.start()
        command = line.replace("HOST:50051", service.server.address).replace(
            "TOKEN", shlex.quote(me_token))
        try:
            done = subprocess.run(["bash", "-c", command + " --matches 1"], cwd=tmp_path,
                                  env=kit.env(), capture_output=True, text=True, timeout=180)
        finally:
            thread.join(60)
            randy.stop()
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        final = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id),
                                         timeout=10).match
    assert "Traceback" not in output, output
    summary = re.search(r"^\[mybot\] turns (\d+), won (\d), lost (\d), refused 0$", done.stdout,
                        re.M)
    assert summary and int(summary.group(1)) > 10, output
    assert final.state == match_pb2.MATCH_STATE_FINISHED, final
    assert final.winner in (0, 1)
    assert int(summary.group(2)) == (final.winner == 0), (output, final)


def test_every_conformance_case_replays_through_the_installed_engine(kit):
    cases = {p.name: p for p in CASES}
    if SHARED.is_dir():
        cases.update({p.name: p for p in SHARED.glob("*.json")})
    assert len(cases) >= 38
    paths = [str(cases[name]) for name in sorted(cases)]
    done = kit.run("import json, sys\n"
                   "from bummerl_kit.engine.replay import replay_case\n"
                   "for path in sys.argv[1:]:\n"
                   "    with open(path) as f:\n"
                   "        print(json.dumps(replay_case(json.load(f))))\n", *paths)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(paths)
    wrong = [Path(path).name for path, line in zip(paths, lines, strict=True)
             if json.loads(line) != json.loads(Path(path).read_text())["expect"]]
    assert wrong == []


def test_the_guides_examples_play_with_the_installed_kit_alone(kit):
    """README's two complete examples (examples/*.py) need nothing but the kit: loaded as
    `bummerl-kit` loads a bot, they play whole matches on the installed engine."""
    done = kit.run("import sys\n"
                   "from bummerl_kit.client.__main__ import load_bot\n"
                   "from bummerl_kit.engine import Match\n"
                   "bots = [load_bot(spec) for spec in sys.argv[1:]]\n"
                   "for seed in range(4):\n"
                   "    match = Match(seed, 'sharp' if seed % 2 else 'soft')\n"
                   "    while not match.is_over:\n"
                   "        seat = match.to_act\n"
                   "        match.apply(seat, bots[seat].act(match.observe(seat)))\n"
                   "    print(match.winner)\n",
                   f"{ROOT / 'examples' / 'random_bot.py'}:RandomBot",
                   f"{ROOT / 'examples' / 'simple_bot.py'}:SimpleBot")
    assert done.returncode == 0, done.stderr
    assert [int(w) in (0, 1) for w in done.stdout.split()] == [True] * 4, done.stdout
