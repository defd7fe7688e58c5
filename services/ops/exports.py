"""Exporting finished matches as records (`ExportMatches`; the records are `db.records`'):
checking the request, then the records page by page, as JSON, for the stream to send.

Who may export what: every finished match is public (its seed and decks included), so an
export needs no token; except a leg of a duplicate pair whose other leg has not ended, which
is withheld until it has (`db.records`' release horizon): the export stops before it, and
asking for it by id is FailedPrecondition. The view of a seat (`seat_view`) needs that bot's
own token and exports only its matches.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from db import records
from services.core.connections import bound_engine
from services.core.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from services.ops.bots import bot_for_token

WITHHELD_KEY = "bummerl-withheld"  # the trailing metadata that says how many were held back


@dataclass
class Export:
    """A checked export: how many records it holds now, how many more it holds back at the
    release horizon, and its pages (made when asked)."""

    total: int
    withheld: int
    pages: Iterator[list[tuple[str, str]]]  # each record's JSON and its cursor
    bind: Engine
    where: records.ExportFilter
    after: records.Cursor | None
    limit: int

    def withheld_after(self, sent: int, cursor: str) -> int:
        """How many matches the export holds back now after `cursor` (the last one sent, or
        the request's), once `sent` records were sent: 0 if the limit was reached (the
        horizon did not cut it short)."""
        if self.limit and sent >= self.limit:
            return 0
        after = records.Cursor.parse(cursor) if cursor else self.after
        try:
            return records.tally(self.bind, self.where, after).withheld
        except records.Withheld:
            return 1  # (asked by match id: refused at the start, unless withheld since)


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
    PermissionDenied for a seat view without the bot's own token, FailedPrecondition for a
    `match_id` that is a withheld leg of a duplicate pair."""
    bind = bound_engine(sessions)
    if limit < 0:
        raise InvalidArgument(f"limit must be 0 (all) or more, not {limit}")
    view_of = None
    if seat_view:
        me = bot_for_token(token, sessions=sessions)
        if bot and bot != me.name:
            raise PermissionDenied(f"seat_view shows a bot's own turns: this token belongs to "
                                   f"bot {me.name!r}, not to bot {bot[:40]!r}")
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
    try:
        held = records.tally(bind, where, after)
    except records.Withheld as e:
        raise FailedPrecondition(str(e)) from None
    total = min(held.total, limit) if limit else held.total
    pages = records.pages(bind, where, after, limit or None, view_of=view_of)
    return Export(total, held.withheld,
                  ([(_json(r), c.text()) for r, c in page] for page in pages),
                  bind, where, after, limit)


def _json(record: dict[str, object]) -> str:
    return json.dumps(record, separators=(",", ":"))
