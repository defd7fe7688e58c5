"""A Play stream reports what this process committed from memory: the next turn from the cached
game, a hand's end from the game's results, a match's end from the final row and game kept by
the commit, all without a statement to the database, and each message equal to the one built
from the database (the path of a process that did not commit it). SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from servicekit import CONFIG
from sqlalchemy import event

import engine
from db.models import Bot
from services.core import actions, cache, matches
from services.live.play import PlaySession
from services.ops import bots


@pytest.fixture
def database(database):  # the conftest's, with every table made (no service here)
    database.create_tables()
    return database


@contextmanager
def counting(sessions) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    statements: list[str] = []

    def record(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    bind = sessions.kw["bind"]
    event.listen(bind, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(bind, "before_cursor_execute", record)


def play(sessions, match_id: int, game: engine.Match, until) -> None:  # type: ignore[no-untyped-def]
    """Submit actions (as the bots would) until `until(game)`."""
    while not until(game):
        seat = game.to_act
        action = game.legal_actions()[0]
        actions.submit_action(match_id, seat, action, expected_seq=len(game.history),
                              sessions=sessions, config=CONFIG)
        game.apply(seat, action)


def reports(sessions, bot: Bot, match_id: int, known: int | None, quick: bool):  # type: ignore[no-untyped-def]
    """What the bot's Play stream sends for the match's current state, having last seen hand
    `known`: from memory (`quick_step`) or as a process without it would (`step`)."""
    async def run():  # type: ignore[no-untyped-def]
        session = PlaySession(bot, sessions, CONFIG, run=None)  # type: ignore[arg-type]
        try:
            state = next(m for m in matches.match_states_of(bot.id, [match_id],
                                                            sessions=sessions)
                         if m.id == match_id)
            if known is not None:
                session.known[match_id] = known
                session.seats[match_id] = state.seat_of(bot.id)
            if quick:
                with counting(sessions) as statements:
                    out = session.quick_step([state])
                return out, statements
            return session.step([state]), []
        finally:
            session.close()

    return asyncio.run(run())


def test_hand_and_match_ends_come_from_memory_and_equal_the_databases(database):
    sessions = database.sessions()
    try:
        a, _ = bots.register_bot("a", sessions=sessions)
        b, _ = bots.register_bot("b", sessions=sessions)
        m = matches.create_match([a.id, b.id], seed=11, sessions=sessions, config=CONFIG)
        game = engine.Match(11, m.profile)
        key = cache.bind_key(sessions.kw["bind"], m.id)

        # a new match: the first turn of the bot to act, from the game kept at its creation
        first = (a, b)[game.to_act]
        fast, statements = reports(sessions, first, m.id, None, quick=True)
        assert statements == []
        assert fast is not None and [r.WhichOneof("message") for r in fast] == ["turn"]
        assert fast[0].turn.seq == 0 and fast[0].turn.seat == game.to_act
        slow, _ = reports(sessions, first, m.id, None, quick=False)
        assert slow == fast

        # a hand ends mid-match: HandEnded (and the next turn, if the bot is to act)
        play(sessions, m.id, game, lambda g: len(g.results) == 1)
        fast, statements = reports(sessions, a, m.id, 0, quick=True)
        assert statements == []
        assert fast is not None and fast[0].WhichOneof("message") == "hand_ended"
        assert fast[0].hand_ended.counters == list(game.counters)
        cache.drop(key)  # as a process without the game
        slow, _ = reports(sessions, a, m.id, 0, quick=False)
        assert [r.hand_ended for r in fast if r.HasField("hand_ended")] == \
            [r.hand_ended for r in slow if r.HasField("hand_ended")]

        # the match ends: every hand since the last seen one, then MatchEnded
        play(sessions, m.id, game, lambda g: g.is_over)
        assert cache.finished(key, len(game.history)) is not None
        fast, statements = reports(sessions, b, m.id, 1, quick=True)
        assert statements == []
        assert fast is not None
        kinds = [r.WhichOneof("message") for r in fast]
        assert kinds == ["hand_ended"] * (len(game.results) - 1) + ["match_ended"]
        ended = fast[-1].match_ended
        assert ended.seat == 1 and ended.won == (game.winner == 1)
        assert ended.match.seq == len(game.history) and list(ended.match.counters) == \
            list(game.counters)
        with cache._guard:  # as a process that did not commit the match's end
            cache._finished.clear()
        slow, _ = reports(sessions, b, m.id, 1, quick=False)
        assert slow == fast
    finally:
        sessions.kw["bind"].dispose()
