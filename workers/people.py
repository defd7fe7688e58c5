"""The people's rating pool (issue 30): rated games with people, rated with openskill's
Plackett-Luce model as the ladder is (`workers.ladder`), in a pool of their own
(`db.people.PeopleRating`): a person's rating, and each bot's rating against people. The
ladder's ratings (`db.ratings`) never see a game with a person, so a bot's ladder rating never
moves from one.

`rate_people_match(match_id)` (the `bummerl.rate` task runs it for every finished match) rates
a finished, rated game of origin 'people' once: the claim (`people_rated`) and both updates are
one transaction. A casual game, a guest's, or an aborted one is never rated.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from openskill.models import PlackettLuce
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from db.base import session_factory
from db.models import FINISHED, Match
from db.people import ORIGIN_PEOPLE, PeopleRated, PeopleRating

log = logging.getLogger(__name__)

MODEL = PlackettLuce()


def _row(s: Session, bot_id: int) -> PeopleRating:
    row = s.scalar(select(PeopleRating).where(PeopleRating.bot_id == bot_id).with_for_update())
    if row is None:
        fresh = MODEL.rating()
        row = PeopleRating(bot_id=bot_id, mu=fresh.mu, sigma=fresh.sigma, games=0, wins=0,
                           updated_at=datetime.now(UTC))
        s.add(row)
        s.flush()
    return row


def rate_people_match(match_id: int, sessions: sessionmaker[Session] | None = None) -> bool:
    """Rate finished rated people's game `match_id` in the people's pool, once; True if this
    call did."""
    sessions = sessions or session_factory()
    for _ in range(3):  # a rating row made concurrently by another game's rating: again
        try:
            return _rate(match_id, sessions)
        except IntegrityError:
            log.info("people: rating match %s raced with another; again", match_id)
    return False


def _rate(match_id: int, sessions: sessionmaker[Session]) -> bool:
    with sessions.begin() as s:
        match = s.get(Match, match_id)
        if match is None or match.origin != ORIGIN_PEOPLE or not match.rated or \
                match.state != FINISHED or match.winner is None:
            return False
        if s.get(PeopleRated, match_id) is not None:
            return False
        s.add(PeopleRated(match_id=match_id, rated_at=datetime.now(UTC)))
        s.flush()  # a concurrent rating of the same game fails here (its primary key)
        rows = [_row(s, match.bot_id(seat)) for seat in (0, 1)]
        teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in rows]
        ranks = [0.0, 1.0] if match.winner == 0 else [1.0, 0.0]
        for seat, (row, [rating]) in enumerate(zip(rows, MODEL.rate(teams, ranks=ranks),
                                                   strict=True)):
            row.mu, row.sigma = rating.mu, rating.sigma
            row.games += 1
            row.wins += int(match.winner == seat)
            row.updated_at = datetime.now(UTC)
        return True
