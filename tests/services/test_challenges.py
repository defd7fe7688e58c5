"""Challenges against a real service (issue 11): a bot starts unrated matches against a
connected bot or a house bot, by RPC and with `bummerl bot challenge`; the ladder and challenges
never block each other; bad challenges get a clear status and change nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from servicekit import fresh_database, running_service
from sqlalchemy import func, select

from client import Runner
from client.challenge import challenge
from db.models import HOUSE, ORIGIN_CHALLENGE, Match
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot
from services.core import matches as plain
from services.ops import bots

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def connect(service, bot, token: str, matches: int | None = None):  # type: ignore[no-untyped-def]
    runner = Runner(bot, service.server.address, token, max_matches=matches)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while runner.stats.connections == 0:
        assert time.monotonic() < deadline, "the bot did not connect"
        time.sleep(0.01)
    return runner, thread


def match_rows(service) -> list[Match]:  # type: ignore[no-untyped-def]
    with service.sessions() as s:
        return list(s.scalars(select(Match).order_by(Match.id)))


def test_challenge_a_connected_bot_and_play_it_out(service):
    a_id, a_token = service.register("challenger")
    b_id, b_token = service.register("target")
    b, b_thread = connect(service, RandomBot(2), b_token, matches=2)
    a, a_thread = connect(service, SimpleBot(), a_token, matches=2)
    started = challenge(service.channel, a_token, "target", 2)
    assert [list(m.bot_ids) for m in started] == [[a_id, b_id], [b_id, a_id]]
    assert [list(m.bot_names) for m in started][0] == ["challenger", "target"]
    for thread in (a_thread, b_thread):
        thread.join(120)
    a.stop()
    b.stop()
    assert a.stats.matches_won + a.stats.matches_lost == 2
    rows = match_rows(service)
    assert [(m.origin, m.rated, m.state) for m in rows] == [(ORIGIN_CHALLENGE, False,
                                                              "finished")] * 2


def test_challenge_a_house_bot_from_the_command_line(service):
    bots.register_bot("house-rdeep", kind=HOUSE, house_strategy="rdeep",
                      sessions=service.sessions)
    me_id, me_token = service.register("author")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BUMMERL_SERVER": service.server.address}
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "bot", "challenge", "--vs", "house-rdeep",
         "--matches", "5", "--token", me_token], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("unrated challenge") == 5
    assert "seat 0: author, seat 1: house-rdeep" in done.stdout
    assert "seat 0: house-rdeep, seat 1: author" in done.stdout
    rows = match_rows(service)
    assert len(rows) == 5
    assert all(m.origin == ORIGIN_CHALLENGE and m.rated is False for m in rows)


def test_the_ladder_and_challenges_never_block_each_other(service):
    from db.ratings import LadderMatch
    from workers.ladder import eligible_bots

    a_id, a_token = service.register("laddered")
    b_id, b_token = service.register("other")
    b, _ = connect(service, RandomBot(2), b_token)
    a, _ = connect(service, RandomBot(3), a_token)
    heartbeat_s = service.config.heartbeat_s
    try:
        ladder = plain.create_match([a_id, b_id], sessions=service.sessions,
                                    config=service.config)
        with service.sessions.begin() as s:
            s.add(LadderMatch(match_id=ladder.id, profile="soft"))
        # a ladder match running does not block a challenge between the same bots ...
        assert len(challenge(service.channel, a_token, "other", 3)) == 3
        with service.sessions() as s:
            assert not {a_id, b_id} & {bot.id for bot in eligible_bots(s, "soft", heartbeat_s)}
            s.query(LadderMatch).delete()
            s.commit()
        # ... and the three running challenges do not make them busy for the ladder
        with service.sessions() as s:
            assert {a_id, b_id} <= {bot.id for bot in eligible_bots(s, "soft", heartbeat_s)}
    finally:
        a.stop()
        b.stop()


@pytest.mark.parametrize("opponent, matches, token, code, text", [
    ("ghost", 1, "a", grpc.StatusCode.NOT_FOUND, "no bot named 'ghost'"),
    ("offline", 1, "a", grpc.StatusCode.FAILED_PRECONDITION, "offline is not connected"),
    ("challenger", 1, "a", grpc.StatusCode.INVALID_ARGUMENT, "cannot challenge itself"),
    ("offline", 21, "a", grpc.StatusCode.INVALID_ARGUMENT, "between 1 and 20"),
    ("offline", 1, "wrong", grpc.StatusCode.UNAUTHENTICATED, "unknown token"),
])
def test_bad_challenges_are_refused_and_change_nothing(service, opponent, matches, token, code,
                                                       text):
    _, a_token = service.register("challenger")
    service.register("offline")
    with pytest.raises(grpc.RpcError) as info:
        challenge(service.channel, a_token if token == "a" else token, opponent, matches)
    assert info.value.code() == code and text in info.value.details()
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 0


def test_a_challenge_match_is_written_as_one_from_the_start(service):
    """A challenge's match is inserted unrated, with its origin, in the one transaction that
    creates it: no later UPDATE that a failure between the two could leave undone, and the
    service's own copy of the row (what it announces and ends from) says so too."""
    from servicekit import statements_run

    from services.core.cache import bind_key, live_row
    from services.core.connections import bound_engine
    from services.ops import challenges

    _, a_token = service.register("challenger")
    bots.register_bot("house-bully", kind=HOUSE, house_strategy="bully",
                      sessions=service.sessions)
    bind = bound_engine(service.sessions)
    with statements_run(bind) as statements:
        [m] = challenges.challenge(a_token, "house-bully", sessions=service.sessions,
                                   config=service.config)
    assert not [s for s in statements if s.lstrip().upper().startswith("UPDATE")]
    assert [(r.origin, r.rated) for r in match_rows(service)] == [(ORIGIN_CHALLENGE, False)]
    row = live_row(bind_key(bind, m.id), 0)
    assert row is not None and (row.origin, row.rated) == (ORIGIN_CHALLENGE, False)


def test_a_challenge_of_several_matches_starts_all_or_none(service, monkeypatch):
    """The matches of one challenge are created in one transaction: a failure while writing the
    third leaves none of them (the caller is told it failed, and nothing runs behind its back)."""
    from services.core import matches as module
    from services.ops import challenges

    _, a_token = service.register("challenger")
    bots.register_bot("house-bully", kind=HOUSE, house_strategy="bully",
                      sessions=service.sessions)
    real = module.bot_of
    calls = []

    def failing(connection, bot_id):  # type: ignore[no-untyped-def]
        calls.append(bot_id)
        if len(calls) == 5:  # the third match's first bot
            raise RuntimeError("the database went away")
        return real(connection, bot_id)

    monkeypatch.setattr(module, "bot_of", failing)
    with pytest.raises(RuntimeError, match="went away"):
        challenges.challenge(a_token, "house-bully", 3, sessions=service.sessions,
                             config=service.config)
    assert match_rows(service) == []
    monkeypatch.setattr(module, "bot_of", real)
    started = challenges.challenge(a_token, "house-bully", 3, sessions=service.sessions,
                                   config=service.config)
    assert [m.id for m in started] == [m.id for m in match_rows(service)]
