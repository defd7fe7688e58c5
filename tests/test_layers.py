"""The layers go one way: each folder's imports, read from the source tree with `ast` (every
import statement, at module level or inside a function), against the rules of the architecture.

- workers/ computes house moves and submits them over gRPC: it imports none of the service's
  write paths (services.actions, services.games, services.matches);
- web/ reads the database and never imports workers/;
- services/ never imports the bot authors' kit (client/);
- engine/ imports nothing of the project's other folders;
- within engine/ and within workers/, no module imports itself through others (no circles).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def project_packages() -> set[str]:
    """The project's top-level packages: folders of the tree with an __init__.py (and the
    shared `bummerl` package under proto/)."""
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    found |= {p.parent.name for p in ROOT.glob("proto/*/__init__.py")}
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module `source` (the module `module`) imports; `from a import b` counts as both
    `a` and `a.b` (b may be a module), relative imports are resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join(filter(None, [*anchor, base]))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def imports_in(folder: str) -> dict[str, set[str]]:
    """For each module under `folder`, the modules it imports."""
    result = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        name = module_name(path)
        result[name] = imports_of(path.read_text(), name, path.name == "__init__.py")
    return result


def offenders(folder: str, forbidden: set[str]) -> dict[str, list[str]]:
    """Modules under `folder` importing a forbidden module (or something inside one)."""
    bad = {}
    for module, imported in imports_in(folder).items():
        hits = sorted(i for i in imported
                      if any(i == f or i.startswith(f + ".") for f in forbidden))
        if hits:
            bad[module] = hits
    return bad


def test_workers_do_not_import_the_services_write_paths():
    write_paths = {"services.actions", "services.games", "services.matches"}
    assert offenders("workers", write_paths) == {}


def test_web_does_not_import_workers():
    assert offenders("web", {"workers"}) == {}


def test_services_do_not_import_the_kit():
    assert offenders("services", {"client"}) == {}


def test_engine_imports_nothing_of_the_project():
    others = project_packages() - {"engine"}
    assert {"services", "workers", "client", "db"} <= others
    assert offenders("engine", others) == {}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph` (module -> modules it imports, as `imports_in` gives):
    each a sorted list of modules that import one another (the strongly connected components
    of more than one module); imports of modules outside the graph are left out."""
    edges = {m: sorted(i for i in imported if i in graph and i != m)
             for m, imported in graph.items()}
    found: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in edges[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_no_import_circles_in_the_engine_or_the_workers():
    assert circles(imports_in("engine")) == []
    assert circles(imports_in("workers")) == []


def test_the_circle_finder_finds_circles():
    graph = {"p.a": {"p.b", "os"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a", "p.e"},
             "p.e": {"p.d"}, "p.f": {"p.a"}}
    assert sorted(circles(graph)) == [["p.a", "p.b", "p.c"], ["p.d", "p.e"]]
    assert circles({"p.a": {"p.a", "p.b"}, "p.b": set()}) == []


def test_the_checker_sees_every_kind_of_import():
    source = ("import services.actions\n"
              "from services import games\n"
              "def f():\n    from ..services import matches\n"
              "from . import sibling\n")
    found = imports_of(source, "workers.deep.mod")
    assert {"services.actions", "services.games", "workers.services.matches",
            "workers.deep.sibling"} <= found
    assert imports_of("from .x import y", "workers", is_package=True) >= {"workers.x.y"}
