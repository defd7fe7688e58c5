"""What a batch of applied actions writes: the appends to the action log, the hands that end and
begin, and the guarded updates of the match rows, in one transaction (`commit`).

An action is first applied in memory (`services.core.actions`: against the live row and cached
game, under the match's lock) and becomes an `Applied`, which `advance` brought the live row
up to; the group commit (`services.core.committers`) puts the `Applied` of concurrent actions (of
different matches) in one batch. A batch is refused as a whole (nothing of it committed) when
a log row is already there (a unique key: a repeated or concurrent submit) or a match row is
not as read (its seq, state or illegal counts: another process got there first).

On SQLite a batch is a multi-row INSERT into the log, an executemany UPDATE of the match rows
and a COMMIT; on PostgreSQL it is one statement of fixed text that takes one array per column
and commits itself (`write_arrays`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, insert, update
from sqlalchemy.exc import DBAPIError, IntegrityError

import engine
from db.base import EPOCH, aware
from db.models import ActionLog, Hand, Match
from db.settings import Settings
from services.core.clocks import charge_time, start_turn, summarize, think_ms
from services.core.connections import autocommit, writing
from services.core.errors import Aborted
from services.core.store import CHANGING, SAVE_LIVE, save_params

log = logging.getLogger(__name__)
ADD_ACTION = insert(ActionLog.metadata.tables["actions"])


@dataclass
class Applied:
    """An action applied to a match's live row `m` (now after it) and cached `game`, not yet
    committed: the row of the log, and when a hand ends, its result (and the next hand's row,
    unless the match is over)."""

    key: tuple[int, int]
    m: Match
    game: engine.Match
    seat: int
    action: engine.Action
    seq: int  # the seq the action got (the match's seq before it)
    request_id: str | None
    now: datetime
    result: engine.HandResult | None
    read_illegal: tuple[int, int]  # the illegal counts the live row had
    think_ms: int | None = None  # how long the seat took (`advance` tells)
    hand_end: dict[str, Any] | None = None  # END_HAND's parameters
    new_hand: dict[str, Any] | None = None  # NEW_HAND's parameters

    def __post_init__(self) -> None:
        if self.result is None:
            return
        r = self.result
        self.hand_end = {
            "hand_match": self.m.id, "hand_number": len(self.game.results) - 1,
            "winner": r.winner, "game_points": r.game_points, "reason": r.reason.value,
            "points0": r.points[0], "points1": r.points[1], "tricks0": r.tricks[0],
            "tricks1": r.tricks[1], "last_seq": self.seq, "finished_at": self.now}
        if not self.game.is_over:
            self.new_hand = {"match_id": self.m.id, "number": self.game.hand_number,
                             "dealer": self.game.hand.dealer, "first_seq": self.seq + 1}

    def log_row(self) -> dict[str, Any]:
        return {"match_id": self.m.id, "seq": self.seq, "seat": self.seat,
                "action": str(self.action), "request_id": self.request_id,
                "created_at": self.now, "think_ms": self.think_ms}


HANDS = Hand.metadata.tables["hands"]
END_HAND = (update(HANDS)
            .where(HANDS.c.match_id == bindparam("hand_match"),
                   HANDS.c.number == bindparam("hand_number"))
            .values({name: bindparam(name) for name in (
                "winner", "game_points", "reason", "points0", "points1", "tricks0", "tricks1",
                "last_seq", "finished_at")}))
NEW_HAND = insert(HANDS)


def _many(rows: list[dict[str, Any]]) -> dict[str, Any] | list[dict[str, Any]]:
    """One row as such (a plain execute), several as a list (executemany)."""
    return rows[0] if len(rows) == 1 else rows


def advance(m: Match, seat: int, game: engine.Match, seq: int, now: datetime,
            config: Settings) -> int | None:
    """Bring the match row `m` up to date after `seat`'s action at `seq`, applied to `game`;
    returns how long the seat took (ms since its turn started; None without a turn clock)."""
    m.seq = seq + 1
    used = think_ms(m, now)
    charge_time(m, seat, used)
    summarize(m, game)
    if game.is_over:
        m.finished_at = now
    start_turn(m, now, config)
    return used


def write_rows(connection: Connection, batch: list[Applied]) -> None:
    """The log rows of `batch` and the rows of the hands that end and begin with it, in the
    connection's transaction (the match rows are the caller's)."""
    connection.execute(ADD_ACTION, _many([p.log_row() for p in batch]))
    ends = [p.hand_end for p in batch if p.hand_end is not None]
    if ends:
        connection.execute(END_HAND, _many(ends))
    begins = [p.new_hand for p in batch if p.new_hand is not None]
    if begins:
        connection.execute(NEW_HAND, _many(begins))


def write(connection: Connection, batch: list[Applied]) -> None:
    """The statements of `batch` (actions of different matches) in the connection's
    transaction: the log rows, the hands that end and begin, the guarded updates of the match
    rows; Aborted if any match row was not as read (nothing of it may be committed then).
    (PostgreSQL has its own: `write_arrays`.)"""
    write_rows(connection, batch)
    saved = connection.execute(SAVE_LIVE, _many([
        save_params(p.m, p.seq, p.read_illegal) for p in batch])).rowcount
    if saved != len(batch):
        raise Aborted("a match changed while acting on it: get the observation again")


# PostgreSQL: each part of the batch's statement takes the batch as one array per column, so
# its text is the same whatever the batch's size (prepared once by the server, planned once),
# and the driver sends a few dozen parameters instead of one set per row. Each array
# goes as one string, an array literal built here (`_array`): psycopg's own list dumpers handle
# every element in Python, and took 0.7 ms of the committer's CPU (and of the GIL) per batch of
# 22 actions against about 0.2 ms for the literals. Times go as integer microseconds since the
# epoch, made timestamps by the statement (`_TIME`), which is exact and cheap to format.
_TIME = "timestamptz 'epoch' + {} * interval '1 microsecond'"
PG_ADD_ACTIONS = (
    "INSERT INTO actions (match_id, seq, seat, action, request_id, created_at, think_ms) "
    f"SELECT v.m, v.s, v.seat, v.a, v.r, {_TIME.format('v.t')}, v.think "
    "FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::varchar[], %s::varchar[], "
    "%s::bigint[], %s::integer[]) AS v(m, s, seat, a, r, t, think)")
PG_END_HANDS = (
    "UPDATE hands AS h SET winner = v.winner, game_points = v.game_points, reason = v.reason, "
    "points0 = v.points0, points1 = v.points1, tricks0 = v.tricks0, tricks1 = v.tricks1, "
    f"last_seq = v.last_seq, finished_at = {_TIME.format('v.finished_at')} "
    "FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::integer[], %s::varchar[], "
    "%s::integer[], %s::integer[], %s::integer[], %s::integer[], %s::integer[], "
    "%s::bigint[]) AS v(match_id, number, winner, game_points, reason, points0, points1, "
    "tricks0, tricks1, last_seq, finished_at) "
    "WHERE h.match_id = v.match_id AND h.number = v.number")
PG_NEW_HANDS = (
    "INSERT INTO hands (match_id, number, dealer, first_seq) "
    "SELECT * FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::integer[])")
# How each changing column of a match row travels: its array's SQL type and `_array` kind.
_PG_KINDS = {"state": ("varchar", "text"), "end_reason": ("varchar", "text"),
             "end_detail": ("text", "text"), "schneider": ("boolean", "bool"),
             "turn_started_at": ("bigint", "time"), "deadline_at": ("bigint", "time"),
             "finished_at": ("bigint", "time")}
_SAVE_KINDS = [_PG_KINDS.get(c, ("integer", "int"))[1] for c in CHANGING]
PG_SAVE = (
    "UPDATE matches AS m SET "
    + ", ".join(f"{c} = " + (_TIME.format(f"v.{c}") if kind == "time" else f"v.{c}")
                for c, kind in zip(CHANGING, _SAVE_KINDS, strict=True))
    + " FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::integer[], "
    + ", ".join(f"%s::{_PG_KINDS.get(c, ('integer', 'int'))[0]}[]" for c in CHANGING)
    + ") AS v(id, read_seq, read_illegal0, read_illegal1, " + ", ".join(CHANGING) + ") "
    + "WHERE m.id = v.id AND m.seq = v.read_seq AND m.state = 'running' "
    + "AND m.illegal0 = v.read_illegal0 AND m.illegal1 = v.read_illegal1")
_END_COLUMNS = ("hand_match", "hand_number", "winner", "game_points", "reason", "points0",
                "points1", "tricks0", "tricks1", "last_seq", "finished_at")
_END_KINDS = ("int", "int", "int", "int", "text", "int", "int", "int", "int", "int", "time")
_NEW_COLUMNS = ("match_id", "number", "dealer", "first_seq")
_MICROSECOND = timedelta(microseconds=1)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _micros(moment: datetime) -> str:
    return str((aware(moment) - EPOCH) // _MICROSECOND)


def _array(kind: str, values: list[Any]) -> str:
    """The PostgreSQL array literal of `values` of `kind` ("int", "bool", "text": quoted and
    escaped, "time": microseconds since the epoch); None is NULL."""
    if kind == "int" and None not in values:
        return "{" + ",".join(map(str, values)) + "}"
    if kind == "text":
        items = ["NULL" if v is None else _quoted(v) for v in values]
    elif kind == "time":
        items = ["NULL" if v is None else _micros(v) for v in values]
    elif kind == "bool":
        items = ["NULL" if v is None else "t" if v else "f" for v in values]
    else:
        items = ["NULL" if v is None else str(int(v)) for v in values]
    return "{" + ",".join(items) + "}"


# The whole batch in one statement, run in autocommit mode: one round trip, and the commit is
# the statement's own (PostgreSQL commits it before it answers). A thread that commits gives up
# the GIL at every wait for the server and may wait milliseconds to get it back from a busy
# event loop: one wait per batch instead of one per statement, BEGIN and COMMIT (the batch's
# wall time went from about 7 to 5 ms when this was measured). The updates of the match rows are
# guarded as before; if any row was not as read, the final SELECT fails the statement (a text
# that is no integer: MOVED_ON), so nothing of the batch is committed and its actions are
# committed one by one, as after any refused batch.
MOVED_ON = "bummerl: a match row moved on"
PG_BATCH = (
    f"WITH saved AS ({PG_SAVE} RETURNING m.id), logged AS ({PG_ADD_ACTIONS}), "
    f"ended AS ({PG_END_HANDS}), begun AS ({PG_NEW_HANDS}) "
    f"SELECT CAST(CASE WHEN count(*) = %s THEN '0' ELSE '{MOVED_ON}' END AS integer) "
    "FROM saved")


def write_arrays(connection: Connection, batch: list[Applied]) -> None:
    """`write` on PostgreSQL, on a connection in autocommit mode: the batch's one statement
    (`PG_BATCH`), which commits it; Aborted (nothing committed) if a match row was not as
    read."""
    import psycopg

    driver = connection.connection.driver_connection
    assert driver is not None
    try:
        with driver.cursor() as cursor:
            cursor.execute(PG_BATCH, batch_parameters(batch))
    except psycopg.Error as e:
        invalidated = bool(driver.closed or getattr(driver, "broken", False))
        if invalidated:
            connection.invalidate()  # past SQLAlchemy's own detection: tell its pool here
        raise batch_error(e, invalidated) from e


def batch_error(error: Exception, invalidated: bool) -> Exception:
    """What the driver's `error` of a `PG_BATCH` statement means: Aborted if its guard refused
    the batch, else the error as SQLAlchemy's own statements would raise it (an IntegrityError
    for a unique key; `invalidated`: the connection is gone)."""
    import psycopg

    if isinstance(error, psycopg.errors.InvalidTextRepresentation) and MOVED_ON in str(error):
        return Aborted("a match changed while acting on it: get the observation again")
    return DBAPIError.instance(PG_BATCH, None, error, psycopg.Error,
                               connection_invalidated=invalidated)


def batch_parameters(batch: list[Applied]) -> tuple[object, ...]:
    """The parameters of `PG_BATCH`, in the order of its parts."""
    ms = [p.m for p in batch]
    ends = [p.hand_end for p in batch if p.hand_end is not None]
    begins = [p.new_hand for p in batch if p.new_hand is not None]
    return (
        _array("int", [m.id for m in ms]), _array("int", [p.seq for p in batch]),
        _array("int", [p.read_illegal[0] for p in batch]),
        _array("int", [p.read_illegal[1] for p in batch]),
        *(_array(kind, [getattr(m, c) for m in ms])
          for c, kind in zip(CHANGING, _SAVE_KINDS, strict=True)),
        _array("int", [m.id for m in ms]), _array("int", [p.seq for p in batch]),
        _array("int", [p.seat for p in batch]), _array("text", [str(p.action) for p in batch]),
        _array("text", [p.request_id for p in batch]),
        _array("time", [p.now for p in batch]), _array("int", [p.think_ms for p in batch]),
        *(_array(kind, [e[c] for e in ends])
          for c, kind in zip(_END_COLUMNS, _END_KINDS, strict=True)),
        *(_array("int", [b[c] for b in begins]) for c in _NEW_COLUMNS),
        len(batch))


def commit(bind: Engine, batch: list[Applied]) -> bool:
    """Commit `batch` in one transaction; False (nothing committed) if any of it is refused:
    a unique key (a concurrent or repeated submit), a match row that moved on (another
    process)."""
    try:
        if bind.dialect.name == "postgresql":
            with autocommit(bind) as connection:
                write_arrays(connection, batch)
        else:
            with writing(bind), bind.begin() as connection:
                write(connection, batch)
    except (IntegrityError, Aborted):
        return False
    return True
