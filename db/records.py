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

The release horizon (docs/match-record.md, "Duplicate pairs"): a finished leg of a duplicate
pair (`db.pairs`) whose other leg has not ended (it is running, or not made yet while the pair
is open) is *withheld*: its seed and deals are the decks the other leg is playing (R2.2). An
export never goes at or past the first withheld match it holds, in cursor order: it stops just
before it, so a cursor never passes a withheld leg, and a reader resuming later gets the leg and
everything after it once the pair's other leg has ended. A void or forfeited pair whose other
leg was never made releases its finished leg (nothing mirrors it). The horizon is one query per
page, driven by the few running matches (`ix_matches_state`, their mirrors by `ix_matches_pair`)
and the open pairs (their one leg by primary key); it is read after the page's matches, so a
leg that finished meanwhile is cut off too (`bench/horizon.py` measures it beside a page).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, and_, case, func, literal, or_, select, union_all
from sqlalchemy.orm import Session

from db.analyses import documents_for
from db.base import EPOCH, aware
from db.models import (
    ARCHIVE_RECORDS,
    ARCHIVE_TABLE,
    FINISHED,
    ORIGINS,
    RUNNING,
    ActionArchive,
    ActionLog,
    Bot,
    Hand,
    Match,
    Refusal,
)
from db.pairs import OPEN, DuplicatePair
from engine import Action, Profile
from engine.matchrecord import RECORD_VERSION, hand_deal, seat_view

PAGE = 50  # matches per page of an export (one page is what an export holds in memory)
MATCHES = Match.metadata.tables["matches"]
HANDS = Hand.metadata.tables["hands"]
ACTIONS = ActionLog.metadata.tables["actions"]
ARCHIVE = ActionArchive.metadata.tables["actions_archive"]
REFUSALS = Refusal.metadata.tables["refusals"]
BOTS = Bot.metadata.tables["bots"]
PAIRS = DuplicatePair.metadata.tables["duplicate_pairs"]
LEG, OTHER = MATCHES.alias("leg"), MATCHES.alias("other")  # (made once: aliases are costly)
_MICROSECOND = timedelta(microseconds=1)


class BadExport(ValueError):
    """A filter or cursor that cannot be used; the message says what is wrong."""


class NoSuchThing(LookupError):
    """A bot or match the request names does not exist (or has no record yet); the message
    names it."""


class Withheld(NoSuchThing):
    """The match the request names is a finished leg of a duplicate pair whose other leg has
    not ended: its record is withheld until it has (the release horizon)."""


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


def _conditions(where: ExportFilter, after: Cursor | None, table: Any = MATCHES) -> list[Any]:
    m = table.c
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
    """How many finished matches `where` holds after `after` that an export gives now (those
    before the release horizon)."""
    return tally(bind, where, after).total


@dataclass(frozen=True)
class Tally:
    """What an export holds now: `total` records before the release horizon, and `withheld`
    matches it holds back at or past it (0 when no withheld leg is among them)."""

    total: int
    withheld: int
    horizon: Cursor | None  # the first withheld match, or None


def tally(bind: Engine, where: ExportFilter, after: Cursor | None = None) -> Tally:
    """How many finished matches `where` holds after `after`, split at the release horizon
    (two statements). Withheld if `where` names a match (`match_id`) that is withheld."""
    with bind.connect() as connection:
        horizon = _horizon(connection, where, after)
        if horizon is not None and where.match_id is not None:
            raise Withheld(_withheld_message(connection, where.match_id))
        held: Any = literal(0)
        if horizon is not None:
            held = func.coalesce(func.sum(case((_before(MATCHES, horizon), 0), else_=1)), 0)
        total, withheld = connection.execute(select(func.count(), held).select_from(MATCHES)
                                             .where(*_conditions(where, after))).one()
    return Tally(int(total) - int(withheld), int(withheld), horizon)


def _before(table: Any, horizon: Cursor) -> Any:
    """The condition that a match of `table` comes before `horizon` in cursor order."""
    m = table.c
    at = _utc(horizon.finished_at)
    return or_(m.finished_at < at, and_(m.finished_at == at, m.id < horizon.match_id))


def _horizon(connection: Connection, where: ExportFilter,
             after: Cursor | None) -> Cursor | None:
    """The first withheld match (in cursor order) that `where` holds after `after`, or None:
    a finished leg whose other leg runs (driven by the running matches), or whose other leg
    is not made yet while its pair is open (driven by the open pairs)."""
    leg, other = LEG, OTHER
    mirrored = and_(leg.c.pair_id == other.c.pair_id, leg.c.pair_leg == 1 - other.c.pair_leg)
    other_runs = (select(leg.c.finished_at, leg.c.id)
                  .select_from(other.join(leg, mirrored))
                  .where(other.c.state == RUNNING, other.c.pair_id.is_not(None),
                         *_conditions(where, after, leg)))
    p = PAIRS.c  # (a pair's legs are on its row, written with each match: by primary key)
    other_unmade = (select(leg.c.finished_at, leg.c.id)
                    .select_from(PAIRS.join(leg, leg.c.id == func.coalesce(p.match_a_id,
                                                                           p.match_b_id)))
                    .where(p.state.in_(OPEN), or_(p.match_a_id.is_(None),
                                                  p.match_b_id.is_(None)),
                           *_conditions(where, after, leg)))
    both = union_all(other_runs, other_unmade).subquery()
    row = connection.execute(select(both.c.finished_at, both.c.id)
                             .order_by(both.c.finished_at, both.c.id).limit(1)).first()
    return None if row is None else Cursor(aware(row.finished_at), int(row.id))


def pairs_in_play(connection: Connection | Session, pair_ids: Iterable[int]) -> set[int]:
    """The duplicate pairs among `pair_ids` whose finished legs are withheld (the horizon's
    rule, for the dashboard's pages): a leg of theirs runs, or the pair is open with a leg not
    made yet. One statement."""
    wanted = sorted(set(pair_ids))
    if not wanted:
        return set()
    p = PAIRS.c
    running = select(MATCHES.c.pair_id).where(MATCHES.c.pair_id.in_(wanted),
                                              MATCHES.c.state == RUNNING)
    unmade = select(p.id).where(p.id.in_(wanted), p.state.in_(OPEN),
                                or_(p.match_a_id.is_(None), p.match_b_id.is_(None)))
    return {int(i) for i in connection.execute(union_all(running, unmade)).scalars()}


def _withheld_message(connection: Connection, match_id: int) -> str:
    pair_id = connection.execute(select(MATCHES.c.pair_id).where(
        MATCHES.c.id == match_id)).scalar()
    return (f"match {match_id} is a leg of duplicate pair {pair_id} whose other leg is still "
            "running (or yet to start): both are dealt from one seed (R2.2), so its record is "
            "exported once the other leg has ended")


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
    finished (a running match's record would show its hidden cards), Withheld if it is a leg
    of a duplicate pair whose other leg has not ended."""
    with bind.connect() as connection:
        records = _page(connection, ExportFilter(match_id=match_id), None, 1)
        if records:
            return records[0]
        found = connection.execute(select(MATCHES.c.state, MATCHES.c.actions_archive).where(
            MATCHES.c.id == match_id)).one_or_none()
        state = None if found is None else found.state
        if found is not None and state == FINISHED and found.actions_archive != ARCHIVE_RECORDS:
            raise Withheld(_withheld_message(connection, match_id))
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
        found = connection.execute(select(BOTS.c.id).where(  # names are unique whatever the case
            func.lower(BOTS.c.name) == name.lower())).scalar()
    if found is None:
        raise NoSuchThing(f"no bot named {name[:40]!r}")
    return int(found)


# --- building records ------------------------------------------------------------------------
def _page(connection: Connection, where: ExportFilter, after: Cursor | None,
          size: int) -> list[dict[str, Any]]:
    """The records of the next `size` matches `where` holds after `after`, cut at the release
    horizon (read after the matches: a leg that finished in between is cut off too); fewer
    than `size` when the horizon or the end was reached."""
    m = MATCHES.c
    rows = connection.execute(select(MATCHES).where(*_conditions(where, after))
                              .order_by(m.finished_at, m.id).limit(size)).all()
    if not rows:
        return []
    horizon = _horizon(connection, where, after)
    if horizon is not None:
        rows = [row for row in rows if (_utc(aware(row.finished_at)), row.id)
                < (_utc(horizon.finished_at), horizon.match_id)]
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
    out = [record_of(row, bots, hands[row.id], actions[row.id], refusals[row.id])
           for row in rows]
    analysed = documents_for(connection, ids)  # (additive: only where a match was analysed)
    for record in out:
        if record["match_id"] in analysed:
            record["analysis"] = analysed[record["match_id"]]
    return out


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
