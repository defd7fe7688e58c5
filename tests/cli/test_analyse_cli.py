"""`bummerl analyse` on match-record files (offline, no server) and on a match id (read from a
real service's export, as `bummerl games export` reads it): each record written back with its
`analysis`, valid by the schema, still verified by `bummerl replay`; a progress bar and a line
per match on stderr; bad input named."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from recordkit import play_record
from servicekit import running_service

import engine
from cli.main import main
from db.analyses import store
from services.core import hooks
from services.core import matches as plain
from services.core.actions import submit_action

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "match-record.schema.json").read_text()))


def bummerl(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_analyse_a_file_offline_then_replay_it(tmp_path, capsys, monkeypatch):
    """As docs/analysis.md writes it: `bummerl analyse games.jsonl -o analysed.jsonl`, then
    `bummerl replay analysed.jsonl`; a second file with a smaller budget."""
    monkeypatch.chdir(tmp_path)
    records = [play_record(seed, match_id=i + 1)[0] for i, seed in enumerate((3, 4))]
    Path("games.jsonl").write_text(json.dumps(records[0]) + "\n")
    Path("more.jsonl").write_text(json.dumps(records[1]) + "\n")
    status, _, err = bummerl(capsys, "analyse", "games.jsonl", "-o", "analysed.jsonl")
    assert status == 0, err
    status, out, err2 = bummerl(capsys, "analyse", "more.jsonl", "--samples", "2")
    assert status == 0, err2
    Path("analysed.jsonl").write_text(Path("analysed.jsonl").read_text() + out)
    assert "match 1:" in err and "action/s" in err  # the progress bar
    assert "house-bully lost" in err
    analysed = [json.loads(line) for line in Path("analysed.jsonl").read_text().splitlines()]
    assert [r["match_id"] for r in analysed] == [1, 2]
    assert [r["analysis"]["budget"]["samples"] for r in analysed] == [32, 2]
    for before, after in zip(records, analysed, strict=True):
        SCHEMA.validate(after)
        assert {k: v for k, v in after.items() if k != "analysis"} == before
        decisions = after["analysis"]["decisions"]
        assert decisions and {d["method"] for d in decisions} == {"exact", "estimate"}
        moves = [a for h in before["hands"] for a in h["actions"]]
        assert {d["seq"] for d in decisions} <= {a["seq"] for a in moves}
    status, out, _ = bummerl(capsys, "replay", "analysed.jsonl")
    assert status == 0
    assert all(json.loads(line)["verified"] for line in out.splitlines())
    # the line per match says in words what it counts (issue 44: "6.53 estimated (12)"), and
    # an estimated decision is a mistake only when its loss is beyond its noise
    for record, line in zip(analysed[:1], [err.splitlines()[-1]], strict=True):
        seats = record["analysis"]["seats"]
        decisions = record["analysis"]["decisions"]
        for seat, tally in enumerate(seats):
            mine = [d for d in decisions if d["seat"] == seat and d["method"] == "estimate"]
            clear = [d for d in mine if d["loss"] > 1.96 * d["loss_se"]]
            assert tally["estimate"]["mistakes"] == len(clear)
            assert tally["estimate"]["decisions"] == len(mine)
            name = record["bots"][seat]["name"]
            assert (f"{name} lost {tally['exact']['loss']:.2f} game points to "
                    f"{tally['exact']['mistakes']} mistake") in line, line
            assert (f"and an estimated {tally['estimate']['loss']:.2f} in {len(mine)} "
                    f"estimated decision{'' if len(mine) == 1 else 's'}, {len(clear)} of them "
                    "beyond the estimate's noise") in line, line


def test_an_estimated_loss_within_its_noise_is_no_mistake():
    """`summarise`: an exact loss above 0 is a mistake; an estimated one only above 1.96
    standard errors (beyond its 95 % interval), or above 0 when nothing was sampled (se 0);
    every loss is still summed."""
    from analysis.match import summarise

    def decision(method: str, loss: float, se: float | None) -> dict:
        return {"seat": 0, "method": method, "loss": loss, "loss_se": se, "kind": "open play"}

    seats = summarise([decision("exact", 0.5, None), decision("exact", 0.0, None),
                       decision("estimate", 0.3, 0.2),  # within its noise
                       decision("estimate", 0.39, 0.2),  # 1.95 standard errors
                       decision("estimate", 0.41, 0.2),  # 2.05: a mistake
                       decision("estimate", 0.05, 0.0),  # every deal valued: no noise
                       decision("estimate", 0.0, 0.1)])
    exact, estimate = seats[0]["exact"], seats[0]["estimate"]
    assert (exact["decisions"], exact["mistakes"], exact["loss"]) == (2, 1, 0.5)
    assert (estimate["decisions"], estimate["mistakes"]) == (5, 2)
    assert estimate["loss"] == round(0.3 + 0.39 + 0.41 + 0.05, 4)
    assert estimate["by_kind"] == {"open play": estimate["loss"]}


def test_bad_input_is_named(tmp_path, capsys):
    status, _, err = bummerl(capsys, "analyse", str(tmp_path / "none.jsonl"))
    assert status == 1 and "cannot read" in err and "none.jsonl" in err
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"profile": "soft", "first_dealer": 0, "hands": []}))
    status, _, err = bummerl(capsys, "analyse", str(case))
    assert status == 1 and "not a match record" in err
    record, _ = play_record(5)
    record["hands"][0]["actions"][0]["card"] = "AH" if record["hands"][0]["actions"][0].get(
        "card") != "AH" else "TH"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(record) + "\n")
    status, _, err = bummerl(capsys, "analyse", str(bad), "--no-progress")
    assert status == 1 and "does not verify" in err
    status, _, err = bummerl(capsys, "analyse", str(bad), "--samples", "0")
    assert status == 1 and "--samples must be 1 or more" in err


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        yield svc


def test_analyse_a_match_id_from_the_service(service, capsys, tmp_path):
    """`bummerl analyse ID` reads the match through the service; its analysis, once kept,
    comes back with `bummerl games export` and the record still replays."""
    (a, _), (b, _) = service.register("mybot"), service.register("randy")
    m = plain.create_match([a, b], seed=7, sessions=service.sessions, config=service.config)
    game = engine.Match(7, "soft")
    while not game.is_over:
        seat, action = game.to_act, game.legal_actions()[-1]
        submit_action(m.id, seat, action, expected_seq=len(game.history),
                      sessions=service.sessions, config=service.config)
        game.apply(seat, action)
    server = ("--server", service.server.address)
    status, out, err = bummerl(capsys, "analyse", str(m.id), *server)
    assert status == 0, err
    (record,) = [json.loads(line) for line in out.splitlines()]
    SCHEMA.validate(record)
    assert record["match_id"] == m.id and record["analysis"]["decisions"]
    assert f"match {m.id}: mybot lost" in err
    with service.sessions.begin() as s:  # kept as the workers keep it, then exported
        store(s, m.id, record["analysis"])
    status, out, err = bummerl(capsys, "games", "export", "--match", str(m.id), *server)
    assert status == 0, err
    (exported,) = [json.loads(line) for line in out.splitlines()]
    assert exported == record
    path = tmp_path / "exported.jsonl"
    path.write_text(out)
    status, out, _ = bummerl(capsys, "replay", str(path))
    assert status == 0 and json.loads(out)["verified"]
    status, _, err = bummerl(capsys, "analyse", "99999", *server)
    assert status == 1 and "match 99999" in err
