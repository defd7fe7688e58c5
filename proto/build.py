"""Generate the Python code of the bummerl.v1 protobuf contracts (run by scripts/setup).

The generated modules (`*_pb2.py`, `*_pb2.pyi`, `*_pb2_grpc.py`) are written next to the
`.proto` files under `proto/bummerl/v1/` and are never committed. They import each other as
`bummerl.v1.xxx_pb2`, so this script also puts `proto/` on the interpreter's import path with a
`.pth` file in its site-packages: after `bash scripts/setup`, `from bummerl.v1 import match_pb2`
works anywhere in the virtual environment.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
PTH_NAME = "bummerl_proto.pth"


def protos() -> list[Path]:
    return sorted((HERE / "bummerl").rglob("*.proto"))


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


def main() -> None:
    generate()
    install_path()
    print(f"proto: generated {len(protos())} files under {HERE / 'bummerl'}", file=sys.stderr)


if __name__ == "__main__":
    main()
