"""A small history of real matches, for the tests of what reads a long history (the pages'
queries, pruning): each match is played by the engine from its seed with random legal actions
and written as the service writes it (the match row, its hands, its action log with think
times), on the database of a session factory (SQLite or PostgreSQL), at the times given."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from db.models import (
    ABORTED,
    ABORTED_BY_OPERATOR,
    FINISHED,
    FORFEIT_TIMEOUT,
    HOUSE,
    PLAYED,
    REMOTE,
    RUNNING,
    ActionLog,
    Bot,
    Hand,
    Match,
)
from db.ratings import LadderMatch, Rating, RatingHistory
from engine import Match as Game
from engine.actions import CLAIM
from engine.rules import WINNING_POINTS

NOW = datetime.now(UTC).replace(microsecond=0)


@contextmanager
def history_database(kind: str, request, tmp_path) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A fresh database of `kind` migrated to the head revision: its session factory."""
    from db.base import make_session_factory
    from db.migrate import upgrade

    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'history.sqlite3'}"
        upgrade(url)
        sessions = make_session_factory(url)
        yield sessions
        sessions.kw["bind"].dispose()
        return
    from workers.testing import fresh_postgres

    with fresh_postgres(request.getfixturevalue("postgres_url")) as url:
        upgrade(url)
        sessions = make_session_factory(url)
        yield sessions
        sessions.kw["bind"].dispose()


def add_bots(sessions, names: list[str], house: int = 1) -> list[int]:  # type: ignore[no-untyped-def]
    """Bots named `names`; the first `house` of them house bots."""
    with sessions.begin() as s:
        bots = [Bot(name=n, kind=HOUSE if i < house else REMOTE,
                    house_strategy="bully" if i < house else None,
                    token_hash=None if i < house else uuid.uuid4().hex * 2)
                for i, n in enumerate(names)]
        s.add_all(bots)
        s.flush()
        return [b.id for b in bots]


def add_match(sessions, bot0: int, bot1: int, *, created: datetime, seed: int,  # type: ignore[no-untyped-def]
              fate: str = FINISHED, profile: str = "soft", ladder: bool = False,
              rated_at: datetime | None = None, origin: str = "ladder", cut: int | None = None,
              think_ms: int = 400) -> int:
    """A match played from `seed`: to its end (`fate` FINISHED), or stopped after `cut`
    actions: running (RUNNING), forfeited on time by the seat to act (FORFEIT_TIMEOUT) or
    aborted (ABORTED). Its actions come `think_ms` apart from `created`."""
    rng = random.Random(seed)
    game = Game(seed, profile)
    steps: list[tuple[int, str]] = []
    while (seat := game.to_act) is not None and (cut is None or len(steps) < cut):
        legal = game.legal_actions()
        if legal[-1] is CLAIM and game.hand.points(seat) >= WINNING_POINTS:
            action = CLAIM
        else:
            action = rng.choice([a for a in legal if a is not CLAIM] or list(legal))
        game.apply(seat, action)
        steps.append((seat, str(action)))
    at = [created + timedelta(milliseconds=think_ms * (i + 1)) for i in range(len(steps))]
    over = game.is_over
    state = FINISHED if fate in (FINISHED, FORFEIT_TIMEOUT) else fate
    m = Match(bot0_id=bot0, bot1_id=bot1, profile=profile, seed=seed, state=state,
              seq=len(steps), to_act=None if state != RUNNING else game.to_act,
              hand_number=game.hand_number, counter0=game.counters[0],
              counter1=game.counters[1], move_ms=5000, bank_ms=30000, max_illegal=3,
              bank0_ms=30000, bank1_ms=30000, created_at=created, origin=origin,
              rated=origin == "ladder")
    if state == FINISHED:
        m.finished_at = at[-1] + timedelta(seconds=1)
        if over:
            m.winner, m.schneider, m.end_reason = game.winner, game.schneider, PLAYED
        else:
            m.forfeit_seat = game.to_act
            m.winner = 1 - (game.to_act or 0)
            m.end_reason = FORFEIT_TIMEOUT
    elif state == ABORTED:
        m.finished_at, m.end_reason, m.rated = at[-1] + timedelta(seconds=1), \
            ABORTED_BY_OPERATOR, False
    with sessions.begin() as s:
        s.add(m)
        s.flush()
        first = 0
        for number, hand in enumerate(game.hands):
            result = game.results[number] if number < len(game.results) else None
            last = first + len(hand.history) - 1
            row = Hand(match_id=m.id, number=number, dealer=hand.dealer, first_seq=first)
            if result is not None:
                row.last_seq, row.winner, row.game_points = last, result.winner, \
                    result.game_points
                row.reason, row.points0, row.points1 = result.reason.value, *result.points
                row.tricks0, row.tricks1 = result.tricks
                row.finished_at = at[last]
            s.add(row)
            first = last + 1
        s.add_all(ActionLog(match_id=m.id, seq=q, seat=seat, action=text,
                            request_id=uuid.uuid4().hex, created_at=at[q], think_ms=think_ms)
                  for q, (seat, text) in enumerate(steps))
        if ladder:
            s.add(LadderMatch(match_id=m.id, profile=profile, created_at=created,
                              rated_at=rated_at))
        return m.id


def rate(sessions, match_id: int) -> None:  # type: ignore[no-untyped-def]
    """Rate a finished ladder match as the ladder does (`workers.ladder.rate_match`)."""
    from workers.ladder import rate_match

    assert rate_match(match_id, sessions)


def table_rows(sessions, model, skip: tuple[str, ...] = ()) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    """Every row of `model`'s table (all columns but `skip`), in primary-key order."""
    table = model.__table__
    columns = [c for c in table.columns if c.name not in skip]
    with sessions() as s:
        return [tuple(r) for r in s.execute(
            table.select().with_only_columns(*columns).order_by(*table.primary_key.columns))]


__all__ = ["NOW", "Rating", "RatingHistory", "add_bots", "add_match", "history_database",
           "rate", "table_rows"]
