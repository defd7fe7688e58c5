"""Tables of the ladder (owned by workers/): ratings per bot per profile, and ladder matches.

Ratings are openskill (Plackett-Luce) `mu` and `sigma`. A ladder match is rated once: the
update and `rated_at` are written in one transaction, guarded by `rated_at IS NULL`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String
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


class LadderMatch(Base):
    """A match the ladder scheduler created; rated once it is finished."""

    __tablename__ = "ladder_matches"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"),
                                          primary_key=True)
    profile: Mapped[str] = mapped_column(String(10), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
