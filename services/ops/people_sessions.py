"""People's signed-in sessions (issue 44; db.people.PersonSession): the service issues one at
Login, RegisterPerson and StartGuest (a random token, of which the database keeps only the
SHA-256), the web carries it in its cookie and honours the cookie only while the session's row
is live (`db.people.live_session`: neither revoked nor expired). Logout revokes one session,
LogoutEverywhere and ChangePassword every session of the person, so that no copy of an old
cookie acts any more.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import delete, or_, update
from sqlalchemy.orm import Session, sessionmaker
from werkzeug.security import check_password_hash, generate_password_hash

from db.base import utcnow
from db.people import Person, PersonSession
from db.settings import sha256
from services.core.connections import factory_of, writing
from services.core.errors import FailedPrecondition, InvalidArgument, NotFound, Unauthenticated
from services.ops.people import MAX_PASSWORD, MIN_PASSWORD

SESSION_DAYS = 31  # a session's lifetime (the web's cookie lasts as long)


def issue(s: Session, person_id: int) -> str:
    """A new session of `person_id` in `s`'s transaction: its token (kept only hashed). The
    person's revoked and expired sessions go (a missing row is refused as a revoked one)."""
    s.execute(delete(PersonSession).where(
        PersonSession.person_id == person_id,
        or_(PersonSession.revoked_at.is_not(None), PersonSession.expires_at <= utcnow())))
    token = secrets.token_urlsafe(32)
    s.add(PersonSession(token_sha256=sha256(token), person_id=person_id,
                        expires_at=utcnow() + timedelta(days=SESSION_DAYS)))
    return token


def open_session(person_id: int, *, sessions: sessionmaker[Session] | None = None) -> str:
    """A new session of `person_id`: its token."""
    with factory_of(sessions)() as s, writing(s), s.begin():
        return issue(s, person_id)


def _revoke_all(s: Session, person_id: int) -> int:
    return s.execute(update(PersonSession).where(
        PersonSession.person_id == person_id, PersonSession.revoked_at.is_(None),
        PersonSession.expires_at > utcnow()).values(revoked_at=utcnow())).rowcount or 0  # type: ignore[attr-defined]


def logout(token: str, *, sessions: sessionmaker[Session] | None = None) -> bool:
    """Revoke the session of `token`; False if it was unknown, expired or revoked already."""
    if not token:
        return False
    with factory_of(sessions)() as s, writing(s), s.begin():
        return bool(s.execute(update(PersonSession).where(
            PersonSession.token_sha256 == sha256(token), PersonSession.revoked_at.is_(None),
            PersonSession.expires_at > utcnow()).values(revoked_at=utcnow())).rowcount)  # type: ignore[attr-defined]


def logout_everywhere(person_id: int, *, sessions: sessionmaker[Session] | None = None) -> int:
    """Revoke every live session of `person_id`: how many."""
    with factory_of(sessions)() as s, writing(s), s.begin():
        if s.get(Person, person_id) is None:
            raise NotFound(f"no person with id {person_id}")
        return _revoke_all(s, person_id)


def change_password(person_id: int, old: str, new: str, *,
                    sessions: sessionmaker[Session] | None = None) -> tuple[str, int]:
    """Set a signed-up person's new password if `old` is theirs; every session of the person is
    revoked and a new one issued: (its token, how many were revoked)."""
    if not MIN_PASSWORD <= len(new or "") <= MAX_PASSWORD:
        raise InvalidArgument(f"the new password must be {MIN_PASSWORD}-{MAX_PASSWORD} "
                              "characters", field="new_password")
    with factory_of(sessions)() as s:
        person = s.get(Person, person_id)
        if person is None:
            raise NotFound(f"no person with id {person_id}")
        if person.password_hash is None:
            raise FailedPrecondition("a guest has no password: sign up to have one")
        if not check_password_hash(person.password_hash, old or ""):
            raise Unauthenticated("the password now is not that one", field="old_password")
        hashed = generate_password_hash(new)
    with factory_of(sessions)() as s, writing(s), s.begin():
        s.execute(update(Person).where(Person.id == person_id).values(password_hash=hashed))
        revoked = _revoke_all(s, person_id)
        return issue(s, person_id), revoked

