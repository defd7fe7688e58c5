"""Tables of people at the table (issue 30, owned by services/ops/people.py and workers/people.py).

- `people`: a person (a name, a password hash or none for a guest). Each person has a seat
  holder, a `bots` row of kind `person` (`PERSON`), so matches, hands, actions, records,
  replays, exports and spectators work unchanged. Its name is `@name` (`@name~guest-xxxx` for a
  guest). A suspension is the seat holder's (`bots.suspended_at`, `bummerl admin suspend`).
- `person_sessions`: a person's signed-in sessions (the web's cookie carries a random token; the
  row keeps only its SHA-256): the web honours a cookie only while its row is neither revoked
  (log out, log out everywhere, a password change) nor expired.
- `person_invites`: "play a friend" links; the first other person to accept gets the other seat.
- `people_ratings`: the people's rating pool (openskill, as the ladder's), one row per seat
  holder: people, and the bots that play them (their rating against people). The ladder's
  `ratings` never see a game with a person.
- `people_rated`: each rated game with a person counted once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import Boolean, DateTime, Float, ForeignKey, Integer, String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from db.base import Base, aware, utcnow
from db.models import ORIGIN_PEOPLE  # noqa: F401  (`matches.origin` of a game with a person)


class Person(Base):
    """A person who plays from the browser (through the web, a client of PeopleService)."""

    __tablename__ = "people"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(20))
    # The name in lower case: unique among signed-up people (guests: None, names may repeat).
    name_key: Mapped[str | None] = mapped_column(String(20), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))  # None for a guest
    guest: Mapped[bool] = mapped_column(Boolean, default=False)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


INVITE_TTL = timedelta(minutes=15)  # an invite nobody took by then is expired


class PersonSession(Base):
    """A signed-in session of a person, issued by the service (Login, RegisterPerson,
    StartGuest); the web checks it on every request."""

    __tablename__ = "person_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)  # never the token
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"),
                                           index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


def live_session(s: Session, token: str) -> int | None:
    """The person whose session `token` is, while it is live (neither revoked nor expired);
    else None. The web reads it on each request of a signed-in browser."""
    if not token:
        return None
    found: int | None = s.scalar(select(PersonSession.person_id).where(
        PersonSession.token_sha256 == hashlib.sha256(token.encode()).hexdigest(),
        PersonSession.revoked_at.is_(None), PersonSession.expires_at > utcnow()))
    return found


def live_session_hashes(s: Session, hashes: Iterable[str]) -> set[str]:
    """Which of the sessions named by their tokens' SHA-256 `hashes` are live now (the socket
    tier's check of its open streams, web.sockets)."""
    wanted = sorted(set(hashes))
    live: set[str] = set()
    for first in range(0, len(wanted), 500):
        live.update(s.scalars(select(PersonSession.token_sha256).where(
            PersonSession.token_sha256.in_(wanted[first:first + 500]),
            PersonSession.revoked_at.is_(None), PersonSession.expires_at > utcnow())))
    return live


class PersonInvite(Base):
    """A link that seats whoever opens it first against the person who made it, within
    `INVITE_TTL` of its making."""

    __tablename__ = "person_invites"

    code: Mapped[str] = mapped_column(String(40), primary_key=True)
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    profile: Mapped[str] = mapped_column(String(10))
    move_ms: Mapped[int | None] = mapped_column(Integer)
    bank_ms: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    accepted_by: Mapped[int | None] = mapped_column(ForeignKey("people.id", ondelete="SET NULL"))
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id", ondelete="SET NULL"))

    def expired(self, now: datetime | None = None) -> bool:
        """No one took it within INVITE_TTL of its making."""
        return self.accepted_by is None and aware(self.created_at) + INVITE_TTL <= (
            now or utcnow())


class PeopleRating(Base):
    """A seat holder's rating in the people's pool (a person's, or a bot's against people)."""

    __tablename__ = "people_ratings"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"),
                                        primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PeopleRated(Base):
    """A rated game with a person, counted in the people's pool (once)."""

    __tablename__ = "people_rated"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"),
                                          primary_key=True)
    rated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
