"""Match records (db.records, engine.matchrecord): built from what the service wrote, checked
against the engine, validated by the JSON Schema; exports filtered and paged by cursors, with
running and aborted matches absent. On SQLite and PostgreSQL (the think times of the group
commit's batched statement)."""

from __future__ import annotations

import json
import random
import time
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest
from sqlalchemy import select, update

import engine
from db import records
from db.base import aware
from db.models import (
    FORFEIT_ILLEGAL,
    FORFEIT_TIMEOUT,
    ORIGIN_CHALLENGE,
    ORIGIN_LADDER,
    ActionLog,
    Match,
)
from db.settings import Settings
from engine.matchrecord import InvalidRecordError, seat_view, verify_record
from services.core import actions, hooks, matches
from services.core.errors import FailedPrecondition
from services.ops import bots

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "match-record.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
CONFIG = Settings(move_ms=3000, bank_ms=2000, max_illegal=3)


@pytest.fixture
def database(database, monkeypatch):  # the conftest's, with every table made (no service)
    monkeypatch.setattr(hooks, "on_turn", [])  # no house moves here: actions are submitted
    monkeypatch.setattr(hooks, "on_match_end", [])
    database.create_tables()
    return database


@pytest.fixture
def sessions(database):
    factory = database.sessions()
    yield factory
    factory.kw["bind"].dispose()


def two_bots(sessions, names=("mybot", "randy")) -> list[int]:
    return [bots.register_bot(n, sessions=sessions)[0].id for n in names]


def new_match(sessions, ids, seed: int, **kw) -> int:
    return matches.create_match(ids, seed=seed, sessions=sessions, config=CONFIG, **kw).id


def play(sessions, match_id: int, seed: int, moves: int | None = None,
         pause_at: dict[int, float] | None = None) -> None:
    """Random legal actions through the service (keeping the engine's game alongside), all
    of them or `moves`; before seq k, sleep `pause_at[k]` seconds."""
    m, _, log = matches.match_hands(match_id, sessions=sessions)
    game = engine.Match.replay(m.seed, m.profile,
                               [(a.seat, engine.Action.from_text(a.action)) for a in log])
    rng = random.Random(seed)
    done = 0
    while not game.is_over and (moves is None or done < moves):
        seat = game.to_act
        action = rng.choice(game.legal_actions())
        if pause_at and len(game.history) in pause_at:
            time.sleep(pause_at[len(game.history)])
        actions.submit_action(match_id, seat, action, expected_seq=len(game.history),
                              sessions=sessions, config=CONFIG)
        game.apply(seat, action)
        done += 1


def refuse(sessions, match_id: int) -> tuple[int, str, str]:
    """Submit a play of a card the seat to act does not hold: refused (seat, text, rule)."""
    m = matches.get_match(match_id, sessions=sessions)
    obs, m = matches.get_observation(match_id, m.to_act, sessions=sessions)
    card = next(c for c in engine.ALL_CARDS if c not in obs.hand)
    with pytest.raises(FailedPrecondition) as refused:
        actions.submit_action(match_id, m.to_act, f"play {card}", expected_seq=m.seq,
                              sessions=sessions, config=CONFIG)
    return m.to_act, f"play {card}", refused.value.rule


def only(sessions, **where) -> list[dict]:
    return [r for r, _ in records.export(sessions.kw["bind"], records.ExportFilter(**where))]


def test_a_played_out_match_records_every_action_with_its_think_time(sessions):
    ids = two_bots(sessions)
    match_id = new_match(sessions, ids, seed=101, origin=ORIGIN_CHALLENGE, rated=False)
    play(sessions, match_id, seed=1, pause_at={3: 0.25})
    [record] = only(sessions)
    VALIDATOR.validate(record)
    assert verify_record(record) == {"match_id": match_id, "verified": True, "problems": [],
                                     "match": {"counters": record["result"]["counters"],
                                               "winner": record["result"]["winner"]}}
    steps = [a for h in record["hands"] for a in h["actions"]]
    assert [a["seq"] for a in steps] == list(range(len(steps)))
    assert all(isinstance(a["think_ms"], int) and a["think_ms"] >= 0 for a in steps)
    assert 250 <= steps[3]["think_ms"] < 5000  # the pause before seq 3 is seq 3's think time
    assert record["origin"] == "challenge" and record["rated"] is False
    assert [b["name"] for b in record["bots"]] == ["mybot", "randy"]
    assert record["hands"][0]["deck"] == [str(c) for c in engine.deck_for(101, 0)]
    assert record["result"]["end_reason"] == "played"
    # the time bank the service charged is the one the think times give
    with sessions() as s:
        m = s.get(Match, match_id)
        banks = [m.bank0_ms, m.bank1_ms]
    for seat in (0, 1):
        turns = seat_view(record, seat)
        last = turns[-1]
        assert last["bank_left_ms"] - max(0, last["think_ms"] - CONFIG.move_ms) == banks[seat]


def test_refusals_and_a_forfeit_for_illegal_actions_replay_with_their_rules(sessions):
    ids = two_bots(sessions)
    match_id = new_match(sessions, ids, seed=102)
    play(sessions, match_id, seed=2, moves=7)
    seen = [refuse(sessions, match_id) for _ in range(CONFIG.max_illegal)]
    [record] = only(sessions)
    VALIDATOR.validate(record)
    assert record["result"]["end_reason"] == FORFEIT_ILLEGAL
    refusals = [r for h in record["hands"] for r in h["refusals"]]
    assert [(r["seat"], r["action"], r["rule"]) for r in refusals] == seen
    assert all(r["seq"] == 7 for r in refusals) and record["hands"][-1]["result"] is None
    assert verify_record(record)["verified"], verify_record(record)["problems"]
    # what the seat saw at its last turn: its refused answers and no answer
    seat = seen[0][0]
    last = seat_view(record, seat)[-1]
    assert last["seq"] == 7 and last["answer"] is None and len(last["refused"]) == 3
    # a record citing another rule for a refusal is reported
    record["hands"][-1]["refusals"][0]["rule"] = "R4.1"
    problems = verify_record(record)["problems"]
    assert any("cites R4.1" in p for p in problems), problems


def test_a_forfeit_on_time_replays_to_its_counters(sessions):
    ids = two_bots(sessions)
    match_id = new_match(sessions, ids, seed=103)
    play(sessions, match_id, seed=3, moves=25)
    late = aware(matches.get_match(match_id, sessions=sessions).deadline_at) + timedelta(seconds=1)
    assert actions.enforce_deadlines(now=late, sessions=sessions) == [match_id]
    [record] = only(sessions)
    VALIDATOR.validate(record)
    assert record["result"]["end_reason"] == FORFEIT_TIMEOUT
    checked = verify_record(record)
    assert checked["verified"], checked["problems"]
    forfeit = record["result"]["forfeit_seat"]
    assert seat_view(record, forfeit)[-1]["answer"] is None  # the turn it never answered
    record["result"]["forfeit_seat"] = 1 - forfeit
    record["result"]["winner"] = forfeit
    assert not verify_record(record)["verified"]


def test_tampered_records_are_reported_with_where(sessions):
    ids = two_bots(sessions)
    play(sessions, new_match(sessions, ids, seed=104), seed=4)
    [record] = only(sessions)

    def problems(change) -> list[str]:
        copy = json.loads(json.dumps(record))
        change(copy)
        out = verify_record(copy)
        assert not out["verified"]
        return out["problems"]

    def swap_counters(r):
        r["result"]["counters"] = r["result"]["counters"][::-1]

    def other_card(r):
        action = next(a for a in r["hands"][0]["actions"] if a["do"] == "play")
        held = {c for h in r["hands"][0]["holdings"] for c in h}
        action["card"] = next(c for c in r["hands"][0]["deck"] if c not in held)

    def other_deck(r):
        r["hands"][1]["deck"] = r["hands"][0]["deck"]

    def seq_gap(r):
        r["hands"][0]["actions"][2]["seq"] = 7

    assert any("counters" in p for p in problems(swap_counters))
    assert any("the engine refuses" in p for p in problems(other_card))
    assert any("seed 104" in p for p in problems(other_deck))
    assert any("expected 2" in p for p in problems(seq_gap))
    with pytest.raises(InvalidRecordError, match="record_version"):
        verify_record({**record, "record_version": 2})


def test_running_and_aborted_matches_are_never_exported(sessions):
    ids = two_bots(sessions)
    running = new_match(sessions, ids, seed=105)
    play(sessions, running, seed=5, moves=9)
    aborted = new_match(sessions, ids, seed=106)
    actions.abort_match(aborted, "test", sessions=sessions)
    done = new_match(sessions, ids, seed=107)
    play(sessions, done, seed=7)
    assert [r["match_id"] for r in only(sessions)] == [done]
    bind = sessions.kw["bind"]
    assert records.count(bind, records.ExportFilter()) == 1
    for match_id, says in ((running, "still running"), (aborted, "aborted"), (999, "no match")):
        with pytest.raises(records.NoSuchThing, match=says):
            records.finished_record(bind, match_id)
        assert only(sessions, match_id=match_id) == []


def test_filters_pick_their_matches(sessions):
    me, randy, other = two_bots(sessions, ("mybot", "randy", "other"))
    bind = sessions.kw["bind"]
    made = {}
    for key, seats, profile, origin in (("a", [me, randy], "soft", ORIGIN_LADDER),
                                        ("b", [randy, me], "sharp", ORIGIN_CHALLENGE),
                                        ("c", [other, randy], "soft", ORIGIN_LADDER),
                                        ("d", [me, other], "soft", None)):
        made[key] = new_match(sessions, seats, seed=200 + len(made), profile=profile,
                              origin=origin)
        play(sessions, made[key], seed=len(made))
    with sessions.begin() as s:
        s.execute(update(Match).where(Match.id == made["a"]).values(version0="1.0"))
        s.execute(update(Match).where(Match.id == made["b"]).values(version1="2.0",
                                                                     version0="1.0"))
    moments = {k: records.finished_record(bind, v)["finished_at"] for k, v in made.items()}

    def got(**where) -> set[str]:
        back = {v: k for k, v in made.items()}
        return {back[r["match_id"]] for r in only(sessions, **where)}

    assert got(bot_id=me) == {"a", "b", "d"}
    assert got(bot_id=me, opponent_id=randy) == {"a", "b"}
    assert got(opponent_id=other) == {"c", "d"}
    assert got(bot_id=me, version="1.0") == {"a"}  # in b, 1.0 is randy's seat
    assert got(version="1.0") == {"a", "b"}
    assert got(profile="sharp") == {"b"}
    assert got(origin="ladder") == {"a", "c"}
    since = records._parse_time(moments["b"])
    assert got(since=since) == {"b", "c", "d"}
    assert got(until=since) == {"a"}
    assert got(match_id=made["c"]) == {"c"}
    for bad in (records.ExportFilter(profile="hard"), records.ExportFilter(origin="pub"),
                records.ExportFilter(since=since, until=since)):
        with pytest.raises(records.BadExport):
            bad.check()
    with pytest.raises(records.NoSuchThing, match="nobody"):
        records.bot_id_named(bind, "nobody")


def test_cursors_resume_after_their_record_and_pick_up_later_matches(sessions):
    ids = two_bots(sessions)
    bind = sessions.kw["bind"]
    made = []
    for seed in range(7):
        made.append(new_match(sessions, ids, seed=300 + seed))
        play(sessions, made[-1], seed=seed)
    late = new_match(sessions, ids, seed=399)  # made first, finished last
    play(sessions, late, seed=9, moves=3)
    every = list(records.export(bind, records.ExportFilter(), page=3))
    assert [r["match_id"] for r, _ in every] == made
    for i, (_, cursor) in enumerate(every):
        text = cursor.text()
        assert records.Cursor.parse(text) == cursor
        rest = records.export(bind, records.ExportFilter(), records.Cursor.parse(text), page=2)
        assert [r["match_id"] for r, _ in rest] == made[i + 1:]
        assert records.count(bind, records.ExportFilter(), cursor) == len(made) - i - 1
    play(sessions, late, seed=9)  # finishes after the last cursor was handed out
    after = list(records.export(bind, records.ExportFilter(), every[-1][1]))
    assert [r["match_id"] for r, _ in after] == [late]
    assert [r["match_id"] for r, _ in records.export(bind, records.ExportFilter(), limit=2)] \
        == made[:2]
    for bad in ("", "x", "12", "1-2-3", "-1-2", "9" * 30 + "-1"):
        with pytest.raises(records.BadExport, match="cursor"):
            records.Cursor.parse(bad)


def test_an_export_reads_one_page_at_a_time(sessions, monkeypatch):
    ids = two_bots(sessions)
    for seed in range(5):
        play(sessions, new_match(sessions, ids, seed=400 + seed), seed=seed)
    sizes = []
    real = records._page

    def page(connection, where, after, size):
        out = real(connection, where, after, size)
        sizes.append(len(out))
        return out

    monkeypatch.setattr(records, "_page", page)
    exported = records.export(sessions.kw["bind"], records.ExportFilter(), page=2)
    first = next(exported)
    assert sizes == [2] and first[0]["match_id"]  # nothing read ahead of the reader
    assert len(list(exported)) == 4 and sizes == [2, 2, 1]


def test_think_times_are_kept_in_the_log(sessions):
    ids = two_bots(sessions)
    match_id = new_match(sessions, ids, seed=108)
    play(sessions, match_id, seed=8, moves=4, pause_at={1: 0.1})
    with sessions() as s:
        thinks = list(s.scalars(select(ActionLog.think_ms).where(
            ActionLog.match_id == match_id).order_by(ActionLog.seq)))
    assert len(thinks) == 4 and all(t is not None and t >= 0 for t in thinks)
    assert thinks[1] >= 100


def test_a_restart_gives_a_fresh_turn_clock_so_downtime_is_no_think_time(sessions):
    ids = two_bots(sessions)
    match_id = new_match(sessions, ids, seed=109)
    play(sessions, match_id, seed=9, moves=2)
    time.sleep(0.4)  # the service is "down" meanwhile
    actions.resume_all(sessions=sessions, config=CONFIG)  # what a starting server does
    play(sessions, match_id, seed=9, moves=1)
    with sessions() as s:
        third = s.scalar(select(ActionLog.think_ms).where(ActionLog.match_id == match_id,
                                                          ActionLog.seq == 2))
    assert third is not None and third < 400
