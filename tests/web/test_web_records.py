"""The records the dashboard reads and their writers: refused actions (services.core.actions) and
rating history (workers.ladder.rate_match), each in the transaction of what it records."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update
from test_web_pages import real_match

from db.base import make_session_factory
from db.models import FINISHED, FORFEIT_ILLEGAL, Match, Refusal
from db.ratings import LadderMatch, Rating, RatingHistory
from db.schema import create_all
from services.core import hooks
from services.core.errors import FailedPrecondition


@pytest.fixture
def sessions(tmp_path, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # no house moves here: actions are submitted by hand
    monkeypatch.setattr(hooks, "on_match_end", [])
    factory = make_session_factory(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


def illegal_for(match_id: int, sessions) -> tuple[int, str]:
    """A seat to act and a play of a card it does not hold."""
    from services.core.matches import get_match, get_observation

    m = get_match(match_id, sessions=sessions)
    obs, _ = get_observation(match_id, m.to_act, sessions=sessions)
    held = {str(c) for c in obs.hand}
    card = next(f"{r}{s}" for s in "CDHS" for r in "AKQJT" if f"{r}{s}" not in held)
    return m.to_act, f"play {card}"


def test_each_refused_action_is_recorded_with_its_rule(sessions):
    from services.core.actions import submit_action

    match_id = real_match(sessions, seed=5)
    seat, bad = illegal_for(match_id, sessions)
    with sessions() as s:
        limit = s.get(Match, match_id).max_illegal
    for attempt in range(limit):
        with pytest.raises(FailedPrecondition):
            submit_action(match_id, seat, bad, expected_seq=0, sessions=sessions)
        with sessions() as s:
            rows = list(s.scalars(select(Refusal).where(Refusal.match_id == match_id)
                                  .order_by(Refusal.id)))
        assert len(rows) == attempt + 1  # committed with the count, one per refusal
    row = rows[0]
    assert (row.seq, row.seat, row.action) == (0, seat, bad)
    assert row.rule and row.rule.startswith("R") and row.rule in row.message
    with sessions() as s:
        m = s.get(Match, match_id)
        assert m.end_reason == FORFEIT_ILLEGAL and m.seq == 0  # the last one forfeited
    # a refusal changes nothing else: no action was logged
    assert all(r.seq == 0 for r in rows)


def test_refusal_text_is_bounded(sessions):
    from services.core.actions import _refused

    match_id = real_match(sessions, seed=6)
    with sessions.begin() as s:
        m = s.get(Match, match_id)
        import engine

        _refused(s, m, 0, engine.Action.from_text("close"),
                 engine.IllegalActionError("R7.1", "x" * 1000), m.created_at)
    with sessions() as s:
        row = s.scalars(select(Refusal)).one()
    assert len(row.message) == 300 and row.rule == "R7.1"


def test_rating_history_is_appended_for_both_bots_once(sessions):
    from workers import ladder

    match_id = real_match(sessions, seed=8)
    with sessions.begin() as s:
        s.add(LadderMatch(match_id=match_id, profile="soft"))
        s.execute(update(Match).where(Match.id == match_id)
                  .values(state=FINISHED, winner=1, to_act=None))
    assert ladder.rate_match(match_id, sessions) is True
    assert ladder.rate_match(match_id, sessions) is False
    with sessions() as s:
        history = list(s.scalars(select(RatingHistory).order_by(RatingHistory.bot_id)))
        ratings = {r.bot_id: r for r in s.scalars(select(Rating))}
        m = s.get(Match, match_id)
    assert [h.bot_id for h in history] == sorted((m.bot0_id, m.bot1_id))
    for h in history:  # the history row is the rating written in the same transaction
        assert (h.mu, h.sigma, h.profile, h.match_id) == (
            ratings[h.bot_id].mu, ratings[h.bot_id].sigma, "soft", match_id)
    winner = {h.bot_id: h.mu for h in history}
    assert winner[m.bot1_id] > winner[m.bot0_id]
