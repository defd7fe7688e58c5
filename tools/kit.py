"""Build the bot authors' kit, the `bummerl-kit` distribution: `bash scripts/kit` runs this
(`.venv/bin/python tools/kit.py [--outdir DIR]`) and leaves its sdist and wheel in dist/.

The kit is made from the server's own sources, never from a copy kept in the repository:
engine/, client/, proto/bummerl/ (wire.py and the generated bummerl.v1 code), bots/ (the house
strategies, the endgame solver, practice on duplicate deals; with the opponent model's JSON),
analysis/ (the analyst), events/levels.py (the levels' table) and bummerl_kit/ (the kit's
package file, which in the repository re-exports client/ and engine/, and its command). Those
sources import each other by absolute names (`import engine`, `from client.bot import Bot`,
`from bummerl.v1 import bot_pb2`); in the kit they live under one package, `bummerl_kit`, so
that nothing is installed at the top level under a generic name.

`layout` copies them under a temporary `bummerl_kit/`, and `rewrite` changes the module names
of their import statements, and nothing else, to the `bummerl_kit.` prefix: it edits the source
at the places `ast` gives for each import (comments and line numbers stay), then checks that
the result parses to the original's tree but for those names. Why not another way: a package
directory mapping (`package-dir`) would install the modules under the new names, but their
`import engine` lines would still look for a top-level `engine`; a `sys.modules` alias at import
time would make `engine` a top-level name again. `build` then runs `python -m build` (setuptools)
on that tree: the sdist, then the wheel built from that sdist.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "bummerl_kit"
NAME = "bummerl-kit"
# The folders (or single files) the kit is made of (from the root), and where each goes inside
# bummerl_kit/. Of events/ only the levels' table: the rest is tournaments' logic (networkx).
PARTS = {"bummerl_kit": "", "engine": "engine", "client": "client", "proto/bummerl": "bummerl",
         "bots": "bots", "analysis": "analysis", "events/__init__.py": "events/__init__.py",
         "events/levels.py": "events/levels.py"}
# The data files the kit's sources read beside them (copied as they are).
DATA = {"bots/opponent_model.json": "bots/opponent_model.json"}
# The top-level names the sources import each other by, and the kit's name of each.
NAMES = {"engine": f"{PACKAGE}.engine", "client": f"{PACKAGE}.client",
         "bummerl": f"{PACKAGE}.bummerl", "bots": f"{PACKAGE}.bots",
         "analysis": f"{PACKAGE}.analysis", "events": f"{PACKAGE}.events"}
FROM = re.compile(r"from[ \t]+([\w.]+)")


class RewriteError(ValueError):
    """An import statement the rewrite cannot map (the message names the file and line)."""


def renamed(module: str) -> str | None:
    """The kit's name of `module` (`engine.cards` -> `bummerl_kit.engine.cards`), or None
    when `module` is not one of the kit's sources (`grpc`, `os`, ...)."""
    top, dot, rest = module.partition(".")
    if top not in NAMES:
        return None
    return NAMES[top] + dot + rest


def column(line: str, offset: int) -> int:
    """The character column of `ast`'s `offset` (a count of UTF-8 bytes) in `line`."""
    return len(line.encode()[:offset].decode())


class Renamer(ast.NodeTransformer):
    """What `rewrite` must give, as a tree: every import of a source under its kit name."""

    def visit_Import(self, node: ast.Import) -> ast.Import:
        for alias in node.names:
            if (new := renamed(alias.name)) is not None:
                alias.asname = alias.asname or alias.name
                alias.name = new
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom:
        if node.level == 0 and node.module and (new := renamed(node.module)) is not None:
            node.module = new
        return node


def rewrite(source: str, where: str = "<source>") -> str:
    """`source` with every absolute import of the kit's sources under the `bummerl_kit.`
    prefix: `import engine` -> `import bummerl_kit.engine as engine`, `from client.bot import
    Bot` -> `from bummerl_kit.client.bot import Bot`; all else, comments and line numbers too,
    unchanged. Raises RewriteError for `import engine.cards` without `as` (it would bind
    `bummerl_kit`, not `engine`): write `from engine import cards` instead."""
    tree = ast.parse(source, where)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (line index, start, end, new text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            new = renamed(node.module)
            if new is None:
                continue
            line = lines[node.lineno - 1]
            found = FROM.match(line, column(line, node.col_offset))
            if found is None or found.group(1) != node.module:
                raise RewriteError(f"{where}:{node.lineno}: cannot find the module name "
                                   f"{node.module!r} of this import on its first line")
            edits.append((node.lineno - 1, found.start(1), found.end(1), new))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                new = renamed(alias.name)
                if new is None:
                    continue
                if alias.asname is None and "." in alias.name:
                    raise RewriteError(
                        f"{where}:{alias.lineno}: `import {alias.name}` cannot be moved under "
                        f"{PACKAGE} (it binds the name {alias.name.split('.')[0]!r}): write "
                        f"`from {alias.name.rpartition('.')[0]} import "
                        f"{alias.name.rpartition('.')[2]}` instead")
                line = lines[alias.lineno - 1]
                start = column(line, alias.col_offset)
                if line[start:start + len(alias.name)] != alias.name:
                    raise RewriteError(f"{where}:{alias.lineno}: cannot find {alias.name!r} "
                                       "where ast places it")
                text = new if alias.asname else f"{new} as {alias.name}"
                edits.append((alias.lineno - 1, start, start + len(alias.name), text))
    for index, start, end, text in sorted(edits, reverse=True):
        lines[index] = lines[index][:start] + text + lines[index][end:]
    result = "".join(lines)
    expected = ast.dump(Renamer().visit(ast.parse(source, where)))
    if ast.dump(ast.parse(result, where)) != expected:  # never: a bug of this function
        raise RewriteError(f"{where}: the rewritten module is not the same program")
    return result


def sources() -> list[tuple[Path, Path]]:
    """Each source file of the kit and its path inside the package (bummerl_kit/...)."""
    found = []
    for folder, inside in PARTS.items():
        if (ROOT / folder).is_file():
            found.append((ROOT / folder, Path(PACKAGE, inside)))
            continue
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            found.append((path, Path(PACKAGE, inside, path.relative_to(ROOT / folder))))
    if not any(path.name.endswith("_pb2_grpc.py") for path, _ in found):
        raise SystemExit("no generated protobuf code under proto/bummerl/v1: run "
                         ".venv/bin/python proto/build.py (scripts/kit does)")
    return found


def requirements() -> list[str]:
    """The run-time dependencies: the grpcio and protobuf that the generated code was made
    for, or newer (the generated modules refuse older ones when imported)."""
    code = ROOT / "proto" / "bummerl" / "v1"
    grpc_text = next(code.glob("*_pb2_grpc.py")).read_text()
    pb_text = next(code.glob("*_pb2.py")).read_text()
    grpc = re.search(r"GRPC_GENERATED_VERSION = '([\d.]+)'", grpc_text)
    protobuf = re.search(r"# Protobuf Python Version: ([\d.]+)", pb_text)
    if grpc is None or protobuf is None:
        raise SystemExit("cannot read the versions of grpcio and protobuf that the generated "
                         "code under proto/bummerl/v1 needs")
    return [f"grpcio>={grpc.group(1)}", f"protobuf>={protobuf.group(1)}"]


def version() -> str:
    """The kit's version: the server's (pyproject.toml), so a kit names the site it fits."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return str(tomllib.load(f)["project"]["version"])


# Optional extras: the frameworks of the training environments (bummerl_kit.envs imports
# each only when its environment is asked for).
EXTRAS = {"pettingzoo": ["pettingzoo>=1.27,<2", "gymnasium>=1.0"],
          "openspiel": ["open-spiel>=2.0.2"]}


def pyproject() -> str:
    requires = ", ".join(f'"{r}"' for r in requirements())
    extras = "\n".join(f"{name} = [{', '.join(repr(r) for r in deps)}]".replace("'", '"')
                       for name, deps in EXTRAS.items())
    return f"""[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "{NAME}"
version = "{version()}"
description = "The bot authors' kit of bummerl: write a Schnapsen bot, play it on a server."
readme = "README.md"
requires-python = ">=3.11"
dependencies = [{requires}]

[project.optional-dependencies]
{extras}

[project.scripts]
{NAME} = "{PACKAGE}.__main__:main"

[tool.setuptools.packages.find]
include = ["{PACKAGE}*"]

[tool.setuptools.package-data]
"{PACKAGE}.bots" = ["*.json"]
"""


def layout(tree: Path) -> Path:
    """Lay the kit's project out in the empty folder `tree`: pyproject.toml, README.md
    (docs/kit.md) and bummerl_kit/ with the rewritten sources."""
    for path, inside in sources():
        target = tree / inside
        target.parent.mkdir(parents=True, exist_ok=True)
        where = str(path.relative_to(ROOT))
        target.write_text(rewrite(path.read_text(encoding="utf-8"), where), encoding="utf-8")
    for data, placed in DATA.items():
        shutil.copyfile(ROOT / data, tree / PACKAGE / placed)
    (tree / "pyproject.toml").write_text(pyproject())
    shutil.copyfile(ROOT / "docs" / "kit.md", tree / "README.md")
    return tree


def build(out: Path) -> list[Path]:
    """Build the kit's sdist, then its wheel from that sdist, into `out` (after removing the
    kit's older ones there); returns their paths, the sdist first."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"{PACKAGE}-*"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="bummerl-kit-") as temporary:
        tree = layout(Path(temporary) / NAME)
        subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                        str(out.resolve()), str(tree)], check=True, stdout=sys.stderr,
                       cwd=temporary)
    made = sorted(out.glob(f"{PACKAGE}-*.tar.gz")) + sorted(out.glob(f"{PACKAGE}-*.whl"))
    if len(made) != 2:
        raise SystemExit(f"expected one sdist and one wheel in {out}, found {made}")
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bash scripts/kit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outdir", type=Path, default=ROOT / "dist",
                        help="where the sdist and wheel go (default: dist/)")
    args = parser.parse_args(argv)
    for path in build(args.outdir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
