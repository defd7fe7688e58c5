"""`bummerl tournament export ID --format json` prints plain JSON (issue 29: it printed
protobuf's JSON mapping: ids as strings, `TOURNAMENT_FORMAT_SWISS`, zero fields left out),
valid against docs/tournament-export.schema.json. A real command against a real service, on
events played to their end by real bots, and one with a withdrawal and a cancel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import jsonschema
import pytest
from bummerl.v1 import tournament_pb2 as F
from bummerl.v1 import tournament_pb2_grpc
from housekit import HOUSE_CONFIG, HOUSE_TOKEN
from servicekit import OPERATOR, auth, fresh_database, running_service

from client import Runner
from examples.random_bot import RandomBot
from services.ops import bots
from workers import events
from workers.service import Service
from workers.testing import wait_until

ROOT = Path(__file__).resolve().parents[2]
BUMMERL = Path(sys.executable).parent / "bummerl"
COMMAND = [str(BUMMERL)] if BUMMERL.exists() else [sys.executable, "-m", "cli.main"]
SCHEMA = json.loads((ROOT / "docs" / "tournament-export.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


@pytest.fixture
def site(request, tmp_path):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database, HOUSE_CONFIG) as svc:
        client = Service(svc.server.address, HOUSE_TOKEN)
        yield svc, client
        client.channel.close()


def export_json(address: str, tournament_id: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([*COMMAND, "tournament", "export", str(tournament_id), "--format",
                           "json", "--server", address], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    VALIDATOR.validate(document)
    return document


def test_the_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_a_finished_round_robin(site):
    service, client = site
    ids, tokens = zip(*(service.register(f"plain{i}") for i in range(3)), strict=True)
    runners = [Runner(RandomBot(i), service.server.address, t) for i, t in enumerate(tokens)]
    for runner in runners:
        threading.Thread(target=runner.run, daemon=True).start()
    try:
        wait_until(lambda: all(r.stats.connections for r in runners), 30, what="bots connected")
        stub = tournament_pb2_grpc.TournamentServiceStub(service.channel)
        t = stub.CreateTournament(F.CreateTournamentRequest(
            format=F.TOURNAMENT_FORMAT_ROUND_ROBIN, bot_ids=list(ids), concurrency=2, seed=7),
            metadata=auth(OPERATOR)).tournament
        wait_until(lambda: events.step(t.tournament_id, service.sessions, client) ==
                   "finished", 120, every=0.1, what="the round-robin to finish")
    finally:
        for runner in runners:
            runner.stop()
    got = export_json(service.server.address, t.tournament_id)
    reply = stub.ExportTournament(F.ExportTournamentRequest(tournament_id=t.tournament_id))
    tournament = got["tournament"]
    assert tournament["tournament_id"] == t.tournament_id  # a number, not "1"
    assert (tournament["format"], tournament["state"], tournament["profile"]) == (
        "round-robin", "finished", "soft")
    assert tournament["seed"] == 7 and tournament["finished_at"].endswith("Z")
    assert [e["position"] for e in got["entries"]] == [0, 1, 2]  # the first one's 0 too
    assert [e["bot_id"] for e in got["entries"]] == list(ids)
    assert {p["state"] for p in got["pairs"]} == {"done"}
    assert all(p["forfeit"] is None for p in got["pairs"])
    assert [p["pair_id"] for p in got["pairs"]] == [p.pair_id for p in reply.pairs]
    assert [(p["points_a"], p["points_b"]) for p in got["pairs"]] == [
        (p.points_a, p.points_b) for p in reply.pairs]
    assert [r["lost"] for r in got["standings"]] == [r.lost for r in reply.standings]
    assert 0 in [r["lost"] for r in got["standings"]] + [r["won"] for r in got["standings"]]
    assert [c["match_ids"] for c in got["crosstable"]] == [list(c.match_ids)
                                                           for c in reply.crosstable]


def test_a_withdrawal_and_a_cancel(site):
    service, client = site
    names = [f"house{i}" for i in range(4)]
    for name in names:
        bots.register_bot(name, kind="house", house_strategy="random",
                          sessions=service.sessions)
    stub = tournament_pb2_grpc.TournamentServiceStub(service.channel)
    t = stub.CreateTournament(F.CreateTournamentRequest(
        format=F.TOURNAMENT_FORMAT_SWISS, bot_names=names, rounds=2, name="withdrawn",
        profile=2), metadata=auth(OPERATOR)).tournament
    events.step(t.tournament_id, service.sessions, client)
    got = stub.GetTournament(F.GetTournamentRequest(tournament_id=t.tournament_id))
    gone = got.pairs[0].bot_a_id
    stub.WithdrawBot(F.WithdrawBotRequest(tournament_id=t.tournament_id, bot_id=gone,
                                          reason="crashed"), metadata=auth(OPERATOR))
    stub.CancelTournament(F.CancelTournamentRequest(tournament_id=t.tournament_id,
                                                    reason="enough"), metadata=auth(OPERATOR))
    got_json = export_json(service.server.address, t.tournament_id)
    tournament = got_json["tournament"]
    assert (tournament["format"], tournament["state"], tournament["profile"]) == (
        "swiss", "cancelled", "sharp")
    assert tournament["cancelled_reason"] == "enough"
    entry = next(e for e in got_json["entries"] if e["bot_id"] == gone)
    assert entry["withdrawn"] is True and entry["withdrawn_reason"] == "crashed"
    forfeited = [p for p in got_json["pairs"] if gone in (p["bot_a_id"], p["bot_b_id"])]
    assert forfeited and all(p["state"] == "forfeited" for p in forfeited)
    assert forfeited[0]["forfeit"] == "bot-a"
