"""bummerl_kit.records (issue 45): exported match records, as `bummerl games export` writes
them from a real service (with and without `--view`), and a record with the analyst's
analysis, become one row per decision: the deciding seat's observation tensor and legal mask
as the environments encode them, the action taken, the analyst's value of each action."""

from __future__ import annotations

import json
import random

import pytest
from recordkit import play_record
from servicekit import running_service

import engine
from analysis.match import analyse_record
from bummerl_kit import records
from bummerl_kit.envs.encoding import (
    action_index,
    action_of,
    legal_mask,
    observation_tensor,
)
from cli.main import main
from engine.matchrecord import InvalidRecordError
from services.core import hooks
from services.core import matches as plain
from services.core.actions import submit_action


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        yield svc


def finished(service, seats: list[int], seed: int, profile: str) -> int:
    """A match played to its end through the service with random legal actions."""
    m = plain.create_match(seats, seed=seed, profile=profile, sessions=service.sessions,
                           config=service.config)
    game = engine.Match(seed, profile)
    rng = random.Random(seed)
    while not game.is_over:
        seat, action = game.to_act, rng.choice(game.legal_actions())
        submit_action(m.id, seat, action, expected_seq=len(game.history),
                      sessions=service.sessions, config=service.config)
        game.apply(seat, action)
    return m.id


def replayed(record: dict) -> list[tuple[int, engine.Observation, engine.Action]]:
    """(seq, the deciding seat's observation, the action) for each action, by the engine."""
    decks = [[engine.Card.from_text(t) for t in h["deck"]] for h in record["hands"]]
    match = engine.Match(profile=record["profile"], first_dealer=record["first_dealer"],
                         decks=decks)
    out = []
    for hand in record["hands"]:
        for entry in hand["actions"]:
            action = engine.Action.from_dict(entry)
            out.append((entry["seq"], match.observe(entry["seat"]), action))
            match.apply(entry["seat"], action)
    return out


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_exported_games_become_one_row_per_decision(service, tmp_path, capsys):
    (a, token), (b, _) = service.register("mybot"), service.register("randy")
    ids = [finished(service, [a, b], 1, "soft"), finished(service, [b, a], 2, "sharp")]
    server = ("--server", service.server.address)
    games, seen = tmp_path / "games.jsonl", tmp_path / "seen.jsonl"
    assert main(["games", "export", "--bot", "mybot", "-o", str(games), "--no-progress",
                 *server]) == 0
    assert main(["games", "export", "--bot", "mybot", "--view", "--token", token, "-o",
                 str(seen), "--no-progress", *server]) == 0
    capsys.readouterr()
    exported = list(records.read_records(games))
    assert [r["match_id"] for r in exported] == ids
    every = list(records.rows_of_files([games]))
    assert len(every) == sum(len(h["actions"]) for r in exported for h in r["hands"])
    expected = [(r["match_id"], seq, obs, action) for r in exported
                for seq, obs, action in replayed(r)]
    for row, (match_id, seq, obs, action) in zip(every, expected, strict=True):
        assert (row.match_id, row.seq, row.seat) == (match_id, seq, obs.seat)
        assert row.observation == observation_tensor(obs)
        assert row.mask == legal_mask(obs) and row.mask[row.action] == 1
        assert action_of(row.action) is action
        assert row.values is None and row.method is None
        assert row.bot == ("mybot" if (row.match_id == ids[0]) == (row.seat == 0) else "randy")
    for record in exported:
        mine = [row for row in every if row.match_id == record["match_id"]]
        winner = record["result"]["winner"]
        assert {row.match_won for row in mine if row.seat == winner} == {True}
        assert {row.match_won for row in mine if row.seat != winner} == {False}
        for number, hand in enumerate(record["hands"]):
            result = hand["result"]
            points = {row.hand_points * (1 if row.seat == result["winner"] else -1)
                      for row in mine if row.hand == number}
            assert points == {result["game_points"]}
    # --view: only mybot's turns, the observations the service sent, the same rows
    views = list(records.read_records(seen))
    assert all("view" in r for r in views)
    mine = list(records.rows_of_files([seen]))
    assert [row.seq for row in mine] == [t["seq"] for r in views for t in r["view"]["turns"]
                                         if t["answer"] is not None]
    assert mine == [row for row in every if row.bot == "mybot"]
    assert mine == list(records.rows_of_files([games], bot="mybot"))
    assert list(records.rows_of_files([games], seats=[1], bot="mybot")) == [
        row for row in mine if row.seat == 1]


def test_a_record_with_analysis_gives_each_decision_the_analysts_values(tmp_path):
    record, _ = play_record(3)
    record["analysis"] = analyse_record(record, samples=2)
    path = tmp_path / "analysed.jsonl"
    path.write_text(json.dumps(record) + "\n")
    rows = list(records.rows_of_files([path]))
    decisions = {d["seq"]: d for d in record["analysis"]["decisions"]}
    assert len(decisions) > 20
    valued = 0
    for row in rows:
        decision = decisions.get(row.seq)
        if decision is None:  # the analyst leaves out moves with one legal action
            assert sum(row.mask) == 1 and row.values is None
            continue
        valued += 1
        assert row.values is not None and row.method == decision["method"]
        expected = {action_index(a["action"]): a["value"] for a in decision["actions"]}
        assert {i: v for i, v in enumerate(row.values) if v is not None} == expected
        assert set(expected) == {i for i, m in enumerate(row.mask) if m}
        assert row.action == action_index(decision["taken"])
        assert row.best == action_index(decision["best"])
    assert valued == len(decisions)


def test_a_record_that_does_not_replay_is_named():
    record, _ = play_record(4)
    first = record["hands"][0]["actions"][0]
    legal = engine.Match(record["seed"]).legal_actions()
    wrong = next(c for c in engine.ALL_CARDS if engine.Action.play(c) not in legal)
    first.update({"do": "play", "card": str(wrong)})
    with pytest.raises(InvalidRecordError, match=r"seq 0: the engine refuses 'play"):
        list(records.rows(record))
    with pytest.raises(InvalidRecordError, match="not a match record"):
        list(records.rows({"record_version": 99}))
