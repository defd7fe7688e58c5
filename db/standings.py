"""The ladder's standings per rules profile, read from `ratings` (shared by the ladder on the
workers and the dashboard).

Ratings are openskill mu and sigma; the standings sort by the conservative ordinal
mu - 3·sigma. A bot is *provisional* until it has played `PROVISIONAL_MATCHES` rated matches.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from db.models import RUNNING, Bot, Match
from db.presence import is_connected
from db.ratings import LadderMatch, Rating

PROVISIONAL_MATCHES = 10
INITIAL_MU = 25.0  # openskill's default rating (mu); every bot starts there


@dataclass(frozen=True)
class Standing:
    bot_id: int
    name: str
    kind: str
    strategy: str | None
    mu: float
    sigma: float
    matches: int
    wins: int
    playing: int  # ladder matches running now
    connected: bool = False  # a remote bot with a Play stream open (`db.presence`)
    suspended_at: datetime | None = None  # an operator suspended it (no ladder matches)
    suspended_reason: str | None = None
    version: str | None = None  # the version the bot runs now (`bots.version`; house: strategy)

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.matches < PROVISIONAL_MATCHES


def standings(profile: str, sessions: sessionmaker[Session], heartbeat_s: float
              ) -> list[Standing]:
    """Every bot with a rating in `profile`, best (conservative ordinal) first; `heartbeat_s`
    is the service's presence heartbeat (for `connected`)."""
    with sessions() as s:
        playing = running_ladder_counts(s, profile)
        # plain columns, not ORM objects: a ladder of thousands of bots is read in a few ms
        rows = s.execute(select(*COLUMNS).join(Bot, Bot.id == Rating.bot_id)
                         .where(Rating.profile == profile)).all()
        moment = datetime.now(UTC)
        table = [standing(row, playing.get(row.id, 0), heartbeat_s, moment) for row in rows]
    return sorted(table, key=lambda st: (-st.ordinal, st.name))


# What a standing is made of: a bot's columns and its rating's.
COLUMNS = (Bot.id, Bot.name, Bot.kind, Bot.house_strategy, Bot.connected_since,
           Bot.last_seen_at, Bot.suspended_at, Bot.suspended_reason, Bot.version, Rating.mu,
           Rating.sigma, Rating.matches, Rating.wins)


def standing(row: Any, playing: int, heartbeat_s: float, moment: datetime) -> Standing:
    """The standing of a row of `COLUMNS`."""
    return Standing(row.id, row.name, row.kind, row.house_strategy, row.mu, row.sigma,
                    row.matches, row.wins, playing, is_connected(row, heartbeat_s, moment),
                    row.suspended_at, row.suspended_reason, row.version or row.house_strategy)


def rank_of(s: Session, profile: str, bot_id: int, heartbeat_s: float
            ) -> tuple[int, int, Standing] | None:
    """The bot's rank in `profile` (from 1, as in `standings`), how many bots are ranked and
    its standing; None if it has no rating there. Counts in the database instead of reading
    the whole table: the same order, best conservative ordinal first, then by name."""
    row = s.execute(select(*COLUMNS).join(Bot, Bot.id == Rating.bot_id)
                    .where(Rating.profile == profile, Rating.bot_id == bot_id)).first()
    if row is None:
        return None
    me = standing(row, 0, heartbeat_s, datetime.now(UTC))
    ordinal = Rating.mu - 3 * Rating.sigma
    # names compare as Python's sort does (by code point): PostgreSQL's "C" collation
    name = Bot.name.collate("C") if s.get_bind().dialect.name == "postgresql" else Bot.name
    better = s.scalar(select(func.count()).select_from(Rating).join(Bot, Bot.id == Rating.bot_id)
                      .where(Rating.profile == profile,
                             or_(ordinal > me.ordinal,
                                 and_(ordinal == me.ordinal, name < me.name)))) or 0
    of = s.scalar(select(func.count()).select_from(Rating).where(Rating.profile == profile)) or 0
    playing = s.scalar(select(func.count()).select_from(Match)
                       .join(LadderMatch, LadderMatch.match_id == Match.id)
                       .where(LadderMatch.profile == profile, Match.state == RUNNING,
                              or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))) or 0
    return better + 1, of, replace(me, playing=playing)


def running_ladder(s: Session, profile: str) -> list[Match]:
    """The ladder matches of `profile` running now."""
    return list(s.scalars(select(Match).join(LadderMatch, LadderMatch.match_id == Match.id)
                          .where(LadderMatch.profile == profile, Match.state == RUNNING)).unique())


def running_ladder_counts(s: Session, profile: str) -> dict[int, int]:
    """Running ladder matches of `profile` per bot id."""
    counts: dict[int, int] = {}
    for m in running_ladder(s, profile):
        for bot_id in (m.bot0_id, m.bot1_id):
            counts[bot_id] = counts.get(bot_id, 0) + 1
    return counts
