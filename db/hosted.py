"""Hosted bot versions: an author's upload that bummerl builds, validates and runs in a sandbox
(issue 46, docs/hosted.md). One row per (bot, version), with its state:

    building → validating → live        (or failed, with the lines that say why)
    live → paused (kept crashing) · stopped (its author or the operator) → live (resumed)

The container's token is minted at every start (`mint_token`): only its SHA-256 is kept here,
and a Play stream or challenge with it is its bot's, with the version forced to the row's.
Plain functions over a session; the service writes uploads and stops, the workers the states a
build, a validation and the supervisor reach.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from sqlalchemy import (
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    select,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from db.base import Base, utcnow
from db.models import Bot

BUILDING = "building"
VALIDATING = "validating"
LIVE = "live"
FAILED = "failed"
PAUSED = "paused"
STOPPED = "stopped"
STATES = (BUILDING, VALIDATING, LIVE, FAILED, PAUSED, STOPPED)
# a version in these states counts against its bot's quota and the site's
ACTIVE = (BUILDING, VALIDATING, LIVE)
# a token of a version in these states opens a Play stream
PLAYING = (VALIDATING, LIVE)

FILES = "files"  # the author's files, built on the kit's base image
IMAGE = "image"  # the author's own OCI image (it runs the kit protocol)

LOG_BYTES = 64 * 1024  # the tail of a build's or a container's output kept here


class HostedVersion(Base):
    """One uploaded version of a bot that bummerl builds and runs."""

    __tablename__ = "hosted_versions"
    __table_args__ = (UniqueConstraint("bot_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    version: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(8))  # FILES or IMAGE
    entry: Mapped[str] = mapped_column(String(200), default="")  # `module.py:Class` (FILES)
    source: Mapped[bytes | None] = mapped_column(LargeBinary)  # the files' tar.gz (FILES)
    requirements: Mapped[str | None] = mapped_column(Text)  # pip's format, pinned
    image_ref: Mapped[str | None] = mapped_column(String(300))  # the author's image (IMAGE)
    # whether it plays people: None, or db.models.PEOPLE_CASUAL / PEOPLE_RATED (kit --people)
    people: Mapped[str | None] = mapped_column(String(10))
    image: Mapped[str | None] = mapped_column(String(300))  # the image that runs (once built)
    state: Mapped[str] = mapped_column(String(12), default=BUILDING)
    reason: Mapped[str | None] = mapped_column(Text)  # why failed, paused or stopped
    build_log: Mapped[str | None] = mapped_column(Text)  # its tail
    run_log: Mapped[str | None] = mapped_column(Text)  # the container's output, its tail
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    restarts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)  # the last crash's lines
    validation_match_id: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


def sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def tail(text: str, limit: int = LOG_BYTES) -> str:
    """The last `limit` bytes of `text` (whole characters), marked when cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return f"[… cut: the first {len(data) - limit} bytes]\n" \
        + data[-limit:].decode("utf-8", "ignore")


def version_of(session: Session, bot_id: int, version: str) -> HostedVersion | None:
    return session.scalar(select(HostedVersion).where(HostedVersion.bot_id == bot_id,
                                                      HostedVersion.version == version))


def versions_of(session: Session, bot_id: int | None = None) -> list[HostedVersion]:
    """A bot's hosted versions (every bot's for None), newest first."""
    query = select(HostedVersion).order_by(HostedVersion.id.desc())
    if bot_id is not None:
        query = query.where(HostedVersion.bot_id == bot_id)
    return list(session.scalars(query))


def set_state(row: HostedVersion, state: str, reason: str | None = None) -> None:
    """Move `row` to `state` (its reason, or none), stamped now."""
    assert state in STATES, state
    row.state = state
    row.reason = reason
    row.updated_at = utcnow()


def mint_token(row: HostedVersion) -> str:
    """A new token for the version's container (the old one stops working); only its hash is
    kept."""
    token = secrets.token_urlsafe(32)
    row.token_hash = sha256(token)
    return token


def live_versions(session: Session, validating: bool = False
                  ) -> list[tuple[HostedVersion, Bot]]:
    """What should run: the live versions of bots not suspended, oldest first; with
    `validating`, also those validating whose validation match was made (on Kubernetes the
    reconciler runs them, and their pod plays it)."""
    wanted = HostedVersion.state == LIVE
    if validating:
        wanted = wanted | ((HostedVersion.state == VALIDATING)
                           & HostedVersion.validation_match_id.is_not(None))
    rows = session.execute(
        select(HostedVersion, Bot).join(Bot, Bot.id == HostedVersion.bot_id)
        .where(wanted, Bot.suspended_at.is_(None))
        .order_by(HostedVersion.id))
    return [(version, bot) for version, bot in rows]
