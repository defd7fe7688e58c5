"""`bummerl games export` against a real service, and `bummerl replay` on what it wrote: JSON
lines with a progress bar on stderr, the cursor to continue with, a dropped connection resumed
without a match twice, errors as one line. And 1,000 finished matches exported, each record
replayed to its results and valid by the JSON Schema."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema
import pytest
from faultproxy import Proxy
from servicekit import running_service

import engine
from cli.main import main
from db import records
from db.base import make_engine
from db.migrate import upgrade
from services.core import hooks
from services.core import matches as plain
from services.core.actions import submit_action

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "match-record.schema.json").read_text()))
REPLAY_LINE = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "replay-line.schema.json").read_text()))


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_export", ROOT / "bench" / "export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        yield svc


def finished(service, seats: list[int], seed: int) -> int:
    m = plain.create_match(seats, seed=seed, sessions=service.sessions, config=service.config)
    game = engine.Match(seed, "soft")
    while not game.is_over:
        seat, action = game.to_act, game.legal_actions()[-1]
        submit_action(m.id, seat, action, expected_seq=len(game.history),
                      sessions=service.sessions, config=service.config)
        game.apply(seat, action)
    return m.id


def bummerl(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_export_writes_records_and_says_how_to_continue(service, capsys, tmp_path):
    (a, _), (b, _) = service.register("mybot"), service.register("randy")
    ids = [finished(service, [a, b], seed) for seed in (1, 2, 3)]
    server = ("--server", service.server.address)
    status, out, err = bummerl(capsys, "games", "export", "--bot", "mybot", *server)
    assert status == 0, err
    lines = out.splitlines()
    assert [json.loads(line)["match_id"] for line in lines] == ids
    assert "3/3" in err  # the progress bar, on stderr
    cursor = err.rsplit("--cursor ", 1)[1].split()[0]
    assert "exported 3 matches" in err
    # nothing new since: nothing more; a match that finishes later: just that one
    status, out, err = bummerl(capsys, "games", "export", "--cursor", cursor, *server)
    assert status == 0 and out == "" and "no finished match" in err
    later = finished(service, [b, a], 4)
    path = tmp_path / "later.jsonl"
    status, _, err = bummerl(capsys, "games", "export", "--cursor", cursor, "-o", str(path),
                             "--no-progress", *server)
    assert status == 0 and f"to {path}" in err
    assert [json.loads(line)["match_id"] for line in path.read_text().splitlines()] == [later]
    # bummerl replay checks each record
    (tmp_path / "all.jsonl").write_text(out + path.read_text() + "\n".join(lines) + "\n")
    status, out, err = bummerl(capsys, "replay", str(tmp_path / "all.jsonl"))
    assert status == 0, out
    checked = [json.loads(line) for line in out.splitlines()]
    assert len(checked) == 4 and all(c["verified"] for c in checked)


def test_a_dropped_connection_is_resumed_with_each_match_once(service, tmp_path, monkeypatch,
                                                               capsys):
    (a, _), (b, _) = service.register("mybot"), service.register("randy")
    ids = [finished(service, [a, b], seed) for seed in range(6)]
    real = records.pages

    def slow_pages(*args, **kwargs):  # a page of one, then a pause: time to cut
        kwargs["page"] = 1
        for page in real(*args, **kwargs):
            yield page
            time.sleep(0.3)

    monkeypatch.setattr(records, "pages", slow_pages)
    out = tmp_path / "games.jsonl"
    with Proxy(("127.0.0.1", int(service.server.address.rsplit(":", 1)[1]))) as proxy:
        done: list[int] = []
        export = threading.Thread(target=lambda: done.append(main(
            ["games", "export", "-o", str(out), "--no-progress",
             "--server", f"127.0.0.1:{proxy.port}"])))
        export.start()
        until = time.monotonic() + 20
        while (not out.exists() or out.stat().st_size == 0) and time.monotonic() < until:
            time.sleep(0.02)
        proxy.cut()
        export.join(60)
    assert done == [0]
    got = [json.loads(line)["match_id"] for line in out.read_text().splitlines()]
    assert got == ids
    assert "resuming after the last one" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "says"), [
    (["--bot", "nobody"], "no bot named 'nobody'"),
    (["--since", "last tuesday"], "--since 'last tuesday' is not a date"),
    (["--view"], "--view needs your bot's token"),
    (["--limit", "-2"], "--limit must be 0"),
    (["--cursor", "soon"], "bad cursor"),
])
def test_errors_are_one_line(service, capsys, args, says):
    status, out, err = bummerl(capsys, "games", "export", *args,
                               "--server", service.server.address, "--token", "")
    assert status == 1 and out == ""
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_hundreds_of_exported_matches_each_replay_to_their_results(tmp_path):
    url = f"sqlite:///{tmp_path / 'many.sqlite3'}"
    upgrade(url)
    bind = make_engine(url)
    ids = bench_module().fill(bind, 200, seed=22)  # (bench/export.py measures 1000s)
    path = tmp_path / "games.jsonl"
    with path.open("w") as f:
        for record, _ in records.export(bind, records.ExportFilter()):
            SCHEMA.validate(record)
            f.write(json.dumps(record) + "\n")
    bind.dispose()
    done = subprocess.run([sys.executable, "-m", "cli.main", "replay", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    checked = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(c["match_id"] for c in checked) == ids
    assert all(c["verified"] and not c["problems"] for c in checked)
    # a record changed on the way is found, and the exit status says so
    lines = path.read_text().splitlines()
    bad = json.loads(lines[100])
    bad["result"]["winner"] = 1 - bad["result"]["winner"]
    lines[100] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-m", "cli.main", "replay", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    for line in done.stdout.splitlines():
        REPLAY_LINE.validate(json.loads(line))
    flagged = [json.loads(line) for line in done.stdout.splitlines() if '"verified": false' in line]
    assert [f["match_id"] for f in flagged] == [bad["match_id"]]


def test_replay_reads_pretty_records_json_lines_and_reports_bad_ones(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'few.sqlite3'}"
    upgrade(url)
    bind = make_engine(url)
    bench_module().fill(bind, 3, seed=1)
    exported = [r for r, _ in records.export(bind, records.ExportFilter())]
    bind.dispose()
    pretty = tmp_path / "one.json"
    pretty.write_text(json.dumps(exported[0], indent=2))
    many = tmp_path / "many.jsonl"
    many.write_text(json.dumps(exported[1]) + "\n{not json\n\n"
                    + json.dumps({**exported[2], "record_version": 9}) + "\n")
    status, out, _ = bummerl(capsys, "replay", str(pretty), str(many))
    assert status == 2  # an invalid document outweighs
    lines = [json.loads(line) for line in out.splitlines()]
    for line in lines:
        REPLAY_LINE.validate(line)
    assert lines[0]["verified"] and lines[1]["verified"]
    assert list(lines[2]) == ["invalid"] and "line 2: not JSON" in lines[2]["invalid"]
    assert "unknown record_version 9" in lines[3]["invalid"]


def test_a_mangled_record_is_invalid_or_unverified_never_a_crash(tmp_path):
    import random

    from engine.matchrecord import InvalidRecordError, seat_view, verify_record

    url = f"sqlite:///{tmp_path / 'fuzz.sqlite3'}"
    upgrade(url)
    bind = make_engine(url)
    bench_module().fill(bind, 4, seed=3)
    originals = [r for r, _ in records.export(bind, records.ExportFilter())]
    bind.dispose()
    rng = random.Random(7)
    junk = [None, "x", -1, 0, 1, 2.5, True, [], {}, [0], {"a": 1}, "R3.4", "play TH"]

    def places(node, path=()):  # every (container, key) in the record
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            yield node, key
            if isinstance(value, (dict, list)):
                yield from places(value, (*path, key))

    for _ in range(1000):
        record = json.loads(json.dumps(rng.choice(originals)))
        for _ in range(rng.randint(1, 3)):
            container, key = rng.choice(list(places(record)))
            container[key] = rng.choice(junk)
        try:
            out = verify_record(record)
            assert isinstance(out["verified"], bool)
            seat_view(record, rng.randint(0, 1))
        except InvalidRecordError:
            pass


def test_view_of_another_bot_names_the_flags(service, capsys):
    """`--view --bot walkrand` with walkbot's token: the service's words ("this token belongs
    to bot 'walkbot', not to bot 'walkrand'", under "refused the bot token") became one line
    that says which flag to change (issue 29)."""
    _, token = service.register("walkbot")
    service.register("walkrand")
    status, out, err = bummerl(capsys, "games", "export", "--view", "--bot", "walkrand",
                               "--token", token, "--server", service.server.address)
    assert status == 1 and out == ""
    assert err == ("error: --view shows your own bot's turns, and --bot walkrand is not the bot "
                   "of this token (--token or $BUMMERL_TOKEN): give your bot's name, or leave "
                   "--bot out\n"), err
