"""Contract safety (issue 11): `buf lint` (STANDARD + COMMENTS) and `buf breaking` against the
last released contract (proto/released/v1.json), with buf from the npm package pinned in
tools/package.json. The checks are shown to catch a breaking change and a missing comment."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from npmkit import npm_ci

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
RELEASED = ROOT / "proto" / "released" / "v1.json"
pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def buf() -> str:
    npm_ci(TOOLS)
    return str(TOOLS / "node_modules" / ".bin" / "buf")


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_buf_lint(buf):
    done = run(buf, "lint", "proto")
    assert done.returncode == 0, done.stdout + done.stderr


def test_buf_breaking_against_the_released_contract(buf):
    done = run(buf, "breaking", "proto", "--against", str(RELEASED))
    assert done.returncode == 0, done.stdout + done.stderr


def copy_of_protos(tmp_path: Path) -> Path:
    target = tmp_path / "proto"
    shutil.copytree(ROOT / "proto" / "bummerl", target / "bummerl",
                    ignore=shutil.ignore_patterns("*.py", "*.pyi", "__pycache__"))
    shutil.copy(ROOT / "proto" / "buf.yaml", target / "buf.yaml")
    return target


def test_a_renamed_field_and_a_removed_rpc_are_caught(buf, tmp_path):
    proto = copy_of_protos(tmp_path)
    match = proto / "bummerl" / "v1" / "match.proto"
    text = match.read_text()
    text = text.replace("message GetMatchRequest {\n  // The match id.\n  int64 match_id = 1;",
                        "message GetMatchRequest {\n  // The match id.\n  int64 id = 1;")
    text = text.replace("  rpc GetObservation(GetObservationRequest)", "  // gone\n  // rpc X(")
    match.write_text(text)
    done = run(buf, "breaking", str(proto), "--against", str(RELEASED))
    assert done.returncode != 0
    assert "GetMatchRequest" in done.stdout and "GetObservation" in done.stdout


def test_a_field_without_a_comment_is_caught(buf, tmp_path):
    proto = copy_of_protos(tmp_path)
    bot = proto / "bummerl" / "v1" / "bot.proto"
    bot.write_text(bot.read_text().replace(
        "message Hello {\n", "message Hello {\n  string undocumented = 9;\n"))
    done = run(buf, "lint", str(proto))
    assert done.returncode != 0 and "undocumented" in done.stdout
