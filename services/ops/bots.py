"""Bots: registration, tokens and look-ups (plain functions over the database).

A remote bot's token is 32 random bytes (URL-safe text) shown once; only its SHA-256 is stored.

The house credential (`BUMMERL_HOUSE_TOKEN`, kept as its SHA-256 like the operator token) is the
workers' token: with it a caller may observe and act for the seats held by house bots
(`kind == "house"`) and create matches (the ladder's CreateMatch), nothing else: it is
PERMISSION_DENIED for a remote bot's seat, and it is not the operator token.
"""

from __future__ import annotations

import hmac
import re
import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker, with_expression

from db import base, hosted
from db.hosted import HostedVersion
from db.models import HOUSE, REMOTE, Bot, Match, bot_named
from db.settings import Settings, settings, sha256
from services.core.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    quote,
)

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")

# The house bot of each (database, match, seat) the house token acted for: a match's bots and a
# bot's kind never change, so a house move's submit needs no query to authorise it.
_house_seats: dict[tuple[object, int, int], int] = {}
HOUSE_SEATS_KEPT = 10_000


def _sessions(sessions: sessionmaker[Session] | None) -> sessionmaker[Session]:
    if sessions is not None:
        return sessions
    return base.session_factory()


def register_bot(
    name: str,
    *,
    kind: str = REMOTE,
    house_strategy: str | None = None,
    sessions: sessionmaker[Session] | None = None,
) -> tuple[Bot, str | None]:
    """Register a bot; returns it and its token (None for a house bot, which has none).

    Raises InvalidArgument for a bad name or kind, AlreadyExists when the name is taken.
    """
    if not NAME.match(name or ""):
        raise InvalidArgument(
            f"bad bot name {quote(name)}: use 1-40 letters, digits, '-', '_' or '.'"
        )
    if kind not in (REMOTE, HOUSE):
        raise InvalidArgument(f"bad bot kind {quote(kind)}: 'remote' or 'house'")
    if kind == HOUSE and not house_strategy:
        raise InvalidArgument("a house bot needs a house_strategy name")
    token = secrets.token_urlsafe(32) if kind == REMOTE else None
    bot = Bot(
        name=name,
        kind=kind,
        house_strategy=house_strategy if kind == HOUSE else None,
        token_hash=sha256(token) if token else None,
    )
    with _sessions(sessions).begin() as session:
        _refuse_taken(session, name)
        session.add(bot)
        try:
            session.flush()
        except IntegrityError:  # registered meanwhile
            raise AlreadyExists(f"a bot named {quote(name)} (in some case) exists: choose "
                                "another name") from None
    return bot, token


def _refuse_taken(session: Session, name: str) -> None:
    """AlreadyExists naming the bot that holds `name`, whatever the case (names are unique so,
    as people's are)."""
    held = session.scalar(select(Bot.name).where(bot_named(name)))
    if held is None:
        return
    if held == name:
        raise AlreadyExists(f"a bot named {quote(name)} exists: choose another name")
    raise AlreadyExists(f"the name {quote(name)} is taken by the bot {quote(held)} (bot names "
                        "are unique whatever their case): choose another name")


def get_bot(bot_id: int, *, sessions: sessionmaker[Session] | None = None) -> Bot:
    with _sessions(sessions)() as session:
        bot = session.get(Bot, bot_id)
        if bot is None:
            raise NotFound(f"no bot with id {bot_id}")
        return bot


NO_TOKEN = "no token: send metadata 'authorization: Bearer <bot token>'"
UNKNOWN_TOKEN = "unknown token: use the token RegisterBot returned"


def bot_for_token(token: str | None, *, sessions: sessionmaker[Session] | None = None) -> Bot:
    """The remote bot whose token this is; Unauthenticated otherwise."""
    found = bots_for_tokens([token], sessions=sessions)[0]
    if isinstance(found, Unauthenticated):
        raise found
    return found


def _hosted_bots(session: Session, hashes: list[str]) -> dict[str, Bot]:
    """The bots of the hosted versions (validating or live) whose container tokens these are,
    each carrying the version (`Bot.hosted_version`)."""
    rows = session.execute(
        select(Bot, HostedVersion.token_hash).join(HostedVersion, HostedVersion.bot_id == Bot.id)
        .where(HostedVersion.token_hash.in_(hashes), HostedVersion.state.in_(hosted.PLAYING))
        .options(with_expression(Bot.hosted_version, HostedVersion.version))
        .execution_options(populate_existing=True))
    return {token_hash: bot for bot, token_hash in rows if token_hash}


def bots_for_tokens(tokens: list[str | None], *, sessions: sessionmaker[Session] | None = None
                    ) -> list[Bot | Unauthenticated]:
    """`bot_for_token` of each of `tokens` in one query (a burst of Play streams); an unknown
    or missing token is answered with its error, in its place."""
    hashes = {token: sha256(token) for token in tokens if token}
    found: dict[str | None, Bot] = {}
    if hashes:
        with _sessions(sessions)() as session:
            found = {bot.token_hash: bot for bot in session.scalars(
                select(Bot).where(Bot.token_hash.in_(sorted(set(hashes.values())))))}
            others = sorted(set(hashes.values()) - set(found))
            if others:  # a hosted version's container (db.hosted)
                found.update(_hosted_bots(session, others))
    out: list[Bot | Unauthenticated] = []
    for token in tokens:
        bot = found.get(hashes[token]) if token else None
        if bot is not None:
            out.append(bot)
        elif not token:
            out.append(Unauthenticated(NO_TOKEN))
        else:
            out.append(Unauthenticated(UNKNOWN_TOKEN))
    return out


def is_operator(token: str | None, config: Settings | None = None) -> bool:
    config = config or settings()
    if not token or not config.operator_token_sha256:
        return False
    return hmac.compare_digest(sha256(token), config.operator_token_sha256)


def require_operator(token: str | None, config: Settings | None = None, what: str = "",
                     house_ok: bool = False) -> None:
    """Raise Unauthenticated (no token) or PermissionDenied unless `token` is the operator's
    (or, with `house_ok`, the house token: the ladder creates matches with it)."""
    config = config or settings()
    if is_operator(token, config) or (house_ok and is_house(token, config)):
        return
    if not token:
        raise Unauthenticated(
            f"{what} needs the operator token: send metadata 'authorization: Bearer <token>'"
        )
    raise PermissionDenied(f"{what} needs the operator token; this token is not it")


def is_house(token: str | None, config: Settings | None = None) -> bool:
    """Whether `token` is the house credential."""
    config = config or settings()
    if not token or not config.house_token_sha256:
        return False
    return hmac.compare_digest(sha256(token), config.house_token_sha256)


def seat_bot_id(
    token: str | None,
    match_id: int,
    seat: int,
    *,
    config: Settings | None = None,
    sessions: sessionmaker[Session] | None = None,
) -> int:
    """The bot a caller with `token` acts as for `seat` of match `match_id`.

    A remote bot's token names that bot (whether it plays the seat is checked by the caller of
    this function, as before). The house credential acts as the house bot of the seat, if the
    seat is held by one: PermissionDenied for a remote bot's seat, NotFound for no such match,
    InvalidArgument for a bad seat. Any other token is Unauthenticated.
    """
    if not is_house(token, config):
        return bot_for_token(token, sessions=sessions).id
    if seat not in (0, 1):
        raise InvalidArgument(f"seat must be 0 or 1, not {seat}")
    factory = _sessions(sessions)
    key = (factory.kw["bind"], match_id, seat)
    known = _house_seats.get(key)
    if known is not None:
        return known
    seat_bot = Match.bot1_id if seat else Match.bot0_id
    with factory() as session:
        row = session.execute(select(Bot.id, Bot.kind).join(Match, Bot.id == seat_bot)
                              .where(Match.id == match_id)).one_or_none()
    if row is None:
        raise NotFound(f"no match with id {match_id}")
    bot_id, kind = row
    if kind != HOUSE:
        raise PermissionDenied(
            f"the house token acts only for house bots; seat {seat} of match {match_id} is "
            f"held by the {kind} bot {bot_id}: use that bot's token")
    if len(_house_seats) >= HOUSE_SEATS_KEPT:
        _house_seats.clear()
    _house_seats[key] = bot_id
    return bot_id
