"""Conduct on the ladder: K forfeits in a row suspend a bot (reason recorded, the ladder skips
it, reinstating starts the count again); quick illegal forfeits are not rated."""

from __future__ import annotations

from datetime import timedelta

import pytest
from servicekit import CONFIG, fresh_database
from sqlalchemy import update

import engine
from db.models import FORFEIT_ILLEGAL, Bot, Match
from db.ratings import LadderMatch, Rating
from services.core import actions, matches
from services.core.errors import FailedPrecondition
from services.ops import admin, bots
from workers import conduct, ladder


@pytest.fixture(params=["sqlite", "postgres"])
def sessions(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database:
        database.create_tables()
        factory = database.sessions()
        yield factory
        factory.kw["bind"].dispose()


def remote(sessions, name: str) -> int:
    return bots.register_bot(name, sessions=sessions)[0].id


def illegal_for(m: Match) -> engine.Action:
    game = engine.Match(m.seed, m.profile)
    holding = set(game.observe(game.to_act).hand)
    return engine.Action.play(next(c for c in engine.ALL_CARDS if c not in holding))


def ladder_match(sessions, culprit: int, other: int, *, lasted_s: float | None = None,
                 forfeit: bool = True) -> int:
    """A ladder match; the culprit forfeits it by an illegal action (or the other bot does).
    `lasted_s`: pretend it started that long before it ended."""
    m = matches.create_match([culprit, other], max_illegal=1, sessions=sessions, config=CONFIG)
    with sessions.begin() as s:
        s.add(LadderMatch(match_id=m.id, profile="soft"))
    loser = culprit if forfeit else other
    seat = m.seat_of(loser)
    if m.to_act != seat:  # let the other seat make one legal move first
        game = engine.Match(m.seed, m.profile)
        actions.submit_action(m.id, m.to_act, game.legal_actions()[0], expected_seq=0,
                              sessions=sessions, config=CONFIG)
        m = matches.get_match(m.id, sessions=sessions)
        game.apply(1 - seat, game.legal_actions()[0])
        holding = set(game.observe(seat).hand)
        bad = engine.Action.play(next(c for c in engine.ALL_CARDS if c not in holding))
    else:
        bad = illegal_for(m)
    with pytest.raises(FailedPrecondition):
        actions.submit_action(m.id, seat, bad, expected_seq=m.seq, sessions=sessions,
                              config=CONFIG)
    m = matches.get_match(m.id, sessions=sessions)
    assert m.end_reason == FORFEIT_ILLEGAL and m.forfeit_seat == seat
    if lasted_s is not None:
        with sessions.begin() as s:
            s.execute(update(Match).where(Match.id == m.id).values(
                created_at=m.finished_at - timedelta(seconds=lasted_s)))
    return m.id


def test_k_forfeits_in_a_row_suspend_a_bot(sessions):
    bad, good = remote(sessions, "flaky"), remote(sessions, "steady")
    ladder_match(sessions, bad, good)
    ladder_match(sessions, bad, good, forfeit=False)  # the streak is broken here
    ladder_match(sessions, bad, good)
    ladder_match(sessions, bad, good)
    assert conduct.suspend_forfeiters(sessions, k=3) == []
    last = ladder_match(sessions, bad, good)
    assert conduct.suspend_forfeiters(sessions, k=3) == [bad]
    with sessions() as s:
        flaky, steady = s.get(Bot, bad), s.get(Bot, good)
        assert flaky.suspended_at is not None and steady.suspended_at is None
        assert "forfeited 3 ladder matches in a row" in flaky.suspended_reason
        assert f"match {last} (forfeit_illegal)" in flaky.suspended_reason
        assert bad not in {b.id for b in ladder.eligible_bots(s, "soft", heartbeat_s=1e9)}
    assert conduct.suspend_forfeiters(sessions, k=3) == []  # once
    with pytest.raises(FailedPrecondition, match="suspended: automatic"):
        admin.check_may_play(bots.get_bot(bad, sessions=sessions))

    # reinstated: the old streak no longer counts; a new one does
    admin.reinstate_bot(bad, sessions=sessions, config=CONFIG)
    assert conduct.suspend_forfeiters(sessions, k=3) == []
    for _ in range(2):
        ladder_match(sessions, bad, good)
    assert conduct.suspend_forfeiters(sessions, k=3) == []
    ladder_match(sessions, bad, good)
    assert conduct.suspend_forfeiters(sessions, k=3) == [bad]


def test_the_threshold_comes_from_the_environment(sessions, monkeypatch):
    bad, good = remote(sessions, "flaky"), remote(sessions, "steady")
    ladder_match(sessions, bad, good)
    monkeypatch.setenv("BUMMERL_SUSPEND_AFTER_FORFEITS", "0")  # off
    assert conduct.suspend_forfeiters(sessions) == []
    monkeypatch.setenv("BUMMERL_SUSPEND_AFTER_FORFEITS", "1")

    def shift(days: float) -> None:
        with sessions.begin() as s:
            for m in s.query(Match):
                m.finished_at = m.finished_at + timedelta(days=days)

    shift(-2)  # a forfeit of long ago is not looked at again
    assert conduct.suspend_forfeiters(sessions) == []
    shift(2)
    assert conduct.suspend_forfeiters(sessions) == [bad]


def test_quick_illegal_forfeits_are_not_rated(sessions, monkeypatch):
    monkeypatch.setenv("BUMMERL_SUSPEND_AFTER_FORFEITS", "0")
    a, b = remote(sessions, "a"), remote(sessions, "b")
    quick = ladder_match(sessions, a, b, lasted_s=2)
    slow = ladder_match(sessions, a, b, lasted_s=60)
    assert ladder.rate_match(quick, sessions) is False
    assert ladder.rate_match(slow, sessions) is True
    with sessions() as s:
        assert s.get(Match, quick).rated is False and s.get(Match, slow).rated is True
        assert s.get(LadderMatch, quick).rated_at is not None  # settled, not retried
        rated = {r.bot_id: r.matches for r in s.query(Rating)}
    assert rated == {a: 1, b: 1}  # only the slow one counted
    assert ladder.rate_finished(sessions) == 0
    monkeypatch.setenv("BUMMERL_UNRATED_ILLEGAL_S", "0")  # the grace period is configurable
    with sessions() as s:
        assert conduct.counts_for_rating(s.get(Match, slow))
