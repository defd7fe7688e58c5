"""Reading and writing match rows: a match's game rebuilt from its action log, the row locked
for an update and saved back (guarded by the seq and state it was read at), and the bots of a
match (kept per process once read)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection, bindparam, select, update
from sqlalchemy.orm import Session

import engine
from db.models import RUNNING, ActionLog, Bot, Match
from services.core.cache import bind_key, cached_game, keep_if_newer
from services.core.errors import Aborted, NotFound

if TYPE_CHECKING:
    from services.core.values import MatchState


def game_of(db: Session | Connection, m: Match | MatchState) -> engine.Match:
    """The engine state of `m` after its `m.seq` actions (from the cache or rebuilt)."""
    key = bind_key(db.get_bind() if isinstance(db, Session) else db.engine, m.id)
    game = cached_game(key, m.seq)
    if game is not None:
        return game
    rows = db.execute(
        select(ActionLog.seat, ActionLog.action)
        .where(ActionLog.match_id == m.id, ActionLog.seq < m.seq)
        .order_by(ActionLog.seq)
    ).all()
    if len(rows) != m.seq:
        raise Aborted(f"match {m.id} changed while reading it: try again")
    game = engine.Match.replay(
        m.seed, m.profile, [(seat, engine.Action.from_text(text)) for seat, text in rows]
    )
    keep_if_newer(key, m.seq, game)
    return game




MATCHES = Match.metadata.tables["matches"]
LOCK = select(MATCHES).where(MATCHES.c.id == bindparam("match_id")).with_for_update()


def locked(session: Session, match_id: int) -> Match | None:
    """The match row, locked for update (PostgreSQL; SQLite serialises writers anyway).

    It is read with one Core statement into a `Match` outside the session: its changes are
    written by `save` (one UPDATE), not by the ORM's unit of work."""
    row = session.connection().execute(LOCK, {"match_id": match_id}).one_or_none()
    if row is None:
        return None
    m = Match(**row._mapping)
    m.bot0, m.bot1 = _bot(session, m.bot0_id), _bot(session, m.bot1_id)
    return m


_bots: dict[tuple[int, int], Bot] = {}
BOTS = Bot.metadata.tables["bots"]
READ_BOT = select(BOTS).where(BOTS.c.id == bindparam("bot_id"))


def _bot(session: Session, bot_id: int) -> Bot:
    return bot_of(session.connection(), bot_id)


def bot_of(connection: Connection, bot_id: int) -> Bot:
    """The bot `bot_id` (kept per process once read: its name and kind never change once
    registered), outside any session; NotFound if there is none."""
    key = bind_key(connection.engine, bot_id)
    bot = _bots.get(key)
    if bot is None:
        row = connection.execute(READ_BOT, {"bot_id": bot_id}).one_or_none()
        if row is None:
            raise NotFound(f"no bot with id {bot_id}: register it first")
        bot = Bot(**row._mapping)
        _bots[key] = bot  # (a dict's item assignment is atomic)
    return bot


# The columns of a match that change after it is created (its summary, clocks and record).
CHANGING = ("state", "seq", "to_act", "hand_number", "counter0", "counter1", "winner",
            "schneider", "end_reason", "end_detail", "forfeit_seat", "bank0_ms", "bank1_ms",
            "illegal0", "illegal1", "turn_started_at", "deadline_at", "finished_at")
SAVE = (update(MATCHES)
        .where(MATCHES.c.id == bindparam("match_id"), MATCHES.c.seq == bindparam("read_seq"),
               MATCHES.c.state == RUNNING)
        .values({name: bindparam(name) for name in CHANGING}))


SAVE_LIVE = (update(MATCHES)
             .where(MATCHES.c.id == bindparam("match_id"),
                    MATCHES.c.seq == bindparam("read_seq"), MATCHES.c.state == RUNNING,
                    MATCHES.c.illegal0 == bindparam("read_illegal0"),
                    MATCHES.c.illegal1 == bindparam("read_illegal1"))
             .values({name: bindparam(name) for name in CHANGING}))


def save(session: Session | Connection, m: Match, read_seq: int,
         read_illegal: tuple[int, int] | None = None) -> None:
    """Write the changing columns of `m` (from `locked`, running at `read_seq` then) to its
    row, in the session's transaction; Aborted if the row has moved on since (another
    process, on SQLite, which does not lock the row on reading). With `read_illegal` (a live
    row, not read now) the illegal counts must also be as they were."""
    connection = session.connection() if isinstance(session, Session) else session
    if read_illegal is None:
        values = {name: getattr(m, name) for name in CHANGING}
        saved = connection.execute(SAVE, {"match_id": m.id, "read_seq": read_seq, **values})
    else:
        saved = connection.execute(SAVE_LIVE, save_params(m, read_seq, read_illegal))
    if saved.rowcount != 1:
        raise Aborted(f"match {m.id} changed while acting on it: get the observation again")


def save_params(m: Match, read_seq: int, read_illegal: tuple[int, int]) -> dict[str, object]:
    """The parameters of `SAVE_LIVE` for the live row `m`, read at `read_seq`."""
    return {"match_id": m.id, "read_seq": read_seq, "read_illegal0": read_illegal[0],
            "read_illegal1": read_illegal[1], **{name: getattr(m, name) for name in CHANGING}}
