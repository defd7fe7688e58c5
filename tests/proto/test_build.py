"""`proto/build.py` (run by `bash scripts/setup` at every `bash scripts/run`) generates the
code only when a .proto file is newer than it, and says nothing when nothing changed (issue 44:
"proto: generated 7 files" at every start). Runs the real script, on a copy of proto/, so the
repository's own generated code is left alone."""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_of_build(tmp_path: Path, monkeypatch):
    folder = tmp_path / "proto"
    shutil.copytree(ROOT / "proto" / "bummerl", folder / "bummerl",
                    ignore=shutil.ignore_patterns("*_pb2*.py*", "__pycache__"))
    shutil.copy(ROOT / "proto" / "build.py", folder / "build.py")
    spec = importlib.util.spec_from_file_location("proto_build_copy", folder / "build.py")
    assert spec and spec.loader
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    monkeypatch.setattr(build, "install_path", lambda: None)  # the venv's .pth stays as it is
    return build, folder


def mtimes(folder: Path) -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in (folder / "bummerl").rglob("*_pb2*")}


def test_generates_once_then_only_when_a_proto_changed(tmp_path, monkeypatch, capsys):
    build, folder = copy_of_build(tmp_path, monkeypatch)
    count = len(build.protos())
    build.main([])
    made = mtimes(folder)
    assert len(made) == 3 * count
    assert capsys.readouterr().err == (f"proto: generated {count} files under "
                                       f"{folder / 'bummerl'}\n")

    build.main([])  # nothing changed: nothing generated, nothing said
    assert capsys.readouterr().err == "" and mtimes(folder) == made

    later = time.time() + 5  # a .proto edited after the code was generated
    os.utime(folder / "bummerl" / "v1" / "match.proto", (later, later))
    build.main([])
    assert "proto: generated" in capsys.readouterr().err

    (folder / "bummerl" / "v1" / "bot_pb2_grpc.py").unlink()  # a generated module missing
    build.main([])
    assert "proto: generated" in capsys.readouterr().err
    assert (folder / "bummerl" / "v1" / "bot_pb2_grpc.py").exists()

    build.main(["--force"])
    assert "proto: generated" in capsys.readouterr().err
