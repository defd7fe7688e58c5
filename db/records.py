"""Match records read from the database (docs/match-record.md), shared by the service's
`ExportMatches` and the dashboard's `/api/export`.

A record is built from one finished match's rows: the match, its bots, its hands (each one's
deck comes from the match's seed, R2.2), its action log (with each action's think time) and its
refused actions. The results are the ones the database states, not recomputed, so that
`bummerl replay` checking a record against the engine checks what the service recorded.

Only finished matches are exported (a running match's seed would reveal its hands; an aborted
one has no result). `export` pages through them in the order they finished, by keyset
pagination on `(finished_at, id)` (the index `ix_matches_finished`): each page is a few
statements for at most `PAGE` matches, so an export of any size holds one page in memory. A
`Cursor` names the last match exported; resuming after it gives the matches that finished
later, including those that finished while the export ran.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, or_, select

from db.base import EPOCH, aware
from db.models import (
    ARCHIVE_RECORDS,
    ARCHIVE_TABLE,
    FINISHED,
    ORIGIN_CHALLENGE,
    ORIGIN_LADDER,
    ORIGIN_MANUAL,
    ORIGIN_TEST,
    ORIGIN_TOURNAMENT,
    RUNNING,
    ActionArchive,
    ActionLog,
    Bot,
    Hand,
    Match,
    Refusal,
)
from engine import Action, Profile
from engine.matchrecord import RECORD_VERSION, hand_deal, seat_view

ORIGINS = (ORIGIN_LADDER, ORIGIN_CHALLENGE, ORIGIN_TOURNAMENT, ORIGIN_TEST, ORIGIN_MANUAL)
PAGE = 50  # matches per page of an export (one page is what an export holds in memory)
MATCHES = Match.metadata.tables["matches"]
HANDS = Hand.metadata.tables["hands"]
ACTIONS = ActionLog.metadata.tables["actions"]
ARCHIVE = ActionArchive.metadata.tables["actions_archive"]
REFUSALS = Refusal.metadata.tables["refusals"]
BOTS = Bot.metadata.tables["bots"]
_MICROSECOND = timedelta(microseconds=1)


class BadExport(ValueError):
    """A filter or cursor that cannot be used; the message says what is wrong."""


class NoSuchThing(LookupError):
    """A bot or match the request names does not exist (or has no record yet); the message
    names it."""


@dataclass(frozen=True)
class ExportFilter:
    """Which finished matches an export holds (every field is optional; all given must hold)."""

    bot_id: int | None = None  # one seat is this bot
    opponent_id: int | None = None  # the other seat (with bot_id), or one seat, is this bot
    version: str | None = None  # bot_id's seat (or, without it, either seat) ran this version
    profile: str | None = None  # "soft" or "sharp"
    origin: str | None = None  # ORIGINS
    since: datetime | None = None  # finished at or after
    until: datetime | None = None  # finished before
    match_id: int | None = None  # just this match

    def check(self) -> ExportFilter:
        """`self`, or BadExport naming the field that cannot hold."""
        if self.profile is not None and self.profile not in {p.value for p in Profile}:
            raise BadExport(f"unknown profile {self.profile!r}: soft or sharp")
        if self.origin is not None and self.origin not in ORIGINS:
            raise BadExport(f"unknown origin {self.origin!r}: one of {', '.join(ORIGINS)}")
        for name in ("since", "until"):
            moment = getattr(self, name)
            try:
                if moment is not None:
                    _utc(moment)
            except OverflowError:
                raise BadExport(f"{name} is out of range: a time between the years 1 and "
                                "9999") from None
        if self.since and self.until and aware(self.since) >= aware(self.until):
            raise BadExport("since must be before until")
        if self.bot_id is not None and self.bot_id == self.opponent_id:
            raise BadExport("bot and opponent are the same bot")
        if self.version is not None and not self.version.isprintable():
            raise BadExport("version must be printable text (no control characters)")
        return self


@dataclass(frozen=True)
class Cursor:
    """A place in the order of finished matches: after match `match_id`, finished then."""

    finished_at: datetime
    match_id: int

    def text(self) -> str:
        """The cursor as it travels: microseconds since the epoch, '-', the match id."""
        return f"{(aware(self.finished_at) - EPOCH) // _MICROSECOND}-{self.match_id}"

    @staticmethod
    def parse(text: str) -> Cursor:
        """The cursor of `text()`; BadExport for anything else."""
        found = re.fullmatch(r"(\d{1,17})-(\d{1,18})", text)
        if found is None:
            raise BadExport(f"bad cursor {text[:40]!r}: pass the cursor an export gave")
        return Cursor(EPOCH + int(found.group(1)) * _MICROSECOND, int(found.group(2)))


def _utc(moment: datetime) -> datetime:
    """An aware datetime in UTC (SQLite stores and compares them as UTC text)."""
    return aware(moment).astimezone(UTC)


def _conditions(where: ExportFilter, after: Cursor | None) -> list[Any]:
    m = MATCHES.c
    found: list[Any] = [m.state == FINISHED, m.finished_at.is_not(None)]
    seats = []
    for seat, other in ((0, 1), (1, 0)):
        parts = []
        if where.bot_id is not None:
            parts.append(m[f"bot{seat}_id"] == where.bot_id)
            if where.opponent_id is not None:
                parts.append(m[f"bot{other}_id"] == where.opponent_id)
        elif where.opponent_id is not None:
            parts.append(m[f"bot{seat}_id"] == where.opponent_id)
        if where.version is not None:
            parts.append(m[f"version{seat}"] == where.version)
        if parts:
            seats.append(and_(*parts))
    if seats:
        found.append(or_(*seats))
    if where.profile is not None:
        found.append(m.profile == where.profile)
    if where.origin is not None:
        found.append(m.origin == where.origin)
    if where.since is not None:
        found.append(m.finished_at >= _utc(where.since))
    if where.until is not None:
        found.append(m.finished_at < _utc(where.until))
    if where.match_id is not None:
        found.append(m.id == where.match_id)
    # a match whose log went to record files (`bummerl db prune --archive records`) has its
    # record there, not here
    found.append(or_(m.actions_archive.is_(None), m.actions_archive != ARCHIVE_RECORDS))
    if after is not None:
        at = _utc(after.finished_at)
        found.append(or_(m.finished_at > at, and_(m.finished_at == at, m.id > after.match_id)))
    return found


def count(bind: Engine, where: ExportFilter, after: Cursor | None = None) -> int:
    """How many finished matches `where` holds after `after`."""
    with bind.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(MATCHES).where(
            *_conditions(where, after))).scalar_one())


def export(bind: Engine, where: ExportFilter, after: Cursor | None = None,
           limit: int | None = None, *, view_of: int | None = None,
           page: int = PAGE) -> Iterator[tuple[dict[str, Any], Cursor]]:
    """The records of the finished matches `where` holds, after `after`, in the order they
    finished, each with the cursor that resumes after it; at most `limit` of them. With
    `view_of` (a bot id), each record has that bot's `view` (`engine.matchrecord.seat_view`).
    Reads one page of `page` matches at a time (`pages`)."""
    for records in pages(bind, where, after, limit, view_of=view_of, page=page):
        yield from records


def pages(bind: Engine, where: ExportFilter, after: Cursor | None = None,
          limit: int | None = None, *, view_of: int | None = None,
          page: int = PAGE) -> Iterator[list[tuple[dict[str, Any], Cursor]]]:
    """`export`, one page (a list of at most `page` records and their cursors) at a time;
    each page is read in a connection of its own when it is asked for."""
    where.check()
    left = limit
    while left is None or left > 0:
        size = page if left is None else min(page, left)
        with bind.connect() as connection:
            records = _page(connection, where, after, size)
        out = []
        for record in records:
            if view_of is not None:
                seat = 0 if record["bots"][0]["bot_id"] == view_of else 1
                record["view"] = {"seat": seat, "bot": record["bots"][seat]["name"],
                                  "turns": seat_view(record, seat)}
            after = Cursor(_parse_time(record["finished_at"]), record["match_id"])
            out.append((record, after))
        if out:
            yield out
        if left is not None:
            left -= len(records)
        if len(records) < size:
            return


def finished_record(bind: Engine, match_id: int) -> dict[str, Any]:
    """The record of match `match_id`; NoSuchThing if there is no such match or it is not
    finished (a running match's record would show its hidden cards)."""
    with bind.connect() as connection:
        records = _page(connection, ExportFilter(match_id=match_id), None, 1)
        if records:
            return records[0]
        state = connection.execute(select(MATCHES.c.state).where(
            MATCHES.c.id == match_id)).scalar_one_or_none()
    if state is None:
        raise NoSuchThing(f"no match with id {match_id}")
    if state == FINISHED:
        raise NoSuchThing(f"match {match_id}'s action log was archived as match records "
                          "(bummerl db prune --archive records): its record is in those files")
    if state == RUNNING:
        raise NoSuchThing(f"match {match_id} is still running: its record is there once it "
                          "is over")
    raise NoSuchThing(f"match {match_id} was aborted: it has no result and no record")


BOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")  # as services.ops.bots registers them


def bot_id_named(bind: Engine, name: str) -> int:
    """The id of the bot called `name`; NoSuchThing if there is none."""
    if not BOT_NAME.fullmatch(name):
        raise NoSuchThing(f"no bot named {name[:40]!r}: bot names are 1-40 letters, digits, "
                          "'-', '_' or '.'")
    with bind.connect() as connection:
        found = connection.execute(select(BOTS.c.id).where(BOTS.c.name == name)).scalar()
    if found is None:
        raise NoSuchThing(f"no bot named {name[:40]!r}")
    return int(found)


# --- building records ------------------------------------------------------------------------
def _page(connection: Connection, where: ExportFilter, after: Cursor | None,
          size: int) -> list[dict[str, Any]]:
    m = MATCHES.c
    rows = connection.execute(select(MATCHES).where(*_conditions(where, after))
                              .order_by(m.finished_at, m.id).limit(size)).all()
    return _records(connection, rows)


def records_for(connection: Connection, match_ids: list[int]) -> list[dict[str, Any]]:
    """The records of these finished matches (in id order), whatever their filter: what
    `bummerl db prune --archive records` writes before it drops their action logs."""
    rows = connection.execute(select(MATCHES).where(
        MATCHES.c.id.in_(match_ids), MATCHES.c.state == FINISHED,
        MATCHES.c.finished_at.is_not(None)).order_by(MATCHES.c.id)).all()
    return _records(connection, rows)


def _records(connection: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    if not rows:
        return []
    ids = [row.id for row in rows]
    bot_ids = {row.bot0_id for row in rows} | {row.bot1_id for row in rows}
    bots = {row.id: row for row in connection.execute(
        select(BOTS.c.id, BOTS.c.name, BOTS.c.kind, BOTS.c.house_strategy)
        .where(BOTS.c.id.in_(bot_ids)))}
    hands: dict[int, list[Any]] = {i: [] for i in ids}
    for row in connection.execute(select(HANDS).where(HANDS.c.match_id.in_(ids))
                                  .order_by(HANDS.c.match_id, HANDS.c.number)):
        hands[row.match_id].append(row)
    actions: dict[int, list[Any]] = {i: [] for i in ids}
    for row in connection.execute(
            select(ACTIONS.c.match_id, ACTIONS.c.seq, ACTIONS.c.seat, ACTIONS.c.action,
                   ACTIONS.c.think_ms)
            .where(ACTIONS.c.match_id.in_(ids)).order_by(ACTIONS.c.match_id, ACTIONS.c.seq)):
        actions[row.match_id].append(row)
    archived = [row.id for row in rows if row.actions_archive == ARCHIVE_TABLE]
    if archived:  # pruned logs moved to the archive table (`db.prune`)
        for row in connection.execute(
                select(ARCHIVE.c.match_id, ARCHIVE.c.seq, ARCHIVE.c.seat, ARCHIVE.c.action,
                       ARCHIVE.c.think_ms)
                .where(ARCHIVE.c.match_id.in_(archived))
                .order_by(ARCHIVE.c.match_id, ARCHIVE.c.seq)):
            actions[row.match_id].append(row)
    refusals: dict[int, list[Any]] = {i: [] for i in ids}
    for row in connection.execute(
            select(REFUSALS.c.match_id, REFUSALS.c.seq, REFUSALS.c.seat, REFUSALS.c.action,
                   REFUSALS.c.rule, REFUSALS.c.message)
            .where(REFUSALS.c.match_id.in_(ids))
            .order_by(REFUSALS.c.match_id, REFUSALS.c.seq, REFUSALS.c.id)):
        refusals[row.match_id].append(row)
    return [record_of(row, bots, hands[row.id], actions[row.id], refusals[row.id])
            for row in rows]


def _time(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return _utc(moment).isoformat().replace("+00:00", "Z")


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _bot(row: Any, version: str | None) -> dict[str, Any]:
    return {"bot_id": row.id, "name": row.name, "kind": row.kind,
            "strategy": row.house_strategy, "version": version}


def record_of(m: Any, bots: dict[int, Any], hands: list[Any], actions: list[Any],
              refusals: list[Any]) -> dict[str, Any]:
    """The record of the finished match row `m` from its rows: `bots` by id, its `hands` in
    order, its `actions` by seq, its `refusals` in the order they were made."""
    out_hands = []
    action_seqs = [a.seq for a in actions]
    refusal_seqs = [r.seq for r in refusals]  # (in the order made: by seq)
    for h in hands:
        end = h.last_seq + 1 if h.last_seq is not None else m.seq + 1
        a0, a1 = bisect_left(action_seqs, h.first_seq), bisect_left(action_seqs, end)
        r0, r1 = bisect_left(refusal_seqs, h.first_seq), bisect_left(refusal_seqs, end)
        result = None
        if h.winner is not None:
            result = {"winner": h.winner, "game_points": h.game_points, "reason": h.reason,
                      "points": [h.points0, h.points1], "tricks": [h.tricks0, h.tricks1]}
        out_hands.append({
            "number": h.number, "dealer": h.dealer, **hand_deal(m.seed, h.number, h.dealer),
            "actions": [{"seq": a.seq, "seat": a.seat, **_action(a.action),
                         "think_ms": a.think_ms}
                        for a in actions[a0:a1]],
            "refusals": [{"seq": r.seq, "seat": r.seat, "action": r.action, "rule": r.rule,
                          "message": r.message}
                         for r in refusals[r0:r1]],
            "result": result,
        })
    return {
        "record_version": RECORD_VERSION,
        "match_id": m.id,
        "profile": m.profile,
        "seed": m.seed,
        "first_dealer": hands[0].dealer if hands else None,
        "origin": m.origin,
        "rated": m.rated,
        "time_control": {"move_ms": m.move_ms, "bank_ms": m.bank_ms,
                         "max_illegal": m.max_illegal},
        "bots": [_bot(bots[m.bot0_id], m.version0), _bot(bots[m.bot1_id], m.version1)],
        "created_at": _time(m.created_at),
        "finished_at": _time(m.finished_at),
        "hands": out_hands,
        "result": {"winner": m.winner, "counters": [m.counter0, m.counter1],
                   "schneider": m.schneider, "end_reason": m.end_reason,
                   "end_detail": m.end_detail, "forfeit_seat": m.forfeit_seat,
                   "illegal": [m.illegal0, m.illegal1], "bank_left_ms": [m.bank0_ms, m.bank1_ms]},
    }


_ACTIONS: dict[str, dict[str, str]] = {}


def _action(text: str) -> dict[str, str]:
    """The `{"do": ...}` form of an action's text (few distinct texts: kept once made)."""
    found = _ACTIONS.get(text)
    if found is None:
        found = _ACTIONS[text] = Action.from_text(text).to_dict()
    return dict(found)
