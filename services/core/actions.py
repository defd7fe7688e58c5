"""Acting on matches (the one way a running match changes): submitting actions, time-outs,
deadlines, resuming after a restart, and an operator's abort.

Each action is appended to the match's action log and the match summary updated in one
transaction; concurrent submits of the same seq are refused (ABORTED) by the log's unique
(match_id, seq) key.

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

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.base import aware, utcnow
from db.models import (
    ABORTED,
    ABORTED_BY_OPERATOR,
    FORFEIT_ILLEGAL,
    FORFEIT_TIMEOUT,
    HOUSE,
    RESIGNED,
    RUNNING,
    ActionLog,
    Match,
    Refusal,
)
from db.settings import Settings, settings
from services.core import appends, breaker, committers, metrics
from services.core.announce import after_commit, announce, hand_over
from services.core.cache import (
    bind_key,
    cached_game,
    drop,
    forget_rows,
    keep,
    keep_finished,
    keep_row,
    live_row,
    match_lock,
    session_key,
    try_lock,
)
from services.core.clocks import bank_left, forfeit, start_turn
from services.core.connections import bound_engine, factory_of, reading, site_of, writing
from services.core.errors import Aborted, FailedPrecondition, InvalidArgument, NotFound
from services.core.matches import check_seat
from services.core.store import MATCHES, game_of, locked, save


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

    - `request_id` makes the call idempotent: a retry by the same seat with the same id
      returns the first result (`duplicate=True`) and applies nothing. Ids are per seat: the
      other seat's use of the same id changes nothing for this one.
    - `expected_seq` must equal the match's seq, else Aborted (stale: re-read and retry).
    - `bot_id` is the calling bot (remote callers); None means a trusted caller (the workers).

    Raises InvalidArgument, NotFound, PermissionDenied, Aborted, or FailedPrecondition (with
    the rule id: not this seat's turn R3.1, match over R9.1, an illegal action's rule, a
    time-out). Follows the policy of this module's docstring on time-outs and illegal actions.
    """
    started = time.perf_counter()
    config = config or settings()
    if isinstance(action, str):
        try:
            action = engine.Action.from_text(action)
        except ValueError as e:
            raise InvalidArgument(str(e)) from None
    if request_id is not None and len(request_id) > 64:
        raise InvalidArgument("request_id is at most 64 characters")
    request_id = request_id or None
    factory = factory_of(sessions)
    bind = bound_engine(sessions)
    site = site_of(bind)
    key = bind_key(bind, match_id)
    # announced after the lock is released: (match, to both bots?, the action appended)
    committed: list[tuple[Match, bool, tuple[int, str] | None]] = []
    try:
        with match_lock(key):
            applied = _apply_live(key, seat, action, expected_seq, request_id, bot_id, config)
            if applied is not None:
                try:
                    ok = committers.commit_one(bind, applied)
                except BaseException:
                    drop(key)
                    raise
                if ok:
                    return _applied(applied, committed)
                drop(key)  # read afresh by `_submit`
            with factory() as session, writing(session):
                return _submit(session, key, match_id, seat, action, expected_seq, request_id,
                               bot_id, config, committed)
    finally:
        for m, everyone, appended in committed:
            after_commit(site, m, everyone, appended)
        metrics.action_seconds(started)


def submit_live(
    match_id: int,
    seat: int,
    action: engine.Action,
    *,
    expected_seq: int,
    request_id: str | None,
    bot_id: int,
    site: str,
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
    settled: Callable[[SubmitResult | None | BaseException], object] | None = None,
) -> Future[SubmitResult | None] | asyncio.Future[SubmitResult | None] | bool | None:
    """`submit_action`'s fast path without waiting (for the event loop): if the match's lock
    is free and the action is an ordinary one at the live row's seq (see `_apply_live`), apply
    it and hand it to the group commit. The future gives the result once it is committed (and
    announced), None if the commit was refused (then call `submit_action`, which reads the row
    and answers exactly as it would have alone), or the database's error. None: call
    `submit_action`.

    With `loop` (the running event loop, from which this is called) the future is that
    loop's, and the commit is finished and announced there (one wake-up of the loop per
    batch); without it, a thread's future, finished on the committer's thread. With `loop`
    and `settled`, no future: `settled` is called on the loop with what the future would
    have given (its result or its error), right after the announcement, and this returns
    True (an asyncio future's done callback costs a future and a turn of the loop per
    action: a Play stream's answers)."""
    started = time.perf_counter()
    config = config or settings()
    if request_id is not None and len(request_id) > 64:
        return None
    bind = bound_engine(sessions)
    key = bind_key(bind, match_id)
    holder = try_lock(key)
    if holder is None:
        return None
    try:
        applied = _apply_live(key, seat, action, expected_seq, request_id or None, bot_id,
                              config)
        if applied is None:
            holder.lock.release()
            return None
        outcome: Future[SubmitResult | None] | asyncio.Future[SubmitResult | None] | None
        if settled is not None and loop is not None:
            outcome = None
        else:
            outcome = loop.create_future() if loop is not None else Future()
        if isinstance(outcome, Future):
            # Not cancellable: a caller that stops waiting must not stop the commit, which
            # goes on and is finished here all the same.
            outcome.set_running_or_notify_cancel()

        def committed_or_not(done: committers.Outcome) -> committers.Then:
            """On the committer's thread: settle the live row, the cache and the lock; the
            answer, the announcement and the hooks follow on the caller's loop."""
            committed: list[tuple[Match, bool, tuple[int, str] | None]] = []
            result: SubmitResult | None | BaseException = None
            try:
                if done is True:
                    result = _applied(applied, committed)
                else:
                    drop(key)
                    result = done if isinstance(done, BaseException) else None
            except BaseException as e:  # noqa: BLE001  (the caller gets the error)
                drop(key)
                result = e
            finally:
                holder.lock.release()

            def answer() -> None:
                # An asyncio future is cancelled when its waiter is (a Play stream that
                # ended): the commit is finished and announced all the same.
                if outcome is not None and not outcome.done():
                    if isinstance(result, BaseException):
                        outcome.set_exception(result)
                    else:
                        outcome.set_result(result)
                for m, everyone, appended in committed:
                    announce(site, m, everyone, appended)
                    hand_over(site, m)
                metrics.action_seconds(started)
                if settled is not None:  # (a future's callbacks, too, ran after the above)
                    settled(result)

            return answer

        committers.committer(bind).submit(applied, committed_or_not, loop)
    except BaseException:
        drop(key)
        holder.lock.release()
        raise
    return True if outcome is None else outcome


def _apply_live(
    key: tuple[int, int],
    seat: int,
    action: engine.Action,
    expected_seq: int,
    request_id: str | None,
    bot_id: int | None,
    config: Settings,
) -> appends.Applied | None:
    """The fast path, under the match's lock: a legal action on time at the seq this process
    last committed for the match, checked against the live row and game in memory and applied
    to both (to be committed by `services.core.committers`: the append and the update of the match
    row, guarded by its seq, state and illegal counts). None when anything is out of the
    ordinary (nothing changed): then `_submit` reads the row and decides, as it always did."""
    m = live_row(key, expected_seq)
    game = cached_game(key, expected_seq) if m is not None else None
    if m is None or game is None or m.state != RUNNING or m.to_act != seat:
        return None
    if bot_id is not None and m.bot_id(seat) != bot_id:
        return None
    now = utcnow()
    deadline = aware(m.deadline_at)
    if deadline is not None and now > deadline:
        return None
    try:
        result = game.apply(seat, action)
    except engine.IllegalActionError:
        return None  # counted and answered by `_submit`, on the unchanged game
    # The game object is now past an action not yet committed: out of the cache until the
    # commit puts it back (`_applied`), so no reader can take it for the committed seq.
    drop(key)
    read_illegal = (m.illegal0, m.illegal1)
    used = appends.advance(m, seat, game, expected_seq, now, config)
    return appends.Applied(key, m, game, seat, action, expected_seq, request_id, now, result,
                           read_illegal, used)


def _applied(p: appends.Applied,
             committed: list[tuple[Match, bool, tuple[int, str] | None]]) -> SubmitResult:
    """`p` is committed: keep its row and game live (or, when it ended the match, its final
    ones for the streams' reports), announce it (via `committed`)."""
    keep(p.key, p.m.seq, p.game)
    keep_row(p.key, p.m)
    if p.game.is_over:
        keep_finished(p.key, p.m, p.game)
    committed.append((p.m, p.result is not None or p.game.is_over, (p.seat, str(p.action))))
    metrics.ACTIONS_APPLIED.inc()
    return SubmitResult(p.seq, False, p.m)


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
    committed: list[tuple[Match, bool, tuple[int, str] | None]],
) -> SubmitResult:
    now = utcnow()
    m = locked(session, match_id)
    if m is None:
        raise NotFound(f"no match with id {match_id}")
    check_seat(m, seat, bot_id)
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
        save(session, m, m.seq)
        session.commit()
        drop(key)
        committed.append((m, True, None))
        raise FailedPrecondition(f"too late: {m.end_detail}", rule="R11.1")
    if expected_seq != m.seq:
        raise Aborted(
            f"stale expected_seq {expected_seq}: match {m.id} is at seq {m.seq}; "
            "get the observation again and act on it")
    if m.to_act != seat:
        raise FailedPrecondition(
            f"R3.1 it is not seat {seat}'s turn: seat {m.to_act} is to act", rule="R3.1")
    game = game_of(session, m)
    try:
        result = game.apply(seat, action)
    except engine.IllegalActionError as e:
        metrics.ILLEGAL_ACTIONS.inc()
        count = (m.illegal1 if seat else m.illegal0) + 1
        if seat:
            m.illegal1 = count
        else:
            m.illegal0 = count
        left = m.max_illegal - count
        message = (f"{e} (illegal action {count} of this seat in this match; "
                   f"at {m.max_illegal} the seat forfeits the match)")
        if left <= 0:
            forfeit(m, seat, FORFEIT_ILLEGAL,
                     f"seat {seat} ({m.seat_name(seat)}) forfeited: {count} illegal actions "
                     f"(policy: {m.max_illegal} illegal actions forfeit the match); last: {e}",
                     now)
            message = f"{e}; seat {seat} forfeits the match ({count} illegal actions)"
        _refused(session, m, seat, action, e, now)
        save(session, m, m.seq)
        session.commit()
        keep_row(key, m)
        if left <= 0:
            drop(key)
            committed.append((m, True, None))
        raise FailedPrecondition(message, rule=e.rule, illegal_left=max(0, left)) from None
    seq = m.seq
    try:  # the cached game has moved on: drop it unless the commit succeeds
        used = appends.advance(m, seat, game, seq, now, config)
        applied = appends.Applied(key, m, game, seat, action, seq, request_id, now, result,
                                  (m.illegal0, m.illegal1), used)
        appends.write_rows(session.connection(), [applied])
        save(session, m, seq)
        session.commit()
    except IntegrityError:
        session.rollback()
        drop(key)
        if request_id is not None:
            m = session.get(Match, match_id, populate_existing=True) or m
            duplicate = _duplicate(session, m, seat, action, request_id)
            if duplicate is not None:
                return duplicate
        raise Aborted(f"another submit for seq {seq} of match {m.id} won: get the observation "
                      "again") from None
    except BaseException:
        drop(key)
        raise
    return _applied(applied, committed)


def _refused(session: Session, m: Match, seat: int, action: engine.Action,
             error: engine.IllegalActionError, now: datetime) -> None:
    """Record a refused action with its rule (the public record the dashboard shows)."""
    session.add(Refusal(match_id=m.id, seq=m.seq, seat=seat, action=str(action)[:40],
                        rule=error.rule[:10] or None, message=str(error)[:300],
                        created_at=now))


def _duplicate(session: Session, m: Match, seat: int, action: engine.Action,
               request_id: str) -> SubmitResult | None:
    """The first result of `seat`'s submit with this request_id, if it was applied.

    A request id is its seat's own (the log's unique index is (match, seat, request id)):
    the other seat's ids are never looked at, so no id of one seat can block, answer for or
    be refused to the other (issue 44)."""
    done = session.scalar(select(ActionLog).where(
        ActionLog.match_id == m.id, ActionLog.seat == seat, ActionLog.request_id == request_id))
    if done is None:
        return None
    if done.action != str(action):
        raise InvalidArgument(
            f"request_id {request_id!r} was already used for '{done.action}' by this seat: "
            "use a new request_id for a new action")
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
    forfeit(m, seat, FORFEIT_TIMEOUT,
             f"seat {seat} ({m.seat_name(seat)}) forfeited on time at seq {m.seq}: no legal action "
             f"within {allowed} (policy: a time-out forfeits the match)", now)


DUE = select(MATCHES.c.id).where(MATCHES.c.state == RUNNING,
                                 MATCHES.c.deadline_at < bindparam("now"))


def enforce_deadlines(
    *, now: datetime | None = None, sessions: sessionmaker[Session] | None = None
) -> list[int]:
    """Forfeit every running match whose seat to act is past its deadline; returns their ids.

    The gRPC server runs this a few times a second; any process may call it. A round that a
    database outage interrupted (the breaker opened since it began) forfeits nothing: a seat's
    time that ran out while its answers were refused is not its fault, and the clocks are given
    afresh when the database is back (`resume_all`, run by the server's health check).
    """
    now = now or utcnow()
    factory = factory_of(sessions)
    bind = bound_engine(sessions)
    site = site_of(bind)
    down = breaker.of(bind)
    openings = down.openings
    with reading(bind) as connection:  # a plain read: a few times a second, mostly of nothing
        due = list(connection.execute(DUE, {"now": now}).scalars())
    done = []
    for match_id in due:
        with factory() as session:
            key = session_key(session, match_id)
            with match_lock(key), writing(session):
                m = locked(session, match_id)
                deadline = aware(m.deadline_at) if m else None
                if m is None or m.state != RUNNING or deadline is None or deadline >= now:
                    continue
                if not down.steady(openings):
                    break
                _timeout(m, now)
                try:
                    save(session, m, m.seq)
                except Aborted:  # it moved on meanwhile (another process): not due any more
                    continue
                session.commit()
                drop(key)
        after_commit(site, m)
        done.append(match_id)
    return done


def resume_all(
    *, sessions: sessionmaker[Session] | None = None, config: Settings | None = None
) -> int:
    """On start-up, and when the database is back after an outage: give every running match a
    fresh turn clock (the downtime is not charged) and re-announce its turn (the house turns'
    hooks too).

    Returns the number of running matches. Their state is rebuilt from seed + log on demand.
    """
    config = config or settings()
    now = utcnow()
    site = site_of(bound_engine(sessions))
    forget_rows()
    with factory_of(sessions)() as session, writing(session), session.begin():
        running = list(session.scalars(select(Match).where(Match.state == RUNNING)).unique())
        for m in running:
            start_turn(m, now, config)
    for m in running:
        after_commit(site, m)
    return len(running)


def abort_match(match_id: int, reason: str, *,
                sessions: sessionmaker[Session] | None = None) -> Match:
    """Abort running match `match_id` for `reason` (an operator's): state 'aborted', end reason
    'aborted', no winner, `rated` false; its bots' streams and watchers are told.
    FailedPrecondition if it is not running."""
    factory = factory_of(sessions)
    with factory() as session:
        key = session_key(session, match_id)
        with match_lock(key), writing(session):
            m = locked(session, match_id)
            if m is None:
                raise NotFound(f"no match with id {match_id}")
            if m.state != RUNNING:
                raise FailedPrecondition(
                    f"match {match_id} is {m.state}, not running: only a running match can be "
                    "aborted", rule="R9.1")
            read_seq, now = m.seq, utcnow()
            m.state = ABORTED
            m.end_reason = ABORTED_BY_OPERATOR
            m.end_detail = f"aborted by an operator at seq {m.seq}: {reason}"
            m.winner = None
            m.to_act = None
            m.turn_started_at = None
            m.deadline_at = None
            m.finished_at = now
            save(session, m, read_seq)
            session.execute(update(Match).where(Match.id == match_id).values(rated=False),
                            execution_options={"synchronize_session": False})
            session.commit()
            drop(key)
            m.rated = False
            site = site_of(bound_engine(sessions))
    after_commit(site, m)
    return m


def resign_match(match_id: int, seat: int, detail: str, *,
                 sessions: sessionmaker[Session] | None = None) -> Match:
    """`seat` resigns running match `match_id` (a person's casual game: the caller checks):
    the other seat wins, end reason 'resigned', counters as they stood. FailedPrecondition
    (R9.1) if the match is not running."""
    factory = factory_of(sessions)
    with factory() as session:
        key = session_key(session, match_id)
        with match_lock(key), writing(session):
            m = locked(session, match_id)
            if m is None:
                raise NotFound(f"no match with id {match_id}")
            if m.state != RUNNING:
                raise FailedPrecondition(
                    f"match {match_id} is {m.state}, not running: nothing to resign",
                    rule="R9.1")
            read_seq = m.seq
            forfeit(m, seat, RESIGNED, f"seat {seat} resigned at seq {m.seq}: {detail}",
                    utcnow())
            save(session, m, read_seq)
            session.commit()
            drop(key)
            site = site_of(bound_engine(sessions))
    after_commit(site, m)
    return m
