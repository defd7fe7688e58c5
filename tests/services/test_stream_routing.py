"""Which Play stream of a bot plays a match (issue 29; docs/version-tests.md, "Routing"), over
the real service (gRPC, SQLite and PostgreSQL), with raw streams: one bot runs 1.0 taking every
match and 2.0 for challenges only. A ladder match and a challenge are made for 1.0 and reach
the 1.0 stream alone (before, both streams were sent them, both answered, and the match was
recorded as 2.0); once 1.0 closes, the bot's version is 2.0 again and a challenge reaches the
challenges-only stream."""

from __future__ import annotations

import queue
import time

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2
from servicekit import CONFIG, OPERATOR, auth, fresh_database, running_service
from serviceprocs import PlayStream
from sqlalchemy import select

from db.models import ACCEPTS_ALL, ACCEPTS_CHALLENGES, Bot, Match
from db.versiontests import BotVersion
from workers.testing import wait_until


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, CONFIG) as svc:
        yield svc


def connect(service, token: str, version: str, challenges_only: bool = False) -> PlayStream:
    stream = PlayStream(service.channel, token)
    stream.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
        client="t", version=version, challenges_only=challenges_only)))
    stream.next("welcome")

    def seen() -> bool:
        with service.sessions() as s:
            row = s.scalar(select(BotVersion).where(BotVersion.version == version))
            return row is not None and row.open_streams > 0

    wait_until(seen, 10, every=0.05, what=f"version {version} recorded")
    return stream


def bot_row(service, bot_id: int) -> Bot:
    with service.sessions() as s:
        bot = s.get(Bot, bot_id)
        assert bot is not None
        s.expunge(bot)
        return bot


def turns(stream: PlayStream, wait_s: float) -> list[bot_pb2.Turn]:
    out = []
    end = time.monotonic() + wait_s
    while (left := end - time.monotonic()) > 0:
        try:
            item = stream.responses.get(timeout=left)
        except queue.Empty:
            break
        if not isinstance(item, grpc.RpcError) and item.WhichOneof("message") == "turn":
            out.append(item.turn)
    return out


def play(match_id: int, players: list[PlayStream], idle: list[PlayStream], actions: int) -> int:
    """Answer the turns of `match_id` that `players` get until `actions` were answered; no
    stream of `idle` may get one. How many turns the first player answered."""
    answered = first = 0
    while answered < actions:
        got = [[t for t in turns(p, 0.3) if t.match_id == match_id] for p in players]
        for stream in idle:
            assert not [t for t in turns(stream, 0.05) if t.match_id == match_id], \
                "a stream the match is not for got its turn"
        assert any(got), "no stream got the turn"
        for i, (stream, mine) in enumerate(zip(players, got, strict=True)):
            for turn in mine[-1:]:
                stream.answer(turn.match_id, turn.seq,
                              wire.observation_from_pb(turn.observation).legal_actions[0])
                answered += 1
                first += i == 0
    return first


def challenge(service, token: str, opponent: str) -> int:
    reply = bot_pb2_grpc.BotServiceStub(service.channel).Challenge(
        bot_pb2.ChallengeRequest(opponent=opponent, matches=1), metadata=auth(token))
    return reply.matches[0].match_id


def versions(service, match_id: int) -> tuple[str | None, str | None]:
    with service.sessions() as s:
        m = s.get(Match, match_id)
        assert m is not None
        return m.version0, m.version1


def test_a_challenges_only_stream_gets_no_ladder_match_and_one_version_plays_each(service):
    bot_id, token = service.register("mybot")
    foe_id, foe_token = service.register("foe")
    ladder = connect(service, token, "1.0")
    practice = connect(service, token, "2.0", challenges_only=True)
    foe = connect(service, foe_token, "9")
    streams = [ladder, practice, foe]
    try:
        row = bot_row(service, bot_id)
        assert (row.accepts, row.version) == (ACCEPTS_ALL, "1.0")  # not the newer 2.0

        m = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=[bot_id, foe_id], seed=5, ladder=True), metadata=auth(OPERATOR)).match
        assert versions(service, m.match_id)[0] == "1.0"
        assert play(m.match_id, [ladder, foe], [practice], 10) > 0

        match_id = challenge(service, foe_token, "mybot")  # made for 1.0: the 1.0 stream's
        assert versions(service, match_id)[1] == "1.0"
        assert play(match_id, [ladder, foe], [practice], 10) > 0

        ladder.close()
        wait_until(lambda: bot_row(service, bot_id).version == "2.0", 10, every=0.05,
                   what="the bot's version to be its remaining stream's")
        assert bot_row(service, bot_id).accepts == ACCEPTS_CHALLENGES
        match_id = challenge(service, foe_token, "mybot")
        assert versions(service, match_id)[1] == "2.0"
        assert play(match_id, [practice, foe], [], 10) > 0
    finally:
        for stream in streams:
            stream.close()
