"""The database work per action stays small: a submit at the seq this process committed last
runs two statements (append the action, update the match guarded by its seq) plus its commit
(on PostgreSQL one statement that does both and commits itself), from the first action on in
the process that created the match; elsewhere (another replica, after a restart) the first one
also reads and locks the match; a Play stream's look runs one; a turn's observation comes from
the cached game without any. Regression guard of the bench. (Concurrent submits of different
matches share those statements and the commit: the group commit,
tests/services/test_service_groupcommit.py.)
And the match update refuses to overwrite a row that moved on since it was read."""

from __future__ import annotations

import pytest
from servicekit import CONFIG, statements_run

import engine
from services.core import actions, cache, matches, store
from services.core.errors import Aborted, NotFound
from services.ops import bots


@pytest.fixture
def database(database):  # the conftest's, with every table made (no service here)
    database.create_tables()
    return database


def counting(sessions):  # type: ignore[no-untyped-def]
    """The SQL statements run on the engine of `sessions` inside the block."""
    return statements_run(sessions.kw["bind"])


def per_action(sessions) -> int:  # type: ignore[no-untyped-def]
    """The statements of an action on the fast path (services.core.appends)."""
    return 1 if sessions.kw["bind"].dialect.name == "postgresql" else 2


def per_new_match(sessions) -> int:  # type: ignore[no-untyped-def]
    """The statements of a new match (services.core.matches)."""
    return 1 if sessions.kw["bind"].dialect.name == "postgresql" else 2


def test_statements_per_action(database):
    sessions = database.sessions()
    try:
        a, _ = bots.register_bot("a", sessions=sessions)
        b, _ = bots.register_bot("b", sessions=sessions)
        # a new match: its two bots read once per process, then an INSERT of it and one of
        # its first hand (on PostgreSQL one statement, in autocommit mode: one round trip)
        with counting(sessions) as created:
            matches.create_match([a.id, b.id], seed=4, sessions=sessions, config=CONFIG)
        created = [s for s in created if "inet_server_addr" not in s]  # (the site, once)
        assert len(created) == 2 + per_new_match(sessions), created
        with counting(sessions) as created:
            m = matches.create_match([a.id, b.id], seed=5, sessions=sessions, config=CONFIG)
        if sessions.kw["bind"].dialect.name == "postgresql":
            assert [s.split()[:3] for s in created] == [["WITH", "new_match", "AS"]], created
        else:
            assert [s.split()[:3] for s in created] == [["INSERT", "INTO", "matches"],
                                                        ["INSERT", "INTO", "hands"]], created
        game = engine.Match(5, "soft")
        for seq in range(3):  # plays in the middle of the first hand
            seat = game.to_act
            action = next(x for x in game.legal_actions() if x.kind == engine.ActionKind.PLAY)
            with counting(sessions) as submitted:
                result = actions.submit_action(m.id, seat, action, expected_seq=seq,
                                               request_id=f"r{seq}", sessions=sessions,
                                               config=CONFIG)
            game.apply(seat, action)
            assert result.seq == seq and result.match.seq == seq + 1 and not result.duplicate
            # (the process that created the match has its row: no read even the first time)
            assert len(submitted) == per_action(sessions), submitted
            with counting(sessions) as looked:
                states = [x for x in matches.match_states_of((a.id, b.id)[game.to_act],
                                                             sessions=sessions) if x.id == m.id]
                observation = matches.observe_match(states[0], game.to_act, sessions=sessions)
            assert len(looked) == 1, looked
            assert states[0].seq == seq + 1 and states[0].to_act == game.to_act
            assert observation == game.observe(game.to_act)
        # an idempotent retry: read the match (its bots are kept by the process since the
        # match was created), find the action, nothing more
        with counting(sessions) as retried:
            again = actions.submit_action(m.id, seat, action, expected_seq=2, request_id="r2",
                                          sessions=sessions, config=CONFIG)
        assert again.duplicate and again.seq == 2
        assert len(retried) == 2, retried
        cache.forget_rows()  # as a process that did not commit the match's last action
        seat = game.to_act
        action = next(x for x in game.legal_actions() if x.kind == engine.ActionKind.PLAY)
        with counting(sessions) as first:  # reads and locks the match (its bots are kept)
            actions.submit_action(m.id, seat, action, expected_seq=3, sessions=sessions,
                                  config=CONFIG)
        assert len(first) == 3, first
        assert "FOR UPDATE" in first[0] or first[0].startswith("SELECT"), first
    finally:
        sessions.kw["bind"].dispose()


def test_a_match_row_that_moved_on_is_not_overwritten(database):
    """As when another process (on SQLite, which does not lock rows) acted in between."""
    sessions = database.sessions()
    try:
        a, _ = bots.register_bot("a", sessions=sessions)
        b, _ = bots.register_bot("b", sessions=sessions)
        m = matches.create_match([a.id, b.id], seed=5, sessions=sessions, config=CONFIG)
        game = engine.Match(5, "soft")
        action = next(x for x in game.legal_actions() if x.kind == engine.ActionKind.PLAY)
        with sessions() as session:
            stale = store.locked(session, m.id)
            session.rollback()
            assert stale is not None and stale.seq == 0
            actions.submit_action(m.id, game.to_act, action, expected_seq=0,
                                  sessions=sessions, config=CONFIG)
            stale.bank0_ms = 1
            with pytest.raises(Aborted):
                store.save(session, stale, 0)
            session.rollback()
        after = matches.get_match(m.id, sessions=sessions)
        assert after.seq == 1 and after.bank0_ms == CONFIG.bank_ms
    finally:
        sessions.kw["bind"].dispose()


@pytest.mark.parametrize("ladder", [False, True])
def test_a_new_match_writes_its_row_its_first_hand_and_its_ladder_row(database, ladder):
    """What the one statement of a new match on PostgreSQL writes is what the three INSERTs
    write elsewhere (R2: the seed decides the first dealer); a failed one writes nothing."""
    from sqlalchemy import func, select

    from db.models import Hand, Match
    from db.ratings import LadderMatch

    sessions = database.sessions()
    try:
        a, _ = bots.register_bot("a", sessions=sessions)
        b, _ = bots.register_bot("b", sessions=sessions)
        m = matches.create_match([b.id, a.id], profile="sharp", seed=7, ladder=ladder,
                                 sessions=sessions, config=CONFIG)
        game = engine.Match(7, "sharp")
        with sessions() as session:
            row = session.get(Match, m.id)
            assert row is not None
            assert (row.bot0_id, row.bot1_id, row.profile, row.seed, row.seq, row.state) == (
                b.id, a.id, "sharp", 7, 0, "running")
            assert row.to_act == game.to_act and row.deadline_at is not None
            hands = session.scalars(select(Hand).where(Hand.match_id == m.id)).all()
            assert [(h.number, h.dealer, h.first_seq, h.winner) for h in hands] == [
                (0, game.hand.dealer, 0, None)]
            entry = session.get(LadderMatch, m.id)
            if ladder:
                assert entry is not None and entry.profile == "sharp"
                assert entry.created_at == row.created_at and entry.rated_at is None
            else:
                assert entry is None
        with pytest.raises(NotFound, match="no bot with id 999999"):
            matches.create_match([a.id, 999_999], ladder=ladder, sessions=sessions,
                                 config=CONFIG)
        # several matches are one transaction: the second one's failure undoes the first
        with pytest.raises(NotFound, match="no bot with id 999999"):
            matches.create_matches([[a.id, b.id], [a.id, 999_999]], ladder=ladder,
                                   sessions=sessions, config=CONFIG)
        with sessions() as session:
            assert session.scalar(select(func.count()).select_from(Match)) == 1
            assert session.scalar(select(func.count()).select_from(Hand)) == 1
            assert session.scalar(select(func.count()).select_from(LadderMatch)) == int(ladder)
    finally:
        sessions.kw["bind"].dispose()
