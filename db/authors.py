"""Bots' authors (issue 46): a signed-in person who proved once that they hold a bot's token
(HostingService.ClaimBot) is one of its authors, a `bot_authors` row. Its authors see and manage
the bot's hosted versions from the bot's page on the web; nobody else does.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from db.base import Base, utcnow


class BotAuthor(Base):
    """Person `person_id` wrote bot `bot_id` (they showed its token)."""

    __tablename__ = "bot_authors"

    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"),
                                           primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"),
                                        primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def is_author(session: Session, person_id: int, bot_id: int) -> bool:
    """Whether person `person_id` is an author of bot `bot_id`."""
    return session.scalar(select(BotAuthor.person_id).where(
        BotAuthor.person_id == person_id, BotAuthor.bot_id == bot_id)) is not None
