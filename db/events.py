"""Tables of the events (tournaments): the tournament and its settings, its entrants, and the
byes of a Swiss round. Its pairings are duplicate pairs (`db.pairs`, owner "tournament").

Written by the engine service (`services.ops.tournaments`: create, withdraw, cancel) and the
events scheduler (`workers.events`: rounds, byes, progress); read by the dashboard and the
TournamentService through `db.tournaments`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from db.base import Base, utcnow

# Tournament states.
T_RUNNING = "running"
T_FINISHED = "finished"
T_CANCELLED = "cancelled"


class Tournament(Base):
    """An event: a format over a field of bots, with the settings of its matches."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    format: Mapped[str] = mapped_column(String(20))  # events.formats.FORMATS
    state: Mapped[str] = mapped_column(String(10), default=T_RUNNING, index=True)
    rounds: Mapped[int] = mapped_column(Integer)  # rounds in all
    paired_rounds: Mapped[int] = mapped_column(Integer, default=0)  # rounds paired so far
    profile: Mapped[str] = mapped_column(String(10), default="soft")
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    concurrency: Mapped[int] = mapped_column(Integer)  # matches running at once, at most
    grace_s: Mapped[int] = mapped_column(Integer)  # an absent bot's wait before it forfeits
    seed: Mapped[int] = mapped_column(BigInteger)  # every pair's seed comes from it
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    cancelled_reason: Mapped[str | None] = mapped_column(Text)


class TournamentEntry(Base):
    """A bot in a tournament's field; `position` is its place in the list it was entered with
    (the gauntlet's first bot plays the rest; a Swiss round 1 pairs by it)."""

    __tablename__ = "tournament_entries"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    withdrawn_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    withdrawn_reason: Mapped[str | None] = mapped_column(Text)


class TournamentBye(Base):
    """The bot of an odd Swiss field that sits a round out (scored as a pair won, 2 match
    points, no game points)."""

    __tablename__ = "tournament_byes"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    round: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
