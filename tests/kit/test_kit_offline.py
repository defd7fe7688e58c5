"""What an author does without a server, through the installed kit (issue 45; tests/kitkit.py's
fresh virtual environment holding only the kit, grpcio and protobuf): `bummerl-kit practice`
plays README's bot against a house level on duplicate deals, and with `--records DIR` writes its
matches as match records that `bummerl-kit replay` verifies (and the schema holds) and
`bummerl-kit analyse` values. Practice on deals gives the numbers of the server's `bummerl bot
test` (bots.practice, the same code), and a record that was tampered with does not verify."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
from kitkit import Kit, guide, installed_kit

from bots.practice import practise
from client.__main__ import load_bot
from engine import Action

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "match-record.schema.json").read_text())

pytestmark = pytest.mark.timeout(900)  # the first test may build and install the kit


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


@pytest.fixture
def mybot(tmp_path: Path) -> Path:
    """README's bot (`mybot.py` of "Write a bot in 10 minutes"), in the test's folder."""
    code = re.search(r"```python\n(.*?)```", guide(), re.S).group(1)
    assert code.startswith("from bummerl_kit import Bot\n"), code
    (tmp_path / "mybot.py").write_text(code)
    return tmp_path / "mybot.py"


def command(kit: Kit, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kit.command, *args], cwd=cwd, env=kit.env(), capture_output=True,
                          text=True, timeout=600)


def test_practice_writes_records_that_replay_verifies_and_analyse_values(kit, mybot, tmp_path):
    done = command(kit, "practice", "mybot.py:MyBot", "--vs", "level-2", "-n", "3", "--seed",
                   "11", "--records", "games", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "practice: MyBot (A) vs house-level-2 (B), profile soft, seed 11" in done.stdout
    assert re.search(r"^duplicate matches played \(× 2 seatings\) +3 \(6 matches\)$", done.stdout,
                     re.M), done.stdout
    assert "no exceptions, no illegal actions in " in done.stdout
    path = tmp_path / "games" / "practice-level-2-11.jsonl"
    assert "6 match records: games/practice-level-2-11.jsonl" in done.stdout
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["match_id"] for r in records] == [1, 2, 3, 4, 5, 6]
    for record in records:
        jsonschema.validate(record, SCHEMA)
    # duplicate: each match twice from the same seed, the seats swapped
    assert [r["seed"] for r in records] == [11, 11, 12, 12, 13, 13]
    assert [[b["name"] for b in r["bots"]] for r in records[:2]] == [
        ["MyBot", "house-level-2"], ["house-level-2", "MyBot"]]
    assert records[0]["hands"][0]["deck"] == records[1]["hands"][0]["deck"]
    assert all(r["origin"] == "practice" and r["result"]["end_reason"] == "played"
               for r in records)

    done = command(kit, "replay", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(line["match_id"], line["verified"], line["problems"]) for line in lines] == [
        (i, True, []) for i in range(1, 7)]
    assert [line["match"]["winner"] for line in lines] == [r["result"]["winner"]
                                                           for r in records]

    tampered = tmp_path / "tampered.jsonl"
    bad = json.loads(json.dumps(records[0]))
    bad["hands"][0]["result"]["game_points"] = 4 - bad["hands"][0]["result"]["game_points"]
    tampered.write_text(json.dumps(bad) + "\n")
    done = command(kit, "replay", str(tampered), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert json.loads(done.stdout)["verified"] is False

    done = command(kit, "analyse", str(path), "--samples", "2", "-o", "analysed.jsonl",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    analysed = [json.loads(line) for line in (tmp_path / "analysed.jsonl").read_text()
                .splitlines()]
    assert [a["match_id"] for a in analysed] == [1, 2, 3, 4, 5, 6]
    for record, found in zip(records, analysed, strict=True):
        assert {k: v for k, v in found.items() if k != "analysis"} == record
        actions = {(a["seq"], a["seat"], str(Action.from_dict(a))) for h in record["hands"]
                   for a in h["actions"]}
        valued = [(d["seq"], d["seat"], d["taken"]) for d in found["analysis"]["decisions"]]
        assert valued and set(valued) <= actions  # the match's decisions, valued where taken
        assert sum(seat[kind]["decisions"] for seat in found["analysis"]["seats"]
                   for kind in ("exact", "estimate")) == len(valued)
    assert done.stderr.count("match ") == 6 and "MyBot lost " in done.stderr


def test_practice_on_deals_is_bummerl_bot_tests(kit, mybot, tmp_path):
    done = command(kit, "practice", "mybot.py:MyBot", "--vs", "house-level-1", "-n", "4",
                   "--seed", "5", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    result, adapter = practise(load_bot(f"{mybot}:MyBot"), "level-1", 4, 5)
    assert not adapter.problems
    assert "deals played (× 2 seatings)" in done.stdout and "4 (8 hands)" in done.stdout
    net = re.search(r"net game points per deal, A − B +(-?[\d.]+)", done.stdout)
    assert net and float(net.group(1)) == round(result["net_per_deal"], 2), done.stdout
    rate = re.search(r"win rate \(hands\), MyBot +([\d.]+)%", done.stdout)
    assert rate and float(rate.group(1)) == round(100 * result["win_rate_a"], 1), done.stdout


def test_the_house_levels_run_in_the_kit_and_bad_input_is_one_line(kit, mybot, tmp_path):
    # level 5 is the champion: its opponent model's JSON comes with the kit
    done = kit.run("from bummerl_kit.bots import make_bot\n"
                   "from bummerl_kit.bots.opponent import OpponentModel\n"
                   "from bummerl_kit.bots.batch import play_pair\n"
                   "OpponentModel.load()\n"
                   "print(play_pair(make_bot('level-5'), make_bot('level-1'), 1, 0).deal)\n")
    assert done.returncode == 0 and done.stdout == "0\n", done.stderr
    done = command(kit, "practice", "mybot.py:MyBot", "--vs", "deepblue", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: unknown house bot 'deepblue': choose one of ")
    assert "level-5" in done.stderr
    done = command(kit, "analyse", "nothing.jsonl", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("error: cannot read nothing.jsonl")
    done = command(kit, "practice", "--help", cwd=tmp_path)
    assert done.returncode == 0 and "level-3 (Casual)" in done.stdout


def test_docs_kit_md_without_a_server_as_written(kit, mybot, tmp_path):
    """docs/kit.md's "Without a server" lines as written, one after the other in the author's
    folder (README's `mybot.py`) with the installed kit: only `SEED` is filled in, with the seed
    the `--records` line printed."""
    doc = (ROOT / "docs" / "kit.md").read_text().split("## Without a server", 1)[1]
    block = re.search(r"```sh\n(.*?)```", doc, re.S)
    assert block, "docs/kit.md's Without a server has no ```sh block"
    lines = [re.sub(r"\s+#\s.*$", "", line).strip() for line in block.group(1).splitlines()
             if line.strip()]
    assert lines == [
        "bummerl-kit practice mybot.py:MyBot --vs level-3 -n 50",
        "bummerl-kit practice mybot.py:MyBot --vs level-3 -n 2 --records games",
        "bummerl-kit replay games/practice-level-3-SEED.jsonl",
        "bummerl-kit analyse games/practice-level-3-SEED.jsonl -o analysed.jsonl"], lines
    out = []
    seed = "SEED"
    for line in lines:
        done = subprocess.run(["bash", "-e", "-c", line.replace("SEED", seed)], cwd=tmp_path,
                              env=kit.env(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, line + "\n" + done.stdout + done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        out.append(done.stdout)
        if "--records" in line:
            found = re.search(r"^practice: MyBot \(A\) vs house-level-3 \(B\), profile soft, "
                              r"seed (\d+)$", done.stdout, re.M)
            assert found, done.stdout
            seed = found.group(1)
    assert "50 (100 hands)" in out[0] and "no exceptions, no illegal actions in 100 hands" in out[0]
    assert "2 (4 matches)" in out[1], out[1]
    assert f"4 match records: games/practice-level-3-{seed}.jsonl" in out[1], out[1]
    verdicts = [json.loads(line) for line in out[2].splitlines()]
    assert [(v["match_id"], v["verified"]) for v in verdicts] == [(i, True) for i in range(1, 5)]
    analysed = [json.loads(line) for line in (tmp_path / "analysed.jsonl").read_text()
                .splitlines()]
    assert len(analysed) == 4 and all(a["analysis"]["decisions"] for a in analysed)
