"""tools/kit.py, the kit's build (issue 45): `rewrite` moves the imports of the kit's sources
under `bummerl_kit` and changes nothing else; `layout` lays out every source of engine/,
client/, proto/bummerl/, bots/, analysis/, events/levels.py and bummerl_kit/ so, with grpcio and
protobuf as the only dependencies."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from kitkit import install_lines, kitbuild

ROOT = Path(__file__).resolve().parents[2]

GENERIC = ("engine", "client", "bummerl", "bots", "analysis", "events")


def test_each_form_of_import_is_moved_under_the_kit():
    source = (
        "import engine\n"
        "import engine.cards as cards\n"
        "import grpc, client as c\n"
        "from engine.cards import Card  # a comment stays\n"
        "from bummerl.v1 import bot_pb2 as bot__pb2\n"
        "from client import (\n"
        "    Bot,  # the class\n"
        "    run,\n"
        ")\n"
        "from . import sibling\n"
        "from .engine import x\n"
        "from engineering import y\n"
        "import clientele\n"
        "def f():\n"
        "    from bummerl import wire\n"
        "    return 'from engine import Card'\n"
        "if True: import engine as e; x = 'é'; from client.bot import Bot\n"
    )
    out = kitbuild.rewrite(source)
    assert out.splitlines() == [
        "import bummerl_kit.engine as engine",
        "import bummerl_kit.engine.cards as cards",
        "import grpc, bummerl_kit.client as c",
        "from bummerl_kit.engine.cards import Card  # a comment stays",
        "from bummerl_kit.bummerl.v1 import bot_pb2 as bot__pb2",
        "from bummerl_kit.client import (",
        "    Bot,  # the class",
        "    run,",
        ")",
        "from . import sibling",
        "from .engine import x",
        "from engineering import y",
        "import clientele",
        "def f():",
        "    from bummerl_kit.bummerl import wire",
        "    return 'from engine import Card'",
        "if True: import bummerl_kit.engine as e; x = 'é'; from bummerl_kit.client.bot import Bot",
    ]


def test_a_dotted_import_that_binds_the_generic_name_is_refused_with_the_fix():
    with pytest.raises(kitbuild.RewriteError, match=r"x.py:2: .*from engine import cards"):
        kitbuild.rewrite("import os\nimport engine.cards\n", "x.py")


def test_the_layout_holds_every_source_with_no_generic_import_left(tmp_path):
    tree = kitbuild.layout(tmp_path / "tree")
    package = tree / "bummerl_kit"
    laid = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    expected = {p.relative_to(ROOT / "bummerl_kit").as_posix()
                for p in (ROOT / "bummerl_kit").rglob("*.py") if "__pycache__" not in p.parts}
    assert {"__init__.py", "__main__.py", "offline.py", "envs/encoding.py", "envs/aec.py",
            "envs/openspiel_game.py"} <= expected
    for folder, inside in (("engine", "engine"), ("client", "client"),
                           ("proto/bummerl", "bummerl"), ("bots", "bots"),
                           ("analysis", "analysis")):
        expected |= {(Path(inside) / p.relative_to(ROOT / folder)).as_posix()
                     for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts}
    expected |= {"events/__init__.py", "events/levels.py"}  # of events/, the levels' table only
    assert laid == expected
    assert {"bummerl/v1/bot_pb2.py", "bummerl/v1/bot_pb2_grpc.py", "engine/hand.py",
            "client/runner.py", "bots/endgame.py", "bots/practice.py", "analysis/match.py",
            "__main__.py", "offline.py"} <= laid
    # the champion's opponent model, read beside its module
    assert (package / "bots" / "opponent_model.json").read_bytes() == (
        ROOT / "bots" / "opponent_model.json").read_bytes()
    left = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level \
                else []
            left += [f"{path.name}: {n}" for n in names if n.split(".")[0] in GENERIC]
    assert left == []
    project = tomllib.loads((tree / "pyproject.toml").read_text())["project"]
    assert [d.split(">=")[0] for d in project["dependencies"]] == ["grpcio", "protobuf"]
    assert project["name"] == "bummerl-kit"
    assert project["scripts"] == {"bummerl-kit": "bummerl_kit.__main__:main"}
    # The environments' frameworks only as extras (`bummerl-kit[pettingzoo]`, `[openspiel]`).
    assert project["optional-dependencies"] == {
        "pettingzoo": ["pettingzoo>=1.27,<2", "gymnasium>=1.0"],
        "openspiel": ["open-spiel>=2.0.2"]}
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == server["version"]
    assert (tree / "README.md").read_text() == (ROOT / "docs" / "kit.md").read_text()


def test_in_the_repository_the_kit_is_client_and_engine_under_its_name():
    """A bot written for the kit (`from bummerl_kit import Bot`) runs on the server's side too
    (`bummerl bot run`, `bummerl bot test`): there bummerl_kit's names are client's and
    engine's, the same objects."""
    import bummerl_kit
    import client
    import engine

    assert bummerl_kit.Bot is client.Bot and bummerl_kit.run is client.run
    assert bummerl_kit.engine is engine and bummerl_kit.Action is engine.Action


def test_docs_kit_md_installs_with_the_readmes_commands():
    """docs/kit.md's build and install lines are README's (which tests/kitkit.py runs)."""
    def commands(block: str) -> list[str]:
        return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]

    doc = (ROOT / "docs" / "kit.md").read_text().split("## Build and install", 1)[1]
    block = re.search(r"```sh\n(.*?)```", doc, re.S)
    assert block and commands(block.group(1)) == commands(install_lines()) == [
        "bash scripts/kit", "pip install dist/bummerl_kit-*.whl"]
