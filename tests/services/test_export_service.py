"""ExportMatches on a real gRPC server: finished matches as records in the order they finished,
filters, resumable cursors, errors naming what is wrong, and a bot's own view: each turn
exactly as its Play stream was sent it."""

from __future__ import annotations

import json
import queue
import random
import time
from pathlib import Path

import grpc
import jsonschema
import pytest
from bummerl import wire
from bummerl.v1 import match_pb2
from google.protobuf.timestamp_pb2 import Timestamp
from servicekit import auth, running_service
from serviceprocs import PlayStream

import engine
from engine.matchrecord import verify_record
from services.core import hooks
from services.core import matches as plain

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "match-record.schema.json")
                    .read_text())


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        yield svc


def played(service, streams, match_id: int, seed: int, refuse_at: int = 4,
           pause_at: int = 6) -> dict[int, dict[int, match_pb2.Match]]:
    """Play match `match_id` to its end over raw Play streams (seat 0's, seat 1's), with random
    legal answers, one refused answer at seq `refuse_at` and a pause before answering seq
    `pause_at`; returns each seat's turns as they were sent, by seq."""
    rng = random.Random(seed)
    sent: dict[int, dict[int, object]] = {0: {}, 1: {}}
    pending: dict[int, tuple[int, engine.Observation]] = {}
    ended = 0
    deadline = time.monotonic() + 60
    while ended < 2:
        assert time.monotonic() < deadline, "the match did not end in time"
        for seat, stream in enumerate(streams):
            try:
                item = stream.responses.get(timeout=0.02)
            except queue.Empty:
                continue
            if isinstance(item, grpc.RpcError):
                raise item
            kind = item.WhichOneof("message")
            if kind == "match_ended" and item.match_ended.match.match_id == match_id:
                ended += 1
            elif kind == "turn" and item.turn.match_id == match_id:
                turn = item.turn
                sent[seat][turn.seq] = turn
                obs = wire.observation_from_pb(turn.observation)
                if turn.seq == refuse_at:
                    card = next(c for c in engine.ALL_CARDS if c not in obs.hand)
                    pending[seat] = (turn.seq, obs)
                    stream.answer(match_id, turn.seq, engine.Action.play(card))
                    continue
                if turn.seq == pause_at:
                    time.sleep(0.3)
                stream.answer(match_id, turn.seq, rng.choice(obs.legal_actions))
            elif kind == "rejected" and seat in pending:
                seq, obs = pending.pop(seat)
                stream.answer(match_id, seq, rng.choice(obs.legal_actions))
    return sent  # type: ignore[return-value]


def export(service, token: str | None = None, **request) -> list[match_pb2.ExportMatchesResponse]:
    return list(service.matches.ExportMatches(match_pb2.ExportMatchesRequest(**request),
                                              metadata=auth(token) if token else None,
                                              timeout=30))


def test_exported_records_replay_and_a_bot_sees_its_turns_as_sent(service):
    (a, a_token), (b, b_token) = service.register("mybot"), service.register("randy")
    streams = [PlayStream(service.channel, token) for token in (a_token, b_token)]
    try:
        for stream in streams:
            stream.next("welcome")
        ids = []
        for seed in (11, 12):
            m = plain.create_match([a, b], seed=seed, sessions=service.sessions,
                                   config=service.config)
            ids.append(m.id)
            sent = played(service, streams, m.id, seed)
    finally:
        for stream in streams:
            stream.close()
    answers = export(service)
    assert [json.loads(r.record_json)["match_id"] for r in answers] == ids
    assert {r.total for r in answers} == {2}
    for reply in answers:
        record = json.loads(reply.record_json)
        jsonschema.validate(record, SCHEMA)
        assert verify_record(record)["verified"], verify_record(record)["problems"]
        assert "view" not in record
    # the last match as each seat saw it: exactly the turns its stream was sent
    for seat, token in ((0, a_token), (1, b_token)):
        [mine] = export(service, token, seat_view=True, match_id=ids[-1])
        view = json.loads(mine.record_json)["view"]
        assert view["seat"] == seat and view["bot"] == ("mybot", "randy")[seat]
        turns = {t["seq"]: t for t in view["turns"]}
        assert set(turns) == set(sent[seat])
        for seq, turn in sent[seat].items():
            assert turns[seq]["observation"] == \
                wire.observation_from_pb(turn.observation).to_dict()
            assert turns[seq]["bank_left_ms"] == turn.bank_left_ms
            assert turns[seq]["answer"] is not None and turns[seq]["think_ms"] >= 0
        if 4 in turns:
            assert [r["rule"] for r in turns[4]["refused"]] == ["R3.1"]
        if 6 in turns:
            assert turns[6]["think_ms"] >= 300


def test_filters_cursors_and_limits(service):
    (a, _), (b, _), (c, _) = (service.register(n) for n in ("mybot", "randy", "other"))
    ids = []
    for seed, seats in ((1, [a, b]), (2, [b, c]), (3, [a, c]), (4, [c, a])):
        m = plain.create_match(seats, seed=seed, sessions=service.sessions,
                               config=service.config)
        game = engine.Match(seed, "soft")
        while not game.is_over:
            seat, action = game.to_act, game.legal_actions()[0]
            plain_submit(service, m.id, seat, action, len(game.history))
            game.apply(seat, action)
        ids.append(m.id)

    def got(**request) -> list[int]:
        return [json.loads(r.record_json)["match_id"] for r in export(service, **request)]

    assert got(bot="mybot") == [ids[0], ids[2], ids[3]]
    assert got(bot="mybot", opponent="other") == [ids[2], ids[3]]
    assert got(limit=2) == ids[:2]
    first = export(service, limit=1)[0]
    assert got(cursor=first.cursor) == ids[1:]
    assert export(service, cursor=first.cursor)[0].total == 3
    assert got(profile=2) == []  # PROFILE_SHARP
    assert got(origin="ladder") == []
    assert got(match_id=ids[1]) == [ids[1]]


def plain_submit(service, match_id: int, seat: int, action: engine.Action, seq: int) -> None:
    from services.core.actions import submit_action

    submit_action(match_id, seat, action, expected_seq=seq, sessions=service.sessions,
                  config=service.config)


@pytest.mark.parametrize(("request_fields", "code", "says"), [
    ({"bot": "nobody"}, grpc.StatusCode.NOT_FOUND, "no bot named 'nobody'"),
    ({"cursor": "yesterday"}, grpc.StatusCode.INVALID_ARGUMENT, "bad cursor"),
    ({"origin": "pub"}, grpc.StatusCode.INVALID_ARGUMENT, "unknown origin 'pub'"),
    ({"limit": -1}, grpc.StatusCode.INVALID_ARGUMENT, "limit"),
    ({"cursor": "1" * 41}, grpc.StatusCode.INVALID_ARGUMENT, "cursor is 41 characters"),
    ({"seat_view": True}, grpc.StatusCode.UNAUTHENTICATED, "token"),
    ({"bot": "a\x00b"}, grpc.StatusCode.NOT_FOUND, "bot names are 1-40 letters"),
    ({"opponent": "' OR 1=1 --"}, grpc.StatusCode.NOT_FOUND, "bot names are 1-40 letters"),
    ({"version": "1.0\x00"}, grpc.StatusCode.INVALID_ARGUMENT, "version must be printable"),
    ({"finished_since": Timestamp(seconds=10**18)}, grpc.StatusCode.INVALID_ARGUMENT,
     "finished_since is not a time"),
    ({"finished_until": Timestamp(seconds=1, nanos=-5)}, grpc.StatusCode.INVALID_ARGUMENT,
     "finished_until is not a time"),
])
def test_bad_requests_say_what_is_wrong(service, request_fields, code, says):
    with pytest.raises(grpc.RpcError) as info:
        export(service, **request_fields)
    assert info.value.code() == code and says in info.value.details()


def test_a_seat_view_is_only_the_token_holders(service):
    (_, a_token), _ = service.register("mybot"), service.register("randy")
    with pytest.raises(grpc.RpcError) as info:
        export(service, a_token, seat_view=True, bot="randy")
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "'mybot'" in info.value.details()
    assert export(service, a_token, seat_view=True) == []  # no finished match yet


def test_exports_per_peer_are_capped(database, monkeypatch):
    import threading
    from dataclasses import replace

    from servicekit import CONFIG

    from db import records

    monkeypatch.setattr(hooks, "on_turn", [])
    go, real = threading.Event(), records.pages

    def slow_pages(*args, **kwargs):  # the first export holds its stream until `go`
        go.wait(20)
        yield from real(*args, **kwargs)

    with running_service(database, replace(CONFIG, max_export_streams=1)) as service:
        (a, _), (b, _) = service.register("mybot"), service.register("randy")
        m = plain.create_match([a, b], seed=1, sessions=service.sessions, config=service.config)
        game = engine.Match(1, "soft")
        while not game.is_over:
            seat, action = game.to_act, game.legal_actions()[0]
            plain_submit(service, m.id, seat, action, len(game.history))
            game.apply(seat, action)
        monkeypatch.setattr(records, "pages", slow_pages)
        first = service.matches.ExportMatches(match_pb2.ExportMatchesRequest(), timeout=30)
        reader = threading.Thread(target=lambda: first_records.extend(first))
        first_records: list[object] = []
        reader.start()
        try:
            time.sleep(0.5)  # the first stream is open, waiting for its page
            with pytest.raises(grpc.RpcError) as info:
                export(service)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "ExportMatches" in info.value.details()
        finally:
            go.set()
            reader.join(20)
        assert len(first_records) == 1  # the open one went on
        monkeypatch.setattr(records, "pages", real)
        assert len(export(service)) == 1  # and once it was done, another could start
