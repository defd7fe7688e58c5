"""The layers go one way: every import of the project's code (read from the source tree with
`ast`: every import statement, at module level, inside a function or under TYPE_CHECKING)
against the rules of the architecture (docs/architecture.md).

- Between the project's packages, only the arrows of `ALLOWED`: engine imports nothing of the
  project; the contracts (bummerl) only the engine; services/ the engine, the contracts and the
  database, never the bot authors' kit (client/); web/ reads the database and never imports
  workers/; the command line (cli/) may use everything. events/ (the pure logic of
  tournaments) imports only the engine; the database, services, workers, web and cli use it.
- Inside services/, the packages are layers, highest first: api → ops → live → core. A module
  imports its own package and the ones below it, never one above.
- workers/ computes house moves and submits them over gRPC: of services/ it uses only the
  post-commit hooks, the metrics' server and the registry of the position analyst for
  people's hints (`WORKERS_MAY_USE`), none of the write paths; web/ nothing. The settings every
  process reads from the environment live low, in `db.settings`.
- bots/ (the house strategies, the exact endgame solver, batch play of duplicate deals and its
  statistics) is pure computation: the engine and the levels' table (events/) only, no I/O but
  reading its own model file; workers/, db/ (the statistics), analysis/, cli/ and the kit use it.
- analysis/ (valuing a finished match's decisions) is pure computation: the engine and, of
  bots/, the endgame solver (`ANALYSIS_MAY_USE`); workers/ (its Celery task), cli/ and the kit
  use it.
- web/ reads the database and is a client of the engine service, never a part of it: of the
  contracts (bummerl) it uses only the generated stubs (`bummerl.v1.*_pb2`, `*_pb2_grpc`), of
  those only the client side (`...Stub`, never a `...Servicer` or `add_...Servicer_to_server`),
  and of grpc only channels (never `grpc.server` or `grpc.aio`): every action of a person
  enters through the service's gRPC API (PeopleService), as a bot's does.
- hosting/ starts, watches and stops hosted bots (podman, Kubernetes): the database, the
  contracts and the engine; workers/ and cli/ use it, services/ only its archive check
  (`SERVICES_MAY_USE_OF_HOSTING`).
- bummerl_kit/ (the kit's package names and command, tools/kit.py builds the kit from it)
  imports only the kit's sources: client/, engine/, bots/, analysis/ and events/ (the
  levels' table).
- No import circle anywhere: between packages, between modules of one package, or through a
  package's `__init__`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The folders of the project's code, and the package each holds (proto/ holds `bummerl`).
FOLDERS = {"engine": "engine", "proto/bummerl": "bummerl", "db": "db", "services": "services",
           "workers": "workers", "web": "web", "client": "client", "cli": "cli",
           "examples": "examples", "events": "events", "analysis": "analysis",
           "bummerl_kit": "bummerl_kit", "bots": "bots", "hosting": "hosting"}
ALLOWED = {
    "engine": set(),
    "events": {"engine"},
    "bots": {"engine", "events"},
    "analysis": {"engine", "bots"},
    "bummerl": {"engine"},
    "db": {"engine", "events", "bots"},
    "services": {"engine", "bummerl", "db", "events", "hosting"},
    "workers": {"engine", "bummerl", "db", "services", "events", "analysis", "bots", "hosting"},
    # starts, watches and stops hosted bots (podman, Kubernetes)
    "hosting": {"engine", "bummerl", "db"},
    "web": {"engine", "bummerl", "db", "events"},
    "client": {"engine", "bummerl"},
    "examples": {"engine", "client", "bummerl_kit"},  # bots written for the kit
    # the kit's names and command (tools/kit.py builds its package)
    "bummerl_kit": {"engine", "client", "bots", "analysis", "events"},
    "cli": {"engine", "bummerl", "db", "services", "workers", "web", "client", "events",
            "analysis", "bots", "hosting"},
}
SERVICE_LAYERS = ["api", "ops", "live", "core"]  # highest first
WORKERS_MAY_USE = {"services.core.hooks", "services.core.metrics",
                   "services.core.analysts"}
# analysis/ is pure computation: of bots/ it uses only the endgame solver (no I/O).
ANALYSIS_MAY_USE = {"bots.endgame"}
# bots/ is pure computation too: of events/ it uses only the levels' table.
BOTS_MAY_USE = {"events.levels"}
# services/ checks an upload's files with hosting.archive (pure); it starts no container.
SERVICES_MAY_USE_OF_HOSTING = {"hosting.archive"}
WEB_CONTRACTS = ("_pb2", "_pb2_grpc")  # of bummerl, the web uses only the generated stubs


def project_packages() -> set[str]:
    """The project's top-level packages: folders of the tree with an __init__.py (and the
    shared `bummerl` package under proto/)."""
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    found |= {p.parent.name for p in ROOT.glob("proto/*/__init__.py")}
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "proto":
        parts.pop(0)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def statements(source: str, module: str, is_package: bool = False
               ) -> Iterator[tuple[str, list[str]]]:
    """Each import of `source` (the module `module`) as (the module named, the names taken
    from it as dotted paths): `import a.b` is ("a.b", []), `from a import b, c` is
    ("a", ["a.b", "a.c"]); relative imports are resolved."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join(filter(None, [*anchor, base]))
            yield base, [f"{base}.{alias.name}" for alias in node.names]


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module `source` (the module `module`) imports; `from a import b` counts as both
    `a` and `a.b` (b may be a module), relative imports are resolved."""
    found: set[str] = set()
    for base, names in statements(source, module, is_package):
        found.add(base)
        found.update(names)
    return found


def sources(folder: str) -> Iterable[Path]:
    """The project's Python files under `folder` (not generated protobuf code)."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        if not path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            yield path


def imports_in(folder: str) -> dict[str, set[str]]:
    """For each module under `folder`, the modules it imports."""
    result = {}
    for path in sources(folder):
        name = module_name(path)
        result[name] = imports_of(path.read_text(), name, path.name == "__init__.py")
    return result


def dependencies(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of `known` that `source` (the module `module`) depends on: `import a.b` is
    a.b; `from a import b` is a.b when that is a module, else a (`b` is a name of a's)."""
    found: set[str] = set()
    for base, names in statements(source, module, is_package):
        found.update(name for name in names if name in known)
        if not names or any(name not in known for name in names):
            found.add(base)
    return (found & known) - {module}


def project_graph() -> dict[str, set[str]]:
    """Every module of the project and the project's modules it depends on."""
    paths = {module_name(path): path for folder in FOLDERS for path in sources(folder)}
    known = set(paths)
    return {module: dependencies(path.read_text(), module, path.name == "__init__.py", known)
            for module, path in paths.items()}


def offenders(folder: str, forbidden: set[str]) -> dict[str, list[str]]:
    """Modules under `folder` importing a forbidden module (or something inside one)."""
    bad = {}
    for module, imported in imports_in(folder).items():
        hits = sorted(i for i in imported
                      if any(i == f or i.startswith(f + ".") for f in forbidden))
        if hits:
            bad[module] = hits
    return bad


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative), each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def file_of(module: str) -> str:
    """The file of `module`, relative to the root (for messages)."""
    top = module.split(".")[0]
    folder = next(f for f, package in FOLDERS.items() if package == top)
    rest = module.split(".")[1:]
    base = ROOT / folder / Path(*rest) if rest else ROOT / folder
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    return str(path.relative_to(ROOT))


def test_no_import_circle_anywhere():
    found = circles(project_graph())
    assert not found, "import circles (files of each):\n" + "\n".join(
        " <-> ".join(file_of(m) for m in circle) for circle in found)


def test_packages_import_only_their_allowed_layers():
    assert set(ALLOWED) == project_packages() - {"tests"}
    bad = {}
    for module, imported in project_graph().items():
        top = module.split(".")[0]
        wrong = sorted(i for i in imported
                       if i.split(".")[0] != top and i.split(".")[0] not in ALLOWED[top])
        if wrong:
            bad[file_of(module)] = wrong
    assert bad == {}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "services" or len(parts) < 2 or parts[1] not in SERVICE_LAYERS:
        return None
    return SERVICE_LAYERS.index(parts[1])


def test_service_layers_point_down():
    assert {p.name for p in (ROOT / "services").iterdir()
            if (p / "__init__.py").exists()} == set(SERVICE_LAYERS)
    bad = {}
    for module, imported in project_graph().items():
        layer = layer_of(module)
        if module.startswith("services.") and layer is None:
            bad[file_of(module)] = ["a module of services/ outside its four packages"]
            continue
        if layer is None:
            continue
        upward = sorted(i for i in imported
                        if (other := layer_of(i)) is not None and other < layer)
        if upward:
            bad[file_of(module)] = upward
    assert bad == {}


def test_workers_use_no_write_path_of_the_service():
    used = {i for imported in imports_in("workers").values() for i in imported
            if i == "services" or i.startswith("services.")}
    assert used <= WORKERS_MAY_USE | {"services.core"} | {
        f"{m}.{name}" for m in WORKERS_MAY_USE for name in ("HouseTurn", "hooks",
                                                         "metrics_port", "serve")}, used


def test_services_use_only_the_archive_check_of_hosting():
    used = {i for imported in imports_in("services").values() for i in imported
            if i == "hosting" or i.startswith("hosting.")}
    assert used and all(any(i == m or i.startswith(m + ".") for m in SERVICES_MAY_USE_OF_HOSTING)
                        for i in used), used


def test_web_reads_the_database_and_imports_neither_services_nor_workers():
    assert offenders("web", {"services", "workers"}) == {}


def test_analysis_is_pure_computation_over_the_engine_and_the_solver():
    used = {i for imported in imports_in("analysis").values() for i in imported
            if i.split(".")[0] in project_packages() - {"engine", "analysis"}}
    assert used and all(any(i == m or i.startswith(m + ".") for m in ANALYSIS_MAY_USE)
                        for i in used), used
    assert offenders("analysis", {"services", "db", "web", "cli", "client", "bummerl",
                                  "workers"}) == {}


def test_bots_are_pure_computation_over_the_engine():
    used = {i for imported in imports_in("bots").values() for i in imported
            if i.split(".")[0] in project_packages() - {"engine", "bots"}}
    assert used and all(any(i == m or i.startswith(m + ".") for m in BOTS_MAY_USE)
                        for i in used), used
    assert offenders("bots", {"services", "db", "web", "cli", "client", "bummerl", "workers",
                              "analysis"}) == {}


def web_server_side_uses(source: str) -> list[str]:
    """What `source` uses of gRPC's or the stubs' server side: `grpc.server`, `grpc.aio.server`
    (however imported), a `...Servicer` or `add_...Servicer_to_server`. gRPC's asyncio client
    (`grpc.aio.insecure_channel`, the socket tier's upstream) is a client's."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = node.attr if isinstance(node, ast.Attribute) else \
            node.id if isinstance(node, ast.Name) else None
        if name is None:
            continue
        if name.endswith("Servicer") or (name.startswith("add_") and name.endswith("_to_server")):
            found.append(name)
        if isinstance(node, ast.Attribute) and node.attr == "server":
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("grpc", "aio"):
                found.append(f"{owner.id}.server")
            elif isinstance(owner, ast.Attribute) and owner.attr == "aio" and \
                    isinstance(owner.value, ast.Name) and owner.value.id == "grpc":
                found.append("grpc.aio.server")
    for _module, names in statements(source, "web.x"):
        found += [n for n in names if n in ("grpc.server", "grpc.aio.server")]
    return found


def test_web_is_a_client_of_the_service_through_the_stubs_only():
    contracts = {}
    for module, imported in imports_in("web").items():
        wrong = sorted(i for i in imported if i.split(".")[0] == "bummerl"
                       and i not in ("bummerl", "bummerl.v1")
                       and not (i.startswith("bummerl.v1.") and i.endswith(WEB_CONTRACTS)))
        if wrong:
            contracts[module] = wrong
    assert contracts == {}, "web/ may use only the generated stubs of bummerl"
    server_side = {str(path.relative_to(ROOT)): found for path in sources("web")
                   if (found := web_server_side_uses(path.read_text()))}
    assert server_side == {}, "web/ is a gRPC client, never a server"
    uses_stubs = [m for m, imported in imports_in("web").items()
                  if any(i.endswith("_pb2_grpc") for i in imported)]
    assert uses_stubs, "the web reaches the service through the stubs (web.service_client)"


def test_the_web_checker_sees_the_server_side():
    assert web_server_side_uses("import grpc\ns = grpc.server(None)\n") == ["grpc.server"]
    assert web_server_side_uses("import grpc\ns = grpc.aio.server()\n") == ["grpc.aio.server"]
    assert web_server_side_uses("from grpc import aio\ns = aio.server()\n") == ["aio.server"]
    assert web_server_side_uses("from grpc.aio import server\n") == ["grpc.aio.server"]
    assert web_server_side_uses("import grpc\nc = grpc.aio.insecure_channel('a')\n") == []
    assert web_server_side_uses("from bummerl.v1 import people_pb2_grpc as g\n"
                                "g.add_PeopleServiceServicer_to_server(x, s)\n") == [
        "add_PeopleServiceServicer_to_server"]
    assert web_server_side_uses("import grpc\nc = grpc.insecure_channel('a')\n") == []


def test_services_do_not_import_the_kit():
    assert offenders("services", {"client"}) == {}


def test_engine_imports_nothing_of_the_project():
    others = project_packages() - {"engine"}
    assert {"services", "workers", "client", "db"} <= others
    assert offenders("engine", others) == {}


def test_the_checker_sees_every_kind_of_import():
    source = ("import services.actions\n"
              "from services import games\n"
              "def f():\n    from ..services import matches\n"
              "from . import sibling\n")
    found = imports_of(source, "workers.deep.mod")
    assert {"services.actions", "services.games", "workers.services.matches",
            "workers.deep.sibling"} <= found
    assert imports_of("from .x import y", "workers", is_package=True) >= {"workers.x.y"}


def test_a_package_import_of_a_module_is_that_module():
    known = {"web", "web.bots", "web.charts"}
    assert dependencies("from web import charts, create_app\nimport web.bots\n", "web.x",
                        False, known) == {"web", "web.charts", "web.bots"}
    assert dependencies("from web import charts\n", "web.bots", False, known) == {
        "web.charts"}
    assert dependencies("from . import charts\n", "web", True, known) == {"web.charts"}


def test_the_checker_finds_circles_and_names_them():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": set(), "f": {"g"},
             "g": {"f"}}
    assert circles(graph) == [["a", "b", "c"], ["f", "g"]]
    assert circles({"x": {"y"}, "y": set()}) == []
    assert file_of("services.core.actions") == "services/core/actions.py"
    assert file_of("bummerl.wire") == "proto/bummerl/wire.py"
    assert file_of("services.core") == "services/core/__init__.py"
