"""The ladder's standings per rules profile, read from `ratings` (shared by the ladder on the
workers and the dashboard).

Ratings are openskill mu and sigma; the standings sort by the conservative ordinal
mu - 3·sigma. A bot is *provisional* until it has played `PROVISIONAL_MATCHES` rated matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
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
        rows = s.execute(select(Rating, Bot).join(Bot, Bot.id == Rating.bot_id)
                         .where(Rating.profile == profile)).all()
        moment = datetime.now(UTC)
        table = [Standing(bot.id, bot.name, bot.kind, bot.house_strategy, r.mu, r.sigma,
                          r.matches, r.wins, playing.get(bot.id, 0),
                          is_connected(bot, heartbeat_s, moment), bot.suspended_at,
                          bot.suspended_reason, bot.version or bot.house_strategy)
                 for r, bot in rows]
    return sorted(table, key=lambda st: (-st.ordinal, st.name))


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
