"""Games as data on the dashboard: `/api/export` streams match records as JSON lines (the
download links of the bot and match pages), and a finished match's turns as one seat saw them
(`/matches/ID/seats/N`, JSON at `/api/matches/ID/seats/N`).

Only finished matches have records (`db.records`): a running match is never exported (asked
for by `match`, a 409 says it is still running), and its seat pages are a 404 until it is
over. A finished leg of a duplicate pair whose other leg has not ended is withheld (the release
horizon): an export stops before it (`X-Bummerl-Withheld` says how many it holds back), and
asking for it by `match` is a 409. An export is read page by page while it is sent, so its size
does not bound by memory (waitress pauses the stream while the client is slow to read).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, jsonify, render_template
from sqlalchemy import Engine, select

from db import records
from db.models import FINISHED, RUNNING, Match
from engine.matchrecord import seat_view
from web.db import sessions
from web.params import ident, int_arg, text_arg
from web.queries import Conflict, Invalid, Missing, legs_in_play

bp = Blueprint("exports", __name__)


def _bind() -> Engine:
    bind = sessions().kw["bind"]
    assert isinstance(bind, Engine)
    return bind


def _when(name: str) -> datetime | None:
    text = text_arg(name)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise Invalid(f"{name} must be an ISO 8601 date or time (e.g. 2026-12-01 or "
                      f"2026-12-01T18:00Z), not {text[:40]!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _bot(bind: Engine, name: str) -> int | None:
    text = text_arg(name)
    try:
        return None if text is None else records.bot_id_named(bind, text)
    except records.NoSuchThing as e:
        raise Missing(str(e)) from None


@bp.get("/api/export")
def export() -> Response:
    """`?bot=NAME&opponent=NAME&version=V&profile=P&origin=O&since=T&until=T&match=ID
    &cursor=C&limit=N`: the finished matches' records, one JSON line each, in the order they
    finished (a download: `Content-Disposition`; `X-Bummerl-Total` says how many,
    `X-Bummerl-Withheld` how many more the release horizon holds back; a 409 for a `match`
    that is withheld)."""
    bind = _bind()
    limit = int_arg("limit", what="limit")
    if limit is not None and limit < 1:
        raise Invalid(f"limit must be 1 or more, not {limit}")
    try:
        where = records.ExportFilter(
            bot_id=_bot(bind, "bot"), opponent_id=_bot(bind, "opponent"),
            version=text_arg("version"), profile=text_arg("profile"), origin=text_arg("origin"),
            since=_when("since"), until=_when("until"),
            match_id=int_arg("match", what="match id")).check()
        cursor = text_arg("cursor")
        after = records.Cursor.parse(cursor) if cursor else None
        held = records.tally(bind, where, after)
    except records.BadExport as e:
        raise Invalid(str(e)) from None
    except records.Withheld as e:
        raise Conflict(str(e)) from None
    if where.match_id is not None and held.total == 0:
        _why_not(bind, where.match_id)
    total = held.total if limit is None else min(held.total, limit)

    def lines() -> Iterator[str]:
        for page in records.pages(bind, where, after, limit):
            for record, _ in page:  # a record at a time: waitress sends each as it comes
                yield json.dumps(record, separators=(",", ":")) + "\n"

    name = "-".join(filter(None, ["bummerl-games", text_arg("bot"),
                                  text_arg("match") and f"match-{text_arg('match')}"]))
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return Response(lines(), mimetype="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="{safe}.jsonl"',
        "X-Bummerl-Total": str(total),
        "X-Bummerl-Withheld": str(0 if limit is not None and held.total >= limit
                                  else held.withheld)})


def _why_not(bind: Engine, match_id: int) -> None:
    """Why `match` names no record: Missing for no such match (or one with no record),
    Conflict for a running one (its record, hidden cards and seed, exists once it is over)."""
    with sessions()() as s:
        state = s.scalar(select(Match.state).where(Match.id == match_id))
    if state == RUNNING:
        raise Conflict(f"match {match_id} is still running: its record is exported when it ends")
    if state is None or state != FINISHED:
        raise Missing(f"no match with id {match_id}" if state is None else
                      f"match {match_id} was aborted: it has no result and no record")
    try:  # a finished match: the other filters left it out, or its log was archived
        records.finished_record(bind, match_id)
    except records.NoSuchThing as e:
        raise Missing(str(e)) from None


def _seat_data(match_id: str, seat: str) -> dict[str, Any]:
    number = ident(match_id, "match id")
    who = ident(seat, "seat", low=0)
    if who not in (0, 1):
        raise Missing(f"a match has seats 0 and 1, not {who}")
    try:
        record = records.finished_record(_bind(), number)
    except records.NoSuchThing as e:
        raise Missing(f"{e}; the turns as a seat saw them are shown once it is over") from None
    with sessions()() as s:
        pair_id = s.scalar(select(Match.pair_id).where(Match.id == number))
        if pair_id is not None and legs_in_play(s, {pair_id}):
            raise Missing(f"match {number} is a leg of a duplicate pair whose other match is "
                          "still running: its turns as a seat saw them are shown once both "
                          "are over (they are dealt from one seed)")
    turns = seat_view(record, who)
    return {"match_id": number, "seat": who, "bot": record["bots"][who],
            "opponent": record["bots"][1 - who], "result": record["result"],
            "profile": record["profile"], "time_control": record["time_control"],
            "turns": turns}


@bp.get("/matches/<match_id>/seats/<seat>")
def seat_page(match_id: str, seat: str) -> str:
    """A finished match as one seat saw it: each of its turns, its answer and think time."""
    return render_template("seat.html", data=_seat_data(match_id, seat))


@bp.get("/api/matches/<match_id>/seats/<seat>")
def api_seat(match_id: str, seat: str) -> Any:
    return jsonify(_seat_data(match_id, seat))
