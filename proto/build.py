"""Generate the Python code of the bummerl.v1 protobuf contracts (run by scripts/setup).

The generated modules (`*_pb2.py`, `*_pb2.pyi`, `*_pb2_grpc.py`) are written next to the
`.proto` files under `proto/bummerl/v1/` and are never committed. They import each other as
`bummerl.v1.xxx_pb2`, so this script also puts `proto/` on the interpreter's import path with a
`.pth` file in its site-packages: after `bash scripts/setup`, `from bummerl.v1 import match_pb2`
works anywhere in the virtual environment.

The code is generated again only when a `.proto` file (or this script) is newer than the oldest
generated module, or one is missing (`--force`: always); then it says so on stderr, and says
nothing when nothing changed.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
PTH_NAME = "bummerl_proto.pth"


def protos() -> list[Path]:
    return sorted((HERE / "bummerl").rglob("*.proto"))


def outputs(proto: Path) -> list[Path]:
    """The modules generated from `proto`."""
    stem = proto.with_suffix("")
    return [stem.with_name(stem.name + suffix)
            for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")]


def stale() -> bool:
    """Whether a generated module is missing or older than a `.proto` file or this script."""
    sources = protos()
    made = [out for proto in sources for out in outputs(proto)]
    if not all(out.exists() for out in made):
        return True
    newest = max(p.stat().st_mtime for p in [*sources, Path(__file__).resolve()])
    return min(out.stat().st_mtime for out in made) < newest


def generate() -> None:
    import grpc_tools
    from grpc_tools import protoc

    well_known = Path(grpc_tools.__file__).resolve().parent / "_proto"
    files = [str(p.relative_to(HERE)) for p in protos()]
    args = [
        "grpc_tools.protoc",
        f"-I{HERE}",
        f"-I{well_known}",
        f"--python_out={HERE}",
        f"--pyi_out={HERE}",
        f"--grpc_python_out={HERE}",
        *files,
    ]
    code = protoc.main(args)
    if code != 0:
        raise SystemExit(f"protoc failed with exit code {code}")
    for package in {p.parent for p in protos()} | {HERE / "bummerl"}:
        init = package / "__init__.py"
        if not init.exists():
            init.write_text("")


def install_path() -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    pth = site / PTH_NAME
    line = f"{HERE}\n"
    if not pth.exists() or pth.read_text() != line:
        pth.write_text(line)


def main(argv: list[str] | None = None) -> None:
    force = "--force" in (sys.argv[1:] if argv is None else argv)
    if force or stale():
        generate()
        print(f"proto: generated {len(protos())} files under {HERE / 'bummerl'}",
              file=sys.stderr)
    install_path()


if __name__ == "__main__":
    main()
