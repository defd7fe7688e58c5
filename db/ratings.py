"""Tables of the ladder (owned by workers/): ratings per bot per profile, and ladder matches.

Ratings are openskill (Plackett-Luce) `mu` and `sigma`. A ladder match is rated once: the
update and `rated_at` are written in one transaction, guarded by `rated_at IS NULL`. A rating
carries across the bot's versions; `version` says which it last saw.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from db.base import Base, utcnow


class Rating(Base):
    """A bot's rating under one rules profile."""

    __tablename__ = "ratings"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"),
                                        primary_key=True)
    profile: Mapped[str] = mapped_column(String(10), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The version of the bot (`matches.version0`/`version1`) in the last match rated here: a
    # match of another version widens sigma once (workers.ladder.widen_for_version).
    version: Mapped[str | None] = mapped_column(String(100))


class LadderMatch(Base):
    """A match the ladder scheduler created; rated once it is finished."""

    __tablename__ = "ladder_matches"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"),
                                          primary_key=True)
    profile: Mapped[str] = mapped_column(String(10), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow,
                                                 index=True)
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)


class RatingHistory(Base):
    """A bot's rating after each rated match (or other change), for charts over time."""

    __tablename__ = "rating_history"
    __table_args__ = (Index("ix_rating_history_bot", "bot_id", "profile", "at"),
                      # the standings' change over a day reads the day's rows (migration 0012)
                      Index("ix_rating_history_profile_at", "profile", "at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"))
    profile: Mapped[str] = mapped_column(String(10))
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id", ondelete="SET NULL"))
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
