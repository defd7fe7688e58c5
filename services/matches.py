"""Matches: create, read, observe and act (plain functions over the database and the engine).

The engine decides every transition. A match's game state is rebuilt from its seed and its
action log (`engine.Match.replay`); a per-process cache keeps the rebuilt state between actions
and is checked against the stored sequence number, so several processes (the gRPC server, the
workers) may act on the same database. Each action is appended to the log and the match summary
updated in one transaction; concurrent submits of the same seq are refused (ABORTED) by the
log's unique (match_id, seq) key.

Time and conduct policy (recorded in the match's `end_reason` / `end_detail`):
- Time-out: a remote bot's turn has `move_ms`; time over that is taken from its seat's bank
  (`bank_ms` at the start). When the deadline (turn start + move_ms + bank left) passes without a
  legal action, the seat forfeits the match (`forfeit_timeout`). House bots (played by the
  workers) get `house_move_ms` per move and no bank.
- Disconnect: not penalised by itself. The clock keeps running; a bot that reconnects before its
  deadline is sent the pending turn again, otherwise the time-out rule applies.
- Illegal actions: each is refused (FAILED_PRECONDITION with the rule id) and leaves the state
  unchanged; the seat may try again before its deadline. The `max_illegal`-th illegal action of a
  seat in a match forfeits the match (`forfeit_illegal`).
- The service never plays a move for a seat; a forfeit ends the match with the opponent as
  winner, counters as they stood.
- Restart: when the server starts (`resume_all`), every running match gets a fresh turn clock
  (the downtime is not charged) and pending house turns are announced again.
"""

from __future__ import annotations

import secrets
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, Engine, bindparam, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased, sessionmaker

import engine
from db.models import (
    FINISHED,
    FORFEIT_ILLEGAL,
    FORFEIT_TIMEOUT,
    HOUSE,
    PLAYED,
    RUNNING,
    ActionLog,
    Bot,
    Hand,
    Match,
)
from services import hooks, notify
from services.bots import _sessions
from services.config import Settings, settings
from services.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)

MAX_PAGE = 100
DEFAULT_PAGE = 20
INT64_MAX = 2**63 - 1


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime | None) -> datetime | None:
    """`moment` as an aware UTC datetime (SQLite gives naive ones back)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


# --- the rebuilt game states, per process ---------------------------------------------------
# Keyed by (database engine, match id); the engines are kept so that their ids stay unique.
_cache: dict[tuple[int, int], tuple[int, engine.Match]] = {}


class _Lock:
    """A match's lock; kept only while some thread holds a reference to it."""

    __slots__ = ("lock", "__weakref__")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_locks: weakref.WeakValueDictionary[tuple[int, int], _Lock] = weakref.WeakValueDictionary()
_engines: dict[int, object] = {}
_guard = threading.Lock()
CACHE_SIZE = 5000


def _key(session: Session, match_id: int) -> tuple[int, int]:
    return _bind_key(session.get_bind(), match_id)


def _bind_key(bind: object, match_id: int) -> tuple[int, int]:
    with _guard:
        _engines.setdefault(id(bind), bind)
    return (id(bind), match_id)


@contextmanager
def _reading(bind: Engine) -> Iterator[Connection]:
    """A connection for a read of one statement, in autocommit mode: one statement sees one
    consistent snapshot anyway, and PostgreSQL is spared the BEGIN and ROLLBACK round trips.
    (The SQLite driver runs a lone SELECT outside a transaction already.)"""
    with bind.connect() as connection:
        if bind.dialect.name == "sqlite":
            yield connection
        else:
            yield connection.execution_options(isolation_level="AUTOCOMMIT")


def _engine(sessions: sessionmaker[Session] | None) -> Engine:
    """The engine the session factory is bound to (for plain Core reads, no ORM session)."""
    bind = _sessions(sessions).kw["bind"]
    assert isinstance(bind, Engine)
    return bind


_sqlite_writers: dict[int, threading.Lock] = {}


@contextmanager
def _writing(session: Session) -> Iterator[None]:
    """Serialise this process's write transactions on an SQLite database (one writer at a time
    anyway): no busy-waiting, and no read-to-write upgrade conflicts. Other databases: no-op."""
    bind = session.get_bind()
    if bind.dialect.name != "sqlite":
        yield
        return
    with _guard:
        lock = _sqlite_writers.setdefault(id(bind), threading.Lock())
    with lock:
        yield


@contextmanager
def _match_lock(key: tuple[int, int]) -> Iterator[None]:
    with _guard:
        holder = _locks.get(key)
        if holder is None:
            holder = _locks[key] = _Lock()
    with holder.lock:
        yield


def _game(db: Session | Connection, m: Match | MatchState) -> engine.Match:
    """The engine state of `m` after its `m.seq` actions (from the cache or rebuilt)."""
    key = _bind_key(db.get_bind() if isinstance(db, Session) else db.engine, m.id)
    game = _cached(key, m.seq)
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
    with _guard:
        cached = _cache.get(key)
    if cached is None or cached[0] < m.seq:
        _keep(key, m.seq, game)
    return game


def _cached(key: tuple[int, int], seq: int) -> engine.Match | None:
    """The cached engine state of the match `key` if it is at `seq`."""
    with _guard:
        cached = _cache.get(key)
    return cached[1] if cached is not None and cached[0] == seq else None


def _keep(key: tuple[int, int], seq: int, game: engine.Match) -> None:
    with _guard:
        if game.is_over:
            _cache.pop(key, None)
            return
        if len(_cache) >= CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (seq, game)


def _drop(key: tuple[int, int]) -> None:
    with _guard:
        _cache.pop(key, None)


# --- summary and clocks ------------------------------------------------------------------------
def _summarize(m: Match, game: engine.Match) -> None:
    m.to_act = game.to_act
    m.hand_number = game.hand_number
    m.counter0, m.counter1 = game.counters
    if game.is_over:
        m.state = FINISHED
        m.winner = game.winner
        m.schneider = game.schneider
        m.end_reason = PLAYED
        loser = 1 - (game.winner or 0)
        m.end_detail = (
            f"seat {game.winner} ({m.bot(game.winner or 0).name}) won the match "
            f"{game.counters[0]}:{game.counters[1]}"
            + (" (Schneider-Bummerl, R9.1)" if game.schneider else "")
            + f"; seat {loser} lost"
        )


def bank_left(m: Match | MatchState, seat: int) -> int:
    return m.bank1_ms if seat else m.bank0_ms


def _start_turn(m: Match, now: datetime, config: Settings) -> None:
    """Start the clock of the seat to act (or stop it when the match is over)."""
    if m.state != RUNNING or m.to_act is None:
        m.turn_started_at = None
        m.deadline_at = None
        return
    m.turn_started_at = now
    if m.bot(m.to_act).kind == HOUSE:
        m.deadline_at = now + timedelta(milliseconds=config.house_move_ms)
    else:
        m.deadline_at = now + timedelta(milliseconds=m.move_ms + bank_left(m, m.to_act))


def _charge_time(m: Match, seat: int, now: datetime) -> None:
    """Take the time the seat used over `move_ms` from its bank."""
    started = aware(m.turn_started_at)
    if started is None or m.bot(seat).kind == HOUSE:
        return
    used = int((now - started).total_seconds() * 1000)
    over = max(0, used - m.move_ms)
    if seat:
        m.bank1_ms = max(0, m.bank1_ms - over)
    else:
        m.bank0_ms = max(0, m.bank0_ms - over)


MATCHES = Match.metadata.tables["matches"]
LOCK = select(MATCHES).where(MATCHES.c.id == bindparam("match_id")).with_for_update()


def _locked(session: Session, match_id: int) -> Match | None:
    """The match row, locked for update (PostgreSQL; SQLite serialises writers anyway).

    It is read with one Core statement into a `Match` outside the session: its changes are
    written by `_save` (one UPDATE), not by the ORM's unit of work."""
    row = session.connection().execute(LOCK, {"match_id": match_id}).one_or_none()
    if row is None:
        return None
    m = Match(**row._mapping)
    m.bot0, m.bot1 = _bot(session, m.bot0_id), _bot(session, m.bot1_id)
    return m


_bots: dict[tuple[int, int], Bot] = {}


def _bot(session: Session, bot_id: int) -> Bot:
    """The bot `bot_id` (kept per process once read: a bot never changes once registered)."""
    key = _key(session, bot_id)
    bot = _bots.get(key)
    if bot is None:
        bot = session.get(Bot, bot_id)
        if bot is None:
            raise NotFound(f"no bot with id {bot_id}")
        session.expunge(bot)
        with _guard:
            _bots[key] = bot
    return bot


# The columns of a match that change after it is created (its summary, clocks and record).
CHANGING = ("state", "seq", "to_act", "hand_number", "counter0", "counter1", "winner",
            "schneider", "end_reason", "end_detail", "forfeit_seat", "bank0_ms", "bank1_ms",
            "illegal0", "illegal1", "turn_started_at", "deadline_at", "finished_at")
SAVE = (update(MATCHES)
        .where(MATCHES.c.id == bindparam("match_id"), MATCHES.c.seq == bindparam("read_seq"),
               MATCHES.c.state == RUNNING)
        .values({name: bindparam(name) for name in CHANGING}))


def _save(session: Session, m: Match, read_seq: int) -> None:
    """Write the changing columns of `m` (from `_locked`, running at `read_seq` then) to its
    row, in the session's transaction; Aborted if the row has moved on since (another
    process, on SQLite, which does not lock the row on reading)."""
    values = {name: getattr(m, name) for name in CHANGING}
    saved = session.connection().execute(SAVE, {"match_id": m.id, "read_seq": read_seq, **values})
    if saved.rowcount != 1:
        raise Aborted(f"match {m.id} changed while acting on it: get the observation again")


ADD_ACTION = insert(ActionLog.metadata.tables["actions"])


def _forfeit(m: Match, seat: int, reason: str, detail: str, now: datetime) -> None:
    m.state = FINISHED
    m.winner = 1 - seat
    m.forfeit_seat = seat
    m.end_reason = reason
    m.end_detail = detail
    m.to_act = None
    m.turn_started_at = None
    m.deadline_at = None
    m.finished_at = now


def _after_commit(m: Match, everyone: bool = True) -> None:
    """Wake the streams of the match and of its bots (only the bot to act unless `everyone`),
    and run the hooks."""
    if everyone or m.to_act is None:
        notify.notify(f"match:{m.id}", f"bot:{m.bot0_id}", f"bot:{m.bot1_id}")
    else:
        notify.notify(f"match:{m.id}", f"bot:{m.bot_id(m.to_act)}")
    if m.state == RUNNING and m.to_act is not None and m.bot(m.to_act).kind == HOUSE:
        hooks.fire(hooks.on_turn, m.id, m.to_act, m.seq)
    if m.state == FINISHED:
        hooks.fire(hooks.on_match_end, m.id)


# --- creating and reading ------------------------------------------------------------------
def create_match(
    bot_ids: Sequence[int],
    *,
    profile: str = "soft",
    seed: int | None = None,
    move_ms: int | None = None,
    bank_ms: int | None = None,
    max_illegal: int | None = None,
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
) -> Match:
    """Create a running match: `bot_ids[0]` sits in seat 0, `bot_ids[1]` in seat 1.

    `seed` (random if None) decides the first dealer and every deck (R2). The time control and
    the illegal-action limit default to the settings. Raises InvalidArgument or NotFound.
    """
    config = config or settings()
    if len(bot_ids) != 2 or bot_ids[0] == bot_ids[1]:
        raise InvalidArgument(f"a match needs exactly two different bot ids, got {list(bot_ids)}")
    try:
        profile = engine.Profile(profile or "soft").value
    except ValueError:
        raise InvalidArgument(f"unknown profile {profile!r}: 'soft' or 'sharp' (R9)") from None
    if seed is None:
        seed = secrets.randbits(62)
    elif not 0 <= seed <= INT64_MAX:
        raise InvalidArgument(f"seed must be between 0 and {INT64_MAX}")
    move_ms = move_ms or config.move_ms
    bank_ms = config.bank_ms if bank_ms is None else bank_ms
    max_illegal = max_illegal or config.max_illegal
    if move_ms < 1 or bank_ms < 0 or max_illegal < 1:
        raise InvalidArgument("time control: move_ms >= 1, bank_ms >= 0, max_illegal >= 1")
    game = engine.Match(seed, profile)
    now = utcnow()
    with _sessions(sessions)() as session, _writing(session), session.begin():
        bots: list[Bot] = []
        for bot_id in bot_ids:
            bot = session.get(Bot, bot_id)
            if bot is None:
                raise NotFound(f"no bot with id {bot_id}: register it first")
            bots.append(bot)
        m = Match(
            bot0_id=bot_ids[0], bot1_id=bot_ids[1], profile=profile, seed=seed,
            state=RUNNING, seq=0, move_ms=move_ms, bank_ms=bank_ms, max_illegal=max_illegal,
            bank0_ms=bank_ms, bank1_ms=bank_ms, illegal0=0, illegal1=0, created_at=now,
            counter0=7, counter1=7, schneider=False,
        )
        m.bot0, m.bot1 = bots[0], bots[1]
        _summarize(m, game)
        _start_turn(m, now, config)
        session.add(m)
        session.flush()
        session.add(Hand(match_id=m.id, number=0, dealer=game.hand.dealer, first_seq=0))
    _keep(_key_for(sessions, m.id), 0, game)
    _after_commit(m)
    return m


def _key_for(sessions: sessionmaker[Session] | None, match_id: int) -> tuple[int, int]:
    with _sessions(sessions)() as session:
        return _key(session, match_id)


def get_match(match_id: int, *, sessions: sessionmaker[Session] | None = None) -> Match:
    with _sessions(sessions)() as session:
        m = session.get(Match, match_id)
        if m is None:
            raise NotFound(f"no match with id {match_id}")
        return m


def match_hands(
    match_id: int, *, sessions: sessionmaker[Session] | None = None
) -> tuple[Match, list[Hand], list[ActionLog]]:
    """The match, its hands in order and its whole action log (public information)."""
    with _sessions(sessions)() as session:
        m = session.get(Match, match_id)
        if m is None:
            raise NotFound(f"no match with id {match_id}")
        hands = list(session.scalars(
            select(Hand).where(Hand.match_id == match_id).order_by(Hand.number)))
        actions = list(session.scalars(
            select(ActionLog).where(ActionLog.match_id == match_id).order_by(ActionLog.seq)))
        return m, hands, actions


def match_actions(
    match_id: int, from_seq: int = 0, *, sessions: sessionmaker[Session] | None = None
) -> tuple[Match, list[ActionLog], list[Hand]]:
    """The match, its actions from `from_seq` on, and its hands (for spectators)."""
    with _sessions(sessions)() as session:
        m = session.get(Match, match_id)
        if m is None:
            raise NotFound(f"no match with id {match_id}")
        actions = list(session.scalars(
            select(ActionLog)
            .where(ActionLog.match_id == match_id, ActionLog.seq >= from_seq)
            .order_by(ActionLog.seq)))
        hands = list(session.scalars(
            select(Hand).where(Hand.match_id == match_id).order_by(Hand.number)))
        return m, actions, hands


def list_matches(
    *,
    state: str | None = None,
    bot_id: int | None = None,
    page_size: int = DEFAULT_PAGE,
    page_token: str = "",
    sessions: sessionmaker[Session] | None = None,
) -> tuple[list[Match], str]:
    """Matches newest first, filtered; returns a page and the token of the next ('' if none)."""
    if state not in (None, RUNNING, FINISHED):
        raise InvalidArgument(f"unknown match state {state!r}: 'running' or 'finished'")
    page_size = page_size or DEFAULT_PAGE
    if not 1 <= page_size <= MAX_PAGE:
        raise InvalidArgument(f"page_size must be 1-{MAX_PAGE}")
    query = select(Match).order_by(Match.id.desc()).limit(page_size + 1)
    if page_token:
        try:
            before = int(page_token)
        except ValueError:
            raise InvalidArgument(
                "bad page_token: pass the next_page_token of the previous page") from None
        query = query.where(Match.id < before)
    if state:
        query = query.where(Match.state == state)
    if bot_id:
        query = query.where(or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))
    with _sessions(sessions)() as session:
        rows = list(session.scalars(query).unique())
    next_token = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_token


def _check_seat(m: Match, seat: int, bot_id: int | None) -> None:
    if seat not in (0, 1):
        raise InvalidArgument(f"seat must be 0 or 1, not {seat}")
    if bot_id is not None and m.bot_id(seat) != bot_id:
        raise PermissionDenied(
            f"bot {bot_id} does not play seat {seat} of match {m.id}: "
            f"use the token of bot {m.bot_id(seat)}"
        )


def get_observation(
    match_id: int,
    seat: int,
    *,
    bot_id: int | None = None,
    sessions: sessionmaker[Session] | None = None,
) -> tuple[engine.Observation, Match]:
    """What `seat` may know now (R10), and the match row (seq, deadline).

    With `bot_id` (a remote caller), only that bot's own seat may be observed.
    """
    with _sessions(sessions)() as session:
        m = session.get(Match, match_id)
        if m is None:
            raise NotFound(f"no match with id {match_id}")
        _check_seat(m, seat, bot_id)
        key = _key(session, match_id)
        with _match_lock(key):
            game = _game(session, m)
            return game.observe(seat), m


def observe_match(
    m: Match | MatchState, seat: int, *, sessions: sessionmaker[Session] | None = None
) -> engine.Observation:
    """`seat`'s observation of the match row `m` as loaded (at `m.seq`); no permission check.

    Uses the cached state when it is at `m.seq` (no database query), else rebuilds it.
    """
    bind = _engine(sessions)
    key = _bind_key(bind, m.id)
    with _match_lock(key):
        game = _cached(key, m.seq)
        if game is None:
            with _reading(bind) as connection:
                game = _game(connection, m)
        return game.observe(seat)


@dataclass(frozen=True)
class MatchState:
    """The columns of a match that a Play stream needs each time it looks (a plain Core read,
    no ORM objects), with the kinds of its two bots."""

    id: int
    bot0_id: int
    bot1_id: int
    profile: str
    seed: int
    state: str
    seq: int
    to_act: int | None
    hand_number: int
    winner: int | None
    deadline_at: datetime | None
    bank0_ms: int
    bank1_ms: int
    kind0: str
    kind1: str

    def seat_of(self, bot_id: int) -> int | None:
        """The seat `bot_id` plays in this match (seat 0 if it plays both), or None."""
        if self.bot0_id == bot_id:
            return 0
        if self.bot1_id == bot_id:
            return 1
        return None

    def house_to_act(self) -> bool:
        """A house bot (moved by the workers) is to act."""
        if self.state != RUNNING or self.to_act is None:
            return False
        return (self.kind1 if self.to_act else self.kind0) == HOUSE


def _match_states_query():  # type: ignore[no-untyped-def]
    """SELECT the `MatchState` columns of the matches of bot :bot_id that are running or
    among :also (built once: building a statement costs more than running it)."""
    bot0, bot1 = aliased(Bot), aliased(Bot)
    return (
        select(Match.id, Match.bot0_id, Match.bot1_id, Match.profile, Match.seed, Match.state,
               Match.seq, Match.to_act, Match.hand_number, Match.winner, Match.deadline_at,
               Match.bank0_ms, Match.bank1_ms, bot0.kind.label("kind0"),
               bot1.kind.label("kind1"))
        .join(bot0, bot0.id == Match.bot0_id)
        .join(bot1, bot1.id == Match.bot1_id)
        .where(or_(Match.bot0_id == bindparam("bot_id"), Match.bot1_id == bindparam("bot_id")))
        .where(or_(Match.state == RUNNING, Match.id.in_(bindparam("also", expanding=True))))
        .order_by(Match.id)
    )


MATCH_STATES = _match_states_query()


def match_states_of(
    bot_id: int, also: Sequence[int] = (), *, sessions: sessionmaker[Session] | None = None
) -> list[MatchState]:
    """Like `running_matches_of`, as light `MatchState` rows (what a Play stream polls)."""
    with _reading(_engine(sessions)) as connection:
        rows = connection.execute(MATCH_STATES, {"bot_id": bot_id, "also": list(also)})
        return [MatchState(**row._mapping) for row in rows]


# --- acting --------------------------------------------------------------------------------
@dataclass(frozen=True)
class SubmitResult:
    seq: int  # the seq the action got in the log
    duplicate: bool  # a retry of an applied submit (same request_id)
    match: Match  # the match after the action


def submit_action(
    match_id: int,
    seat: int,
    action: engine.Action | str,
    *,
    expected_seq: int,
    request_id: str | None = None,
    bot_id: int | None = None,
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
) -> SubmitResult:
    """Apply `action` for `seat` in match `match_id`, after `expected_seq` actions.

    - `request_id` makes the call idempotent: a retry with the same id returns the first
      result (`duplicate=True`) and applies nothing.
    - `expected_seq` must equal the match's seq, else Aborted (stale: re-read and retry).
    - `bot_id` is the calling bot (remote callers); None means a trusted caller (the workers).

    Raises InvalidArgument, NotFound, PermissionDenied, Aborted, or FailedPrecondition (with
    the rule id: not this seat's turn R3.1, match over R9.1, an illegal action's rule, a
    time-out). Follows the policy of this module's docstring on time-outs and illegal actions.
    """
    config = config or settings()
    if isinstance(action, str):
        try:
            action = engine.Action.from_text(action)
        except ValueError as e:
            raise InvalidArgument(str(e)) from None
    if request_id is not None and len(request_id) > 64:
        raise InvalidArgument("request_id is at most 64 characters")
    request_id = request_id or None
    factory = _sessions(sessions)
    # announced after the lock is released (hooks may submit): (match, to both bots?)
    committed: list[tuple[Match, bool]] = []
    try:
        with factory() as session:
            key = _key(session, match_id)
            with _match_lock(key), _writing(session):
                return _submit(session, key, match_id, seat, action, expected_seq, request_id,
                               bot_id, config, committed)
    finally:
        for m, everyone in committed:
            _after_commit(m, everyone)


def _submit(
    session: Session,
    key: tuple[int, int],
    match_id: int,
    seat: int,
    action: engine.Action,
    expected_seq: int,
    request_id: str | None,
    bot_id: int | None,
    config: Settings,
    committed: list[tuple[Match, bool]],
) -> SubmitResult:
    now = utcnow()
    m = _locked(session, match_id)
    if m is None:
        raise NotFound(f"no match with id {match_id}")
    _check_seat(m, seat, bot_id)
    # A retry of an applied submit names an older seq (or the match is over since); a
    # request_id reused at the current seq is caught by the unique index at commit.
    if request_id is not None and (expected_seq != m.seq or m.state != RUNNING):
        duplicate = _duplicate(session, m, seat, action, request_id)
        if duplicate is not None:
            return duplicate
    if m.state != RUNNING:
        raise FailedPrecondition(f"R9.1 match {m.id} is over: {m.end_detail}", rule="R9.1")
    deadline = aware(m.deadline_at)
    if deadline is not None and now > deadline and m.to_act == seat:
        _timeout(m, now)
        _save(session, m, m.seq)
        session.commit()
        _drop(key)
        committed.append((m, True))
        raise FailedPrecondition(f"too late: {m.end_detail}", rule="R11.1")
    if expected_seq != m.seq:
        raise Aborted(
            f"stale expected_seq {expected_seq}: match {m.id} is at seq {m.seq}; "
            "get the observation again and act on it")
    if m.to_act != seat:
        raise FailedPrecondition(
            f"R3.1 it is not seat {seat}'s turn: seat {m.to_act} is to act", rule="R3.1")
    game = _game(session, m)
    try:
        result = game.apply(seat, action)
    except engine.IllegalActionError as e:
        count = (m.illegal1 if seat else m.illegal0) + 1
        if seat:
            m.illegal1 = count
        else:
            m.illegal0 = count
        left = m.max_illegal - count
        message = (f"{e} (illegal action {count} of this seat in this match; "
                   f"at {m.max_illegal} the seat forfeits the match)")
        if left <= 0:
            _forfeit(m, seat, FORFEIT_ILLEGAL,
                     f"seat {seat} ({m.bot(seat).name}) forfeited: {count} illegal actions "
                     f"(policy: {m.max_illegal} illegal actions forfeit the match); last: {e}",
                     now)
            message = f"{e}; seat {seat} forfeits the match ({count} illegal actions)"
        _save(session, m, m.seq)
        session.commit()
        if left <= 0:
            _drop(key)
            committed.append((m, True))
        raise FailedPrecondition(message, rule=e.rule, illegal_left=max(0, left)) from None
    seq = m.seq
    try:  # the cached game has moved on: drop it unless the commit succeeds
        session.connection().execute(ADD_ACTION, {
            "match_id": m.id, "seq": seq, "seat": seat, "action": str(action),
            "request_id": request_id, "created_at": now})
        m.seq = seq + 1
        if result is not None:
            hand = session.scalar(select(Hand).where(
                Hand.match_id == m.id, Hand.number == len(game.results) - 1))
            if hand is not None:
                hand.winner = result.winner
                hand.game_points = result.game_points
                hand.reason = result.reason.value
                hand.points0, hand.points1 = result.points
                hand.tricks0, hand.tricks1 = result.tricks
                hand.last_seq = seq
                hand.finished_at = now
            if not game.is_over:
                session.add(Hand(match_id=m.id, number=game.hand_number, dealer=game.hand.dealer,
                                 first_seq=seq + 1))
        _charge_time(m, seat, now)
        _summarize(m, game)
        if game.is_over:
            m.finished_at = now
        _start_turn(m, now, config)
        _save(session, m, seq)
        session.commit()
    except IntegrityError:
        session.rollback()
        _drop(key)
        if request_id is not None:
            m = session.get(Match, match_id, populate_existing=True) or m
            duplicate = _duplicate(session, m, seat, action, request_id)
            if duplicate is not None:
                return duplicate
        raise Aborted(f"another submit for seq {seq} of match {m.id} won: get the observation "
                      "again") from None
    except BaseException:
        _drop(key)
        raise
    _keep(key, m.seq, game)
    committed.append((m, result is not None or game.is_over))
    return SubmitResult(seq, False, m)


def _duplicate(session: Session, m: Match, seat: int, action: engine.Action,
               request_id: str) -> SubmitResult | None:
    """The first result of the submit with this request_id, if it was applied."""
    done = session.scalar(select(ActionLog).where(
        ActionLog.match_id == m.id, ActionLog.request_id == request_id))
    if done is None:
        return None
    if done.seat != seat or done.action != str(action):
        raise InvalidArgument(
            f"request_id {request_id!r} was already used for '{done.action}' by seat "
            f"{done.seat}: use a new request_id for a new action")
    return SubmitResult(done.seq, True, m)


def _timeout(m: Match, now: datetime) -> None:
    seat = m.to_act if m.to_act is not None else 0
    bot = m.bot(seat)
    if bot.kind == HOUSE:
        allowed = "its house move time"
    else:
        allowed = f"{m.move_ms} ms per move + {bank_left(m, seat)} ms bank"
    if seat:
        m.bank1_ms = 0
    else:
        m.bank0_ms = 0
    _forfeit(m, seat, FORFEIT_TIMEOUT,
             f"seat {seat} ({bot.name}) forfeited on time at seq {m.seq}: no legal action "
             f"within {allowed} (policy: a time-out forfeits the match)", now)


def enforce_deadlines(
    *, now: datetime | None = None, sessions: sessionmaker[Session] | None = None
) -> list[int]:
    """Forfeit every running match whose seat to act is past its deadline; returns their ids.

    The gRPC server runs this a few times a second; any process may call it.
    """
    now = now or utcnow()
    factory = _sessions(sessions)
    with factory() as session:
        due = list(session.scalars(select(Match.id).where(
            Match.state == RUNNING, Match.deadline_at < now)))
    done = []
    for match_id in due:
        with factory() as session:
            key = _key(session, match_id)
            with _match_lock(key), _writing(session):
                m = _locked(session, match_id)
                deadline = aware(m.deadline_at) if m else None
                if m is None or m.state != RUNNING or deadline is None or deadline >= now:
                    continue
                _timeout(m, now)
                try:
                    _save(session, m, m.seq)
                except Aborted:  # it moved on meanwhile (another process): not due any more
                    continue
                session.commit()
                _drop(key)
        _after_commit(m)
        done.append(match_id)
    return done


def resume_all(
    *, sessions: sessionmaker[Session] | None = None, config: Settings | None = None
) -> int:
    """On start-up: give every running match a fresh turn clock and re-announce house turns.

    Returns the number of running matches. Their state is rebuilt from seed + log on demand.
    """
    config = config or settings()
    now = utcnow()
    with _sessions(sessions)() as session, _writing(session), session.begin():
        running = list(session.scalars(select(Match).where(Match.state == RUNNING)).unique())
        for m in running:
            _start_turn(m, now, config)
    for m in running:
        _after_commit(m)
    return len(running)


def running_matches_of(
    bot_id: int, also: Sequence[int] = (), *, sessions: sessionmaker[Session] | None = None
) -> list[Match]:
    """The running matches `bot_id` plays in, plus the matches `also` (whatever their state)."""
    query = select(Match).where(or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))
    if also:
        query = query.where(or_(Match.state == RUNNING, Match.id.in_(list(also))))
    else:
        query = query.where(Match.state == RUNNING)
    with _sessions(sessions)() as session:
        return list(session.scalars(query.order_by(Match.id)).unique())


def finished_hands(
    match_id: int, from_number: int, *, sessions: sessionmaker[Session] | None = None
) -> list[Hand]:
    """The finished hands of a match numbered `from_number` or more, in order."""
    with _sessions(sessions)() as session:
        return list(session.scalars(select(Hand).where(
            Hand.match_id == match_id, Hand.number >= from_number, Hand.winner.is_not(None))
            .order_by(Hand.number)))
