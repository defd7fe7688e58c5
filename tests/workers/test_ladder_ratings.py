"""Ladder ratings and pairings, in-process on SQLite (no worker)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from housekit import create_in_process
from sqlalchemy import select, update

from db.base import make_session_factory
from db.models import FINISHED, HOUSE, Bot, Match
from db.ratings import LadderMatch, Rating
from db.schema import create_all
from services.core import hooks
from services.ops import bots
from workers import ladder


@pytest.fixture
def sessions(tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no queue here: matches are finished by hand
    monkeypatch.setattr(hooks, "on_match_end", [])
    factory = make_session_factory(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    create_all(factory)
    create_in_process(monkeypatch, factory)
    return factory


def finish(sessions, match_id: int, winner: int) -> None:
    with sessions.begin() as s:
        s.execute(update(Match).where(Match.id == match_id)
                  .values(state=FINISHED, winner=winner, to_act=None))


def test_matches_kept_going_and_rated_once(sessions):
    for strategy in ("random", "bully", "rdeep"):
        bots.register_bot(strategy, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    started = ladder.start_matches("soft", 2, sessions, random.Random(1))
    assert len(started) == 2
    assert ladder.start_matches("soft", 2, sessions) == []  # already 2 running
    finish(sessions, started[0], winner=0)
    assert ladder.rate_match(started[0], sessions) is True
    assert ladder.rate_match(started[0], sessions) is False  # once only
    assert ladder.rate_match(started[1], sessions) is False  # still running
    with sessions() as s:
        m = s.get(Match, started[0])
        winner, loser = m.bot_id(0), m.bot_id(1)
        rows = {r.bot_id: r for r in s.scalars(select(Rating).where(Rating.profile == "soft"))}
    assert rows[winner].mu > 25 > rows[loser].mu
    assert rows[winner].matches == rows[loser].matches == 1 and rows[winner].wins == 1
    assert len(ladder.start_matches("soft", 2, sessions)) == 1  # topped up again
    table = ladder.standings("soft", sessions)
    assert table[0].bot_id == winner and all(st.provisional for st in table)


def test_profiles_have_their_own_ratings(sessions):
    for strategy in ("random", "bully"):
        bots.register_bot(strategy, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    [soft] = ladder.start_matches("soft", 1, sessions)
    [sharp] = ladder.start_matches("sharp", 1, sessions)
    finish(sessions, soft, 0)
    finish(sessions, sharp, 1)
    assert ladder.rate_finished(sessions) == 2
    assert {st.matches for st in ladder.standings("sharp", sessions)} == {1}
    with sessions() as s:
        assert s.get(Match, sharp).profile == "sharp"
        assert s.get(LadderMatch, sharp).profile == "sharp"


def test_remote_bots_join_when_connected_one_match_at_a_time(sessions):
    bots.register_bot("house", kind=HOUSE, house_strategy="random", sessions=sessions)
    remote, _ = bots.register_bot("remote", sessions=sessions)
    assert ladder.start_matches("soft", 3, sessions, random.Random(2)) == []  # not connected
    moment = datetime.now(UTC)
    with sessions.begin() as s:  # as the server records an open Play stream
        s.execute(update(Bot).where(Bot.id == remote.id)
                  .values(connected_since=moment, last_seen_at=moment))
    started = ladder.start_matches("soft", 3, sessions, random.Random(2))
    assert len(started) == 1  # the remote bot plays one at a time; no other pair


def test_a_match_that_cannot_be_rated_stops_neither_the_others_nor_the_ladder(sessions,
                                                                               monkeypatch,
                                                                               caplog):
    for strategy in ("random", "bully", "rdeep"):
        bots.register_bot(strategy, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    first, second = ladder.start_matches("soft", 2, sessions, random.Random(2))
    finish(sessions, first, 0)
    finish(sessions, second, 1)
    real = ladder.rate_match

    def broken(match_id: int, factory=None) -> bool:  # type: ignore[no-untyped-def]
        if match_id == first:
            raise RuntimeError("a poisoned match")
        return real(match_id, factory)

    monkeypatch.setattr(ladder, "rate_match", broken)
    started = ladder.tick(sessions)
    assert started == {"soft": started["soft"]} and len(started["soft"]) == 2  # topped up
    with sessions() as s:
        assert s.get(LadderMatch, second).rated_at is not None
        assert s.get(LadderMatch, first).rated_at is None  # left for the next tick
    assert f"rating match {first} failed" in caplog.text
    monkeypatch.setattr(ladder, "rate_match", real)
    assert ladder.rate_finished(sessions) == 1  # the next tick rates it


def test_an_aborted_ladder_match_is_settled_once_not_read_at_every_tick(sessions):
    """Its ladder row gets a rated_at (and no rating): the unrated rows a tick reads stay the
    running and the just finished ones, however many matches were ever aborted."""
    from db.models import ABORTED
    from db.ratings import RatingHistory

    for strategy in ("random", "bully", "rdeep"):
        bots.register_bot(strategy, kind=HOUSE, house_strategy=strategy, sessions=sessions)
    aborted, running = ladder.start_matches("soft", 2, sessions, random.Random(1))
    with sessions.begin() as s:
        s.execute(update(Match).where(Match.id == aborted).values(state=ABORTED))
    assert ladder.rate_finished(sessions) == 0
    with sessions() as s:
        rows = {r.match_id: r.rated_at for r in s.scalars(select(LadderMatch))}
        assert s.scalars(select(RatingHistory)).all() == []  # nothing rated
    assert rows[aborted] is not None and rows[running] is None  # the running one stays open
