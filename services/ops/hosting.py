"""Hosted bots: upload a version, list them, read their logs, stop and resume them (the plain
functions behind HostingService and `bummerl bot upload|versions|logs|stop|resume`).

Who may do what: a bot's token acts on its own bot's versions; the operator token on any bot's
(naming it); the web's token with a signed-in person's live session (`person_session`, the
`bummerl-session` metadata) on the bots the person is an author of (naming it; `claim` makes
a person an author, by the bot's token: db.authors). A hosted container's own token
(`db.hosted.mint_token`) plays, and nothing else here.
What an upload must be (INVALID_ARGUMENT naming it, nothing written): a version of 1-100
printable characters the bot has not uploaded before; either files (a tar.gz with the entry
`path/module.py:Class`, checked by `hosting.archive`) or an image reference, not both; pinned
requirements (`name==version` lines, no options or URLs). A bot has at most
`Settings.hosted_per_bot` versions building, validating or live, and the site at most what its
CPU and memory totals hold (RESOURCE_EXHAUSTED). A site that does not host bots refuses with
one line saying what to install (FAILED_PRECONDITION); a site whose hosted bots run on
Kubernetes (`BUMMERL_HOSTING=kubernetes`) takes images only, and refuses files with one line
saying why (`NO_CLUSTER_BUILD`: nothing there builds them). After the commit the workers are
told (`services.core.hooks.on_hosted_upload`), and they build it (an image: nothing to build).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from db import hosted
from db.authors import BotAuthor, is_author
from db.hosted import HostedVersion
from db.models import REMOTE, Bot, bot_named
from db.people import Person, live_session
from db.settings import Settings, settings
from hosting.archive import ArchiveError, check_archive, check_image, check_requirements
from services.core import hooks
from services.core.connections import factory_of, writing
from services.core.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    quote,
)
from services.ops import bots
from services.ops.people import require_web

NO_HOSTING = ("this site does not host bots: install podman and runc (Debian: apt-get install "
              "podman runc) and start `bummerl up` again, or set BUMMERL_HOSTING")
# BUMMERL_HOSTING=kubernetes: the workers' pods cannot run podman, and no builder runs there
NO_CLUSTER_BUILD = (
    "this site runs hosted bots on Kubernetes, where uploaded files cannot be built (a build "
    "needs podman, which its pods cannot run, and no in-cluster builder is set up): upload an "
    "image that runs the kit instead, pushed to a registry the cluster pulls from (bummerl bot "
    "upload --image REGISTRY/NAME:TAG)")
KUBERNETES = "kubernetes"  # Settings.hosting of a site whose hosted bots run on a cluster
VERSION = re.compile(r"[!-~]{1,100}")  # printable ASCII, no spaces
MAX_REASON = 300


@dataclass(frozen=True)
class Caller:
    """The operator (bot None until named), a bot by its token, or a person (through the web)
    acting on a bot they wrote."""

    bot: Bot | None
    operator: bool
    person_id: int | None = None


def _named(session: Session, bot_name: str) -> Bot:
    bot = session.scalar(select(Bot).where(bot_named(bot_name)))
    if bot is None:
        raise NotFound(f"no bot named {quote(bot_name)}")
    if bot.kind != REMOTE:
        raise InvalidArgument(f"{bot.name} is a {bot.kind} bot: only remote bots are hosted")
    return bot


def _person(session: Session, token: str | None, person_session: str,
            config: Settings) -> int:
    """The person whose live session `person_session` is, the call carrying the web's token;
    Unauthenticated or PermissionDenied otherwise."""
    require_web(token, config, "acting for a person")
    person = live_session(session, person_session)
    if person is None:
        raise Unauthenticated("the person's session is not live (logged out or expired): "
                              "log in again")
    return person


def _caller(session: Session, token: str | None, bot_name: str, config: Settings,
            sessions: sessionmaker[Session], person_session: str = "") -> Caller:
    if person_session:
        person = _person(session, token, person_session, config)
        if not bot_name:
            raise InvalidArgument("bot_name: a person names the bot")
        bot = _named(session, bot_name)
        if not is_author(session, person, bot.id):
            raise PermissionDenied(f"you are not an author of {bot.name}: show its token "
                                   "first (\"I wrote this bot\" on its page)")
        return Caller(bot, False, person)
    if bots.is_operator(token, config):
        if not bot_name:
            return Caller(None, True)
        return Caller(_named(session, bot_name), True)
    bot = bots.bot_for_token(token, sessions=sessions)
    if bot.hosted_version is not None:
        raise PermissionDenied("a hosted container's token plays; it manages no versions "
                               "(use the bot's own token)")
    if bot_name and bot_name.lower() != bot.name.lower():
        raise PermissionDenied(f"your token is {bot.name}'s, not {quote(bot_name)}'s")
    return Caller(bot, False)


def _bot(caller: Caller) -> Bot:
    if caller.bot is None:
        raise InvalidArgument("bot_name: the operator names the bot")
    return caller.bot


def _requirements(text: str) -> str | None:
    """The pinned requirements as stored (None for none); InvalidArgument naming the line that
    is not a pinned `name==version` (hosting.archive.check_requirements)."""
    try:
        lines = check_requirements(text)
    except ArchiveError as e:
        raise InvalidArgument(f"requirements: {e}") from None
    return "\n".join(lines) + "\n" if lines else None


def _quota(session: Session, bot: Bot, config: Settings) -> None:
    active = HostedVersion.state.in_(hosted.ACTIVE)
    mine = session.scalar(select(func.count()).select_from(HostedVersion)
                          .where(HostedVersion.bot_id == bot.id, active)) or 0
    if mine >= config.hosted_per_bot:
        raise ResourceExhausted(
            f"{bot.name} has {mine} hosted versions building, validating or live, the most "
            f"this site allows (BUMMERL_HOSTED_PER_BOT={config.hosted_per_bot}): stop one first")
    site = session.scalar(select(func.count()).select_from(HostedVersion).where(active)) or 0
    room = min(config.hosted_cpu_total / config.hosted_cpu,
               config.hosted_memory_total_mb / config.hosted_memory_mb)
    if site + 1 > room:
        raise ResourceExhausted(
            f"the site runs {site} hosted versions, all its CPU and memory quotas hold "
            f"({config.hosted_cpu_total} cores, {config.hosted_memory_total_mb} MiB): try later")


def upload(token: str | None, *, version: str, entry: str = "", archive: bytes = b"",
           requirements: str = "", image: str = "", bot_name: str = "",
           people: str | None = None, person_session: str = "", config: Settings | None = None,
           sessions: sessionmaker[Session] | None = None) -> tuple[HostedVersion, str]:
    """Store a new version (state building) and tell the workers; returns it with its bot's
    name."""
    config = config or settings()
    factory = factory_of(sessions)
    if not config.hosting:
        raise FailedPrecondition(NO_HOSTING)
    if config.hosting == KUBERNETES and not image:
        raise FailedPrecondition(NO_CLUSTER_BUILD)
    if not VERSION.fullmatch(version):
        raise InvalidArgument(f"version: {quote(version)} is not 1-100 printable characters "
                              "without spaces")
    if image and (archive or entry or requirements):
        raise InvalidArgument("image: give an image or files (archive, entry, requirements), "
                              "not both")
    if image:
        try:
            check_image(image)
        except ArchiveError as e:
            raise InvalidArgument(f"image: {e}") from None
        kind, wanted = hosted.IMAGE, None
    else:
        if not archive:
            raise InvalidArgument("archive: no files (or give an image)")
        try:
            check_archive(archive, entry)
        except ArchiveError as e:
            raise InvalidArgument(f"archive: {e}") from None
        kind, wanted = hosted.FILES, _requirements(requirements)
    with factory() as session:
        caller = _caller(session, token, bot_name, config, factory, person_session)
        bot = _bot(caller)
        if hosted.version_of(session, bot.id, version) is not None:
            raise AlreadyExists(f"{bot.name} already uploaded version {quote(version)}: "
                                "upload another version")
        _quota(session, bot, config)
        row = HostedVersion(bot_id=bot.id, version=version, kind=kind, entry=entry if not image
                            else "", source=archive or None, requirements=wanted,
                            image_ref=image or None, people=people, state=hosted.BUILDING,
                            restarts=0)
        session.add(row)
        try:
            session.commit()
        except IntegrityError:  # the same version, uploaded at the same moment
            raise AlreadyExists(f"{bot.name} already uploaded version {quote(version)}") \
                from None
        session.refresh(row)
        session.expunge(row)
        name = bot.name
    hooks.fire(hooks.on_hosted_upload, row.id)
    return row, name


def list_versions(token: str | None, bot_name: str = "", *, person_session: str = "",
                  config: Settings | None = None,
                  sessions: sessionmaker[Session] | None = None
                  ) -> list[tuple[HostedVersion, str]]:
    """Hosted versions, newest first, with their bots' names."""
    config = config or settings()
    factory = factory_of(sessions)
    with factory() as session:
        caller = _caller(session, token, bot_name, config, factory, person_session)
        rows = session.execute(
            select(HostedVersion, Bot.name).join(Bot, Bot.id == HostedVersion.bot_id)
            .where(*([HostedVersion.bot_id == caller.bot.id] if caller.bot else []))
            .order_by(HostedVersion.id.desc()).limit(500)).all()
        for row, _ in rows:
            session.expunge(row)
    return list(rows)


def _one(session: Session, caller: Caller, version: str) -> HostedVersion:
    bot = _bot(caller)
    row = hosted.version_of(session, bot.id, version)
    if row is None:
        raise NotFound(f"{bot.name} has no hosted version {quote(version)}")
    return row


def get(token: str | None, version: str, bot_name: str = "", *, person_session: str = "",
        config: Settings | None = None,
        sessions: sessionmaker[Session] | None = None) -> tuple[HostedVersion, str]:
    """One version, logs and all, with its bot's name."""
    config = config or settings()
    factory = factory_of(sessions)
    with factory() as session:
        caller = _caller(session, token, bot_name, config, factory, person_session)
        row = _one(session, caller, version)
        session.expunge(row)
        return row, _bot(caller).name


def stop(token: str | None, version: str, bot_name: str = "", reason: str = "", *,
         person_session: str = "", config: Settings | None = None,
         sessions: sessionmaker[Session] | None = None) -> tuple[HostedVersion, str]:
    """Stop a version: not run again; its container's token stops working at once."""
    config = config or settings()
    factory = factory_of(sessions)
    with factory() as session:
        caller = _caller(session, token, bot_name, config, factory, person_session)
        row = _one(session, caller, version)
        who = "the operator" if caller.operator else "its author"
        why = f"stopped by {who}" + (f": {reason[:MAX_REASON]}" if reason else "")
        if row.state in (hosted.BUILDING, hosted.VALIDATING, hosted.LIVE, hosted.PAUSED):
            hosted.set_state(row, hosted.STOPPED, why)
            row.token_hash = None
            session.commit()
        session.refresh(row)
        session.expunge(row)
        name = _bot(caller).name
    hooks.fire(hooks.on_hosted_changed, row.id)
    return row, name


def resume(token: str | None, version: str, bot_name: str = "", *,
           person_session: str = "", config: Settings | None = None,
           sessions: sessionmaker[Session] | None = None) -> tuple[HostedVersion, str]:
    """Run a stopped or paused version again (one that passed its validation)."""
    config = config or settings()
    factory = factory_of(sessions)
    with factory() as session:
        caller = _caller(session, token, bot_name, config, factory, person_session)
        row = _one(session, caller, version)
        if row.state == hosted.LIVE:
            pass
        elif row.state not in (hosted.STOPPED, hosted.PAUSED) or row.image is None \
                or row.validation_match_id is None:
            raise FailedPrecondition(
                f"{row.version} is {row.state} and never passed its validation: upload it "
                "again as a new version")
        else:
            others = session.scalar(select(func.count()).select_from(HostedVersion).where(
                HostedVersion.bot_id == row.bot_id, HostedVersion.state.in_(hosted.ACTIVE)))
            if (others or 0) >= config.hosted_per_bot:
                raise ResourceExhausted(
                    f"{_bot(caller).name} has {others} hosted versions running or on their "
                    f"way, the most this site allows: stop one first")
            hosted.set_state(row, hosted.LIVE)
            row.restarts = 0
            row.last_error = None
            session.commit()
        session.refresh(row)
        session.expunge(row)
        name = _bot(caller).name
    hooks.fire(hooks.on_hosted_changed, row.id)
    return row, name


def claim(token: str | None, person_session: str, bot_name: str, bot_token: str, *,
          config: Settings | None = None,
          sessions: sessionmaker[Session] | None = None) -> tuple[Bot, bool]:
    """Make the signed-in person an author of the bot named `bot_name`, whose token
    `bot_token` must be: (the bot, whether they were one already). Nothing is written when
    anything is wrong."""
    config = config or settings()
    factory = factory_of(sessions)
    with factory() as session:
        person = _person(session, token, person_session, config)
        if session.scalar(select(Person.guest).where(Person.id == person)):
            raise FailedPrecondition("a guest cannot be a bot's author: sign up first")
        bot = _named(session, bot_name)
    found = bots.bot_for_token(bot_token, sessions=factory)
    if found.hosted_version is not None:
        raise PermissionDenied("a hosted container's token plays; it proves no authorship "
                               "(use the bot's own token)")
    if found.id != bot.id:
        raise PermissionDenied(f"this token is not {bot.name}'s")
    try:
        with factory() as session, writing(session), session.begin():
            if is_author(session, person, bot.id):
                return bot, True
            session.add(BotAuthor(person_id=person, bot_id=bot.id))
    except IntegrityError:  # the same claim, at the same moment
        return bot, True
    return bot, False
