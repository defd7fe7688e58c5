"""Exporting finished matches as records (`ExportMatches`; the records are `db.records`'):
checking the request, then the records page by page, as JSON, for the stream to send.

Who may export what: every finished match is public (its seed and decks included), so an
export needs no token. The view of a seat (`seat_view`) needs that bot's own token and exports
only its matches.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from db import records
from services.core.connections import bound_engine
from services.core.errors import InvalidArgument, NotFound, PermissionDenied
from services.ops.bots import bot_for_token


@dataclass
class Export:
    """A checked export: how many records it holds now, and its pages (made when asked)."""

    total: int
    pages: Iterator[list[tuple[str, str]]]  # each record's JSON and its cursor


def start_export(
    *,
    bot: str = "",
    opponent: str = "",
    version: str = "",
    profile: str | None = None,
    origin: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    match_id: int = 0,
    cursor: str = "",
    limit: int = 0,
    seat_view: bool = False,
    token: str | None = None,
    sessions: sessionmaker[Session] | None = None,
) -> Export:
    """Check an export's request and count its records. InvalidArgument for a filter or
    cursor that cannot be used, NotFound for a bot name no bot has, Unauthenticated or
    PermissionDenied for a seat view without the bot's own token."""
    bind = bound_engine(sessions)
    if limit < 0:
        raise InvalidArgument(f"limit must be 0 (all) or more, not {limit}")
    view_of = None
    if seat_view:
        me = bot_for_token(token, sessions=sessions)
        if bot and bot != me.name:
            raise PermissionDenied(f"seat_view shows a bot's own turns: this token is "
                                   f"{me.name!r}'s, not {bot[:40]!r}'s")
        bot, view_of = me.name, me.id
    try:
        where = records.ExportFilter(
            bot_id=records.bot_id_named(bind, bot) if bot else None,
            opponent_id=records.bot_id_named(bind, opponent) if opponent else None,
            version=version or None, profile=profile, origin=origin or None,
            since=since, until=until, match_id=match_id or None).check()
        after = records.Cursor.parse(cursor) if cursor else None
    except records.BadExport as e:
        raise InvalidArgument(str(e)) from None
    except records.NoSuchThing as e:
        raise NotFound(str(e)) from None
    total = records.count(bind, where, after)
    if limit:
        total = min(total, limit)
    pages = records.pages(bind, where, after, limit or None, view_of=view_of)
    return Export(total, ([(_json(r), c.text()) for r, c in page] for page in pages))


def _json(record: dict[str, object]) -> str:
    return json.dumps(record, separators=(",", ":"))
