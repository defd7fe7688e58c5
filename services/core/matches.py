"""Matches: creating, reading, listing and observing them (plain functions over the database
and the engine). Actions are submitted through `services.core.actions`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from sqlalchemy import (
    Connection,
    String,
    bindparam,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased, sessionmaker

import engine
from db import presence
from db.base import utcnow
from db.models import (
    ABORTED,
    ARCHIVE_RECORDS,
    ARCHIVE_TABLE,
    FINISHED,
    ORIGIN_LADDER,
    ORIGIN_MANUAL,
    ORIGIN_TEST,
    ORIGINS,
    REMOTE,
    RUNNING,
    ActionArchive,
    ActionLog,
    Bot,
    Hand,
    Match,
    bot_named,
)
from db.pairs import PLAYING, DuplicatePair
from db.presence import PAIRING
from db.ratings import LadderMatch
from db.settings import Settings, settings
from services.core.announce import after_commit
from services.core.bounds import MAX_ILLEGAL, MAX_TIME_MS, MIN_MOVE_MS, MOVE_NOTE, in_range
from services.core.cache import bind_key, cached_game, keep, keep_row, match_lock, session_key
from services.core.clocks import start_turn, summarize
from services.core.connections import (
    autocommit,
    bound_engine,
    factory_of,
    reading,
    site_of,
    writing,
)
from services.core.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    quote,
)
from services.core.store import bot_of, game_of
from services.core.values import MatchState

MATCHES = Match.metadata.tables["matches"]
BOTS = Bot.metadata.tables["bots"]
VERSIONS = ("version0", "version1")
MATCH_COLUMNS = [column.name for column in MATCHES.columns if column.name != "id"]


def _seat_version(seat: int):  # type: ignore[no-untyped-def]
    """The version seat `seat`'s bot runs as the match is created, read in the INSERT itself:
    the version given for the seat (a version test's leg: `versions` of `create_matches`),
    else what the bot's newest Play stream said (`bots.version`), for a house bot its
    strategy."""
    return func.coalesce(
        bindparam(f"given_version{seat}", type_=String),
        select(func.coalesce(BOTS.c.version, BOTS.c.house_strategy))
        .where(BOTS.c.id == bindparam(f"bot{seat}_id")).scalar_subquery())


_VALUES = {c: bindparam(c) for c in MATCH_COLUMNS if c not in VERSIONS} | {
    "version0": _seat_version(0), "version1": _seat_version(1)}
ADD_MATCH = (insert(MATCHES).values(_VALUES)
             .returning(MATCHES.c.id, MATCHES.c.version0, MATCHES.c.version1))
ADD_HAND = insert(Hand.metadata.tables["hands"])
ADD_LADDER_MATCH = insert(LadderMatch.metadata.tables["ladder_matches"])
# PostgreSQL: a new match in one statement (its row, its first hand, and as a ladder match its
# ladder row), so that one match in autocommit mode is one round trip instead of four (BEGIN,
# two INSERTs, COMMIT): each is a wait of the pool's thread, which then takes the GIL back
# from the event loop (docs/scaling.md, "The path of an action"). It answers the new match's
# id and the seats' versions (read from the bots' rows by the INSERT).
NEW_MATCH = (insert(MATCHES).values(_VALUES)
             .returning(MATCHES.c.id, MATCHES.c.profile, MATCHES.c.created_at,
                        MATCHES.c.version0, MATCHES.c.version1).cte("new_match"))
_FIRST_HAND = ("match_id", "number", "dealer", "first_seq")
PG_ADD_MATCH = select(NEW_MATCH.c.id, NEW_MATCH.c.version0, NEW_MATCH.c.version1).add_cte(
    insert(Hand.metadata.tables["hands"]).from_select(_FIRST_HAND, select(
        NEW_MATCH.c.id, literal(0), bindparam("dealer"), literal(0))).cte("first_hand"))
PG_ADD_LADDER_MATCH = PG_ADD_MATCH.add_cte(insert(LadderMatch.metadata.tables["ladder_matches"])
    .from_select(("match_id", "profile", "created_at"), select(
        NEW_MATCH.c.id, NEW_MATCH.c.profile, NEW_MATCH.c.created_at)).cte("ladder_match"))
MAX_PAGE = 100
DEFAULT_PAGE = 20
INT64_MAX = 2**63 - 1


# --- creating and reading ------------------------------------------------------------------
def create_match(
    bot_ids: Sequence[int],
    *,
    profile: str = "soft",
    seed: int | None = None,
    move_ms: int | None = None,
    bank_ms: int | None = None,
    max_illegal: int | None = None,
    ladder: bool = False,
    origin: str | None = None,
    rated: bool = True,
    pair: PairLeg | None = None,
    must_take: Mapping[int, str] | None = None,
    versions: tuple[str | None, str | None] = (None, None),
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
) -> Match:
    """Create a running match: `bot_ids[0]` sits in seat 0, `bot_ids[1]` in seat 1.

    `seed` (random if None) decides the first dealer and every deck (R2). The time control and
    the illegal-action limit default to the settings. With `ladder`, the match is recorded as a
    ladder match of its profile in the same transaction (`db.ratings.LadderMatch`): the ladder
    rates it even if the caller never heard the answer. `origin` and `rated` go in the same
    INSERT (a challenge's: 'challenge', unrated); without an `origin` a ladder match is
    'ladder' and any other 'manual' (CreateMatch by an operator: `bummerl match create`).
    With `pair`, the match is that leg of a duplicate pair (`services.core.pairs`), recorded
    on the pair in the same transaction; it raises FailedPrecondition unless the pair is being
    played. `must_take`: see `create_matches`. Raises InvalidArgument, NotFound or
    FailedPrecondition.
    """
    [m] = create_matches(
        [bot_ids], profile=profile, seed=seed, move_ms=move_ms, bank_ms=bank_ms,
        max_illegal=max_illegal, ladder=ladder, origin=origin, rated=rated, pair=pair,
        must_take=must_take, versions=versions, sessions=sessions, config=config)
    return m


def create_matches(
    seatings: Sequence[Sequence[int]],
    *,
    profile: str = "soft",
    seed: int | None = None,
    move_ms: int | None = None,
    bank_ms: int | None = None,
    max_illegal: int | None = None,
    ladder: bool = False,
    origin: str | None = None,
    rated: bool = True,
    pair: PairLeg | None = None,
    must_take: Mapping[int, str] | None = None,
    versions: tuple[str | None, str | None] = (None, None),
    bot_versions: Mapping[int, str] | None = None,
    sessions: sessionmaker[Session] | None = None,
    config: Settings | None = None,
) -> list[Match]:
    """`create_match` for each of `seatings` (the bot ids of seat 0 and seat 1), all in one
    transaction: every match is created, or none (a challenge of several matches). A given
    `seed` is every match's; without one each gets its own.

    `must_take`: bot id -> the kind of match (`db.presence.PAIRING` or `CHALLENGE`) the bot
    must be taking: a bot whose Play streams say otherwise (challenges only, or no new match:
    `bots.accepts`, cleared when its last stream closes) makes it FailedPrecondition, whatever
    its heartbeat (a late heartbeat of a loaded server must not open the door). It is read
    under a lock of the bots' rows in the same transaction (PostgreSQL; SQLite serialises
    writers), so a Play stream's Drain, which writes that row, is ordered with the new match:
    the match is either committed before the Drain is recorded (and is in the Drain's answer)
    or refused.

    `versions`: the version of seat 0's and seat 1's bot (`matches.version0`, `version1`); a
    version test's leg may seat one bot twice, with two different versions (each played by
    its own Play stream: `services.core.values.seat_for`). `bot_versions`: bot id -> the version
    its seat records wherever it sits (a hosted version's challenge: its own, not the bot's
    newest stream's)."""
    config = config or settings()
    origin = origin or (ORIGIN_LADDER if ladder else ORIGIN_MANUAL)
    if origin not in ORIGINS:
        raise InvalidArgument(f"unknown origin {quote(origin)}: one of {', '.join(ORIGINS)}")
    two_versions = origin == ORIGIN_TEST and None not in versions and versions[0] != versions[1]
    for bot_ids in seatings:
        if len(bot_ids) != 2 or (bot_ids[0] == bot_ids[1] and not two_versions):
            raise InvalidArgument(
                f"a match needs exactly two different bot ids, got {quote(list(bot_ids))}")
    try:
        profile = engine.Profile(profile or "soft").value
    except ValueError:
        raise InvalidArgument(f"unknown profile {quote(profile)}: 'soft' or 'sharp' (R9)") from None
    if seed is not None and not 0 <= seed <= INT64_MAX:
        raise InvalidArgument(f"seed must be between 0 and {INT64_MAX}")
    move_ms = move_ms or config.move_ms
    bank_ms = config.bank_ms if bank_ms is None else bank_ms
    max_illegal = max_illegal or config.max_illegal
    # A leg of a duplicate pair plays the pair's time control, checked when its event was
    # made: a pair made before the floor still ends (its legs are never refused for it).
    in_range("time_control.move_ms", move_ms, 1 if pair else MIN_MOVE_MS, MAX_TIME_MS,
             f"{MOVE_NOTE}; 0: the default {config.move_ms}")
    in_range("time_control.bank_ms", bank_ms, 0, MAX_TIME_MS, "ms")
    in_range("time_control.max_illegal", max_illegal, 1, MAX_ILLEGAL,
             f"0: the default {config.max_illegal}")
    now = utcnow()
    bind = bound_engine(sessions)
    made: list[tuple[Match, engine.Match]] = []
    # Plain Core statements (the ORM's unit of work was three quarters of a new match's CPU):
    # the bots (kept by the process once read), then the match's rows (`_add`). One match on
    # PostgreSQL is one statement in autocommit mode; several are one transaction.
    alone = (bind.dialect.name == "postgresql" and len(seatings) == 1 and pair is None
             and not must_take)
    with writing(bind), (autocommit(bind) if alone else bind.begin()) as connection:
        if pair is not None:
            claim_leg(connection, pair)
        if must_take:
            _check_taking(connection, must_take)
        for bot_ids in seatings:
            match_seed = secrets.randbits(62) if seed is None else seed
            game = engine.Match(match_seed, profile)
            bots = [bot_of(connection, bot_id) for bot_id in bot_ids]
            m = Match(
                bot0_id=bot_ids[0], bot1_id=bot_ids[1], profile=profile, seed=match_seed,
                state=RUNNING, seq=0, move_ms=move_ms, bank_ms=bank_ms,
                max_illegal=max_illegal, bank0_ms=bank_ms, bank1_ms=bank_ms, illegal0=0,
                illegal1=0, created_at=now, counter0=7, counter1=7, schneider=False,
                rated=rated, origin=origin, winner=None, end_reason=None, end_detail=None,
                forfeit_seat=None, finished_at=None,
                pair_id=pair.pair_id if pair else None, pair_leg=pair.leg if pair else None,
                event_id=pair.event_id if pair else None,
                event_round=pair.event_round if pair else None,
                version0=(bot_versions or {}).get(bot_ids[0], versions[0]),
                version1=(bot_versions or {}).get(bot_ids[1], versions[1]),
            )
            m.bot0, m.bot1 = bots[0], bots[1]
            summarize(m, game)
            start_turn(m, now, config)
            m.id = _add(connection, m, game.hand.dealer, ladder)
            if pair is not None:
                record_leg(connection, pair, m.id)
            made.append((m, game))
    for m, game in made:
        key = bind_key(bind, m.id)
        keep(key, 0, game)
        keep_row(key, m)  # its first action takes the fast path too (services.core.actions)
        after_commit(site_of(bind), m)
    return [m for m, _ in made]


def _check_taking(connection: Connection, must_take: Mapping[int, str]) -> None:
    """FailedPrecondition unless every bot of `must_take` takes its kind of match (see
    `create_matches`); the rows stay locked until the transaction ends. A remote bot asked for
    a pairing (the ladder's) is refused too while it plays an event's duplicate pair (a pair
    `playing`, between its legs included): the event has it until the pair is decided."""
    rows = connection.execute(
        select(Bot.id, Bot.name, Bot.accepts, Bot.kind).where(Bot.id.in_(sorted(must_take)))
        .order_by(Bot.id).with_for_update()).all()
    for row in rows:
        if not presence.takes(row.accepts, must_take[row.id]):
            raise FailedPrecondition(presence.refusal(row.name, row.accepts,
                                                      must_take[row.id]))
    remote = [row for row in rows if row.kind == REMOTE and must_take[row.id] == PAIRING]
    if remote:
        ids = [row.id for row in remote]
        busy = connection.execute(select(PAIRS.c.id, PAIRS.c.bot_a_id, PAIRS.c.bot_b_id).where(
            PAIRS.c.state == PLAYING,
            or_(PAIRS.c.bot_a_id.in_(ids), PAIRS.c.bot_b_id.in_(ids))).limit(1)).first()
        if busy is not None:
            row = next(r for r in remote if r.id in (busy.bot_a_id, busy.bot_b_id))
            raise FailedPrecondition(
                f"bot {row.name} is playing duplicate pair {busy.id} of an event: the ladder "
                "pairs it again once that pair is decided")


def _add(connection: Connection, m: Match, dealer: int, ladder: bool) -> int:
    """Insert the new match `m`, its first hand (dealt by `dealer`) and, with `ladder`, its
    ladder row; its id. Sets `m.version0` / `version1` to what the INSERT read."""
    row = {column: getattr(m, column) for column in MATCH_COLUMNS if column not in VERSIONS}
    row |= {"given_version0": m.version0, "given_version1": m.version1}
    if connection.dialect.name == "postgresql":
        statement = PG_ADD_LADDER_MATCH if ladder else PG_ADD_MATCH
        match_id, m.version0, m.version1 = connection.execute(
            statement, {**row, "dealer": dealer}).one()
        return int(match_id)
    match_id, m.version0, m.version1 = connection.execute(ADD_MATCH, row).one()
    connection.execute(ADD_HAND, {"match_id": match_id, "number": 0, "dealer": dealer,
                                  "first_seq": 0})
    if ladder:
        connection.execute(ADD_LADDER_MATCH, {"match_id": match_id, "profile": m.profile,
                                              "created_at": m.created_at, "rated_at": None})
    return int(match_id)


class PairLeg(NamedTuple):
    """The leg of a duplicate pair a new match is (`db.pairs`): which pair, which leg, and the
    event and round it belongs to."""

    pair_id: int
    leg: int
    event_id: int | None
    event_round: int | None


PAIRS = DuplicatePair.metadata.tables["duplicate_pairs"]
LOCK_PAIR = select(PAIRS.c.state).where(PAIRS.c.id == bindparam("pair_id")).with_for_update()


def claim_leg(connection: Connection, pair: PairLeg) -> None:
    """In the new match's transaction: lock the pair's row, and refuse (FailedPrecondition)
    unless the pair is being played, so an operator's withdrawal or cancellation, committed
    first, is never followed by a match of it."""
    state = connection.execute(LOCK_PAIR, {"pair_id": pair.pair_id}).scalar_one_or_none()
    if state is None:
        raise NotFound(f"no duplicate pair with id {pair.pair_id}")
    if state != PLAYING:
        raise FailedPrecondition(
            f"duplicate pair {pair.pair_id} is {state}, not {PLAYING}: its matches are made "
            "only while it is being played")


def record_leg(connection: Connection, pair: PairLeg, match_id: int) -> None:
    """Record `match_id` on the pair as its leg (same transaction as the match)."""
    column = "match_a_id" if pair.leg == 0 else "match_b_id"
    connection.execute(update(PAIRS).where(PAIRS.c.id == pair.pair_id)
                       .values({column: match_id}))


def bot_ids_named(names: Sequence[str], *, sessions: sessionmaker[Session] | None = None
                  ) -> list[int]:
    """The ids of the bots named `names` (whatever the case), in order; NotFound naming the
    first unknown one."""
    if not names:
        return []
    with factory_of(sessions)() as session:
        found = {name.lower(): bot_id for name, bot_id in session.execute(
            select(Bot.name, Bot.id).where(or_(*(bot_named(name) for name in names)))).all()}
    for name in names:
        if name.lower() not in found:
            raise NotFound(f"no bot named {quote(name)}: give a registered bot's name or id "
                           "(`bummerl bot register NAME` prints both)")
    return [found[name.lower()] for name in names]


def _match(session: Session, match_id: int) -> Match:
    m = session.get(Match, match_id)
    if m is None:
        raise NotFound(f"no match with id {match_id}")
    return m


def _hands(session: Session, match_id: int) -> list[Hand]:
    return list(session.scalars(
        select(Hand).where(Hand.match_id == match_id).order_by(Hand.number)))


def get_match(match_id: int, *, sessions: sessionmaker[Session] | None = None) -> Match:
    with factory_of(sessions)() as session:
        return _match(session, match_id)


def _log(session: Session, m: Match, from_seq: int = 0) -> list[ActionLog]:
    """The match's action log from `from_seq` on: from `actions_archive` once `bummerl db
    prune` moved it there (the same columns); empty once it went to record files."""
    if m.actions_archive == ARCHIVE_RECORDS:
        return []
    if m.actions_archive == ARCHIVE_TABLE:  # the same columns as ActionLog
        return cast(list[ActionLog], list(session.scalars(
            select(ActionArchive).where(ActionArchive.match_id == m.id,
                                        ActionArchive.seq >= from_seq)
            .order_by(ActionArchive.seq))))
    return list(session.scalars(select(ActionLog).where(
        ActionLog.match_id == m.id, ActionLog.seq >= from_seq).order_by(ActionLog.seq)))


def match_hands(
    match_id: int, *, sessions: sessionmaker[Session] | None = None
) -> tuple[Match, list[Hand], list[ActionLog]]:
    """The match, its hands in order and its whole action log (public information)."""
    with factory_of(sessions)() as session:
        m = _match(session, match_id)
        hands = _hands(session, match_id)
        return m, hands, _log(session, m)


def match_actions(
    match_id: int, from_seq: int = 0, *, sessions: sessionmaker[Session] | None = None
) -> tuple[Match, list[ActionLog], list[Hand]]:
    """The match, its actions from `from_seq` on, and its hands (for spectators)."""
    with factory_of(sessions)() as session:
        m = _match(session, match_id)
        actions = _log(session, m, from_seq)
        hands = _hands(session, match_id)
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
    if state not in (None, RUNNING, FINISHED, ABORTED):
        raise InvalidArgument(
            f"unknown match state {state!r}: 'running', 'finished' or 'aborted'")
    page_size = page_size or DEFAULT_PAGE
    in_range("page_size", page_size, 1, MAX_PAGE, f"0: {DEFAULT_PAGE}")
    query = select(Match).order_by(Match.id.desc()).limit(page_size + 1)
    if page_token:
        if not (len(page_token) <= 19 and page_token.isascii() and page_token.isdigit()
                and 1 <= int(page_token) <= INT64_MAX):
            raise InvalidArgument(f"bad page_token {quote(page_token)}: pass the "
                                  "next_page_token of the previous page")
        before = int(page_token)
        query = query.where(Match.id < before)
    if state:
        query = query.where(Match.state == state)
    if bot_id:
        query = query.where(or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))
    with factory_of(sessions)() as session:
        rows = list(session.scalars(query).unique())
    next_token = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_token


def check_seat(m: Match, seat: int, bot_id: int | None) -> None:
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
    with factory_of(sessions)() as session:
        m = _match(session, match_id)
        check_seat(m, seat, bot_id)
        key = session_key(session, match_id)
        with match_lock(key):
            game = game_of(session, m)
            return game.observe(seat), m


def observe_match(
    m: Match | MatchState, seat: int, *, sessions: sessionmaker[Session] | None = None
) -> engine.Observation:
    """`seat`'s observation of the match row `m` as loaded (at `m.seq`); no permission check.

    Uses the cached state when it is at `m.seq` (no database query), else rebuilds it.
    """
    bind = bound_engine(sessions)
    key = bind_key(bind, m.id)
    with match_lock(key):
        game = cached_game(key, m.seq)
        if game is None:
            with reading(bind) as connection:
                game = game_of(connection, m)
        return game.observe(seat)


def _state_columns(bot0, bot1):  # type: ignore[no-untyped-def]
    """The columns of a `MatchState`, with the bots' kinds from the aliases `bot0`, `bot1`."""
    return (Match.id, Match.bot0_id, Match.bot1_id, Match.profile, Match.seed, Match.state,
            Match.seq, Match.to_act, Match.hand_number, Match.winner, Match.deadline_at,
            Match.bank0_ms, Match.bank1_ms, bot0.kind.label("kind0"), bot1.kind.label("kind1"),
            Match.origin, Match.event_id, Match.event_round, Match.pair_id, Match.pair_leg,
            Match.version0, Match.version1)


def _match_states_query(many: bool = False):  # type: ignore[no-untyped-def]
    """SELECT the `MatchState` columns of the matches of bot :bot_id that are running or
    among :also (built once: building a statement costs more than running it); `many`: the
    running matches of the bots :bot_ids."""
    bot0, bot1 = aliased(Bot), aliased(Bot)
    query = (select(*_state_columns(bot0, bot1))
             .join(bot0, bot0.id == Match.bot0_id)
             .join(bot1, bot1.id == Match.bot1_id))
    if many:
        ids: Any = bindparam("bot_ids", expanding=True)
        query = query.where(Match.state == RUNNING,
                            or_(Match.bot0_id.in_(ids), Match.bot1_id.in_(ids)))
    else:
        query = query.where(
            or_(Match.bot0_id == bindparam("bot_id"), Match.bot1_id == bindparam("bot_id")),
            or_(Match.state == RUNNING, Match.id.in_(bindparam("also", expanding=True))))
    return query.order_by(Match.id)


MATCH_STATES = _match_states_query()
MANY_MATCH_STATES = _match_states_query(many=True)


def match_states_of(
    bot_id: int, also: Sequence[int] = (), *, sessions: sessionmaker[Session] | None = None
) -> list[MatchState]:
    """Like `running_matches_of`, as light `MatchState` rows (what a Play stream polls)."""
    with reading(bound_engine(sessions)) as connection:
        rows = connection.execute(MATCH_STATES, {"bot_id": bot_id, "also": list(also)})
        return [MatchState(**row._mapping) for row in rows]


def match_states_of_bots(bot_ids: list[int], *, sessions: sessionmaker[Session] | None = None
                         ) -> list[list[MatchState]]:
    """`match_states_of` (running matches only) of each of `bot_ids`, in one query (a burst
    of Play streams opening)."""
    found: dict[int, list[MatchState]] = {bot_id: [] for bot_id in bot_ids}
    with reading(bound_engine(sessions)) as connection:
        for row in connection.execute(MANY_MATCH_STATES, {"bot_ids": sorted(found)}):
            m = MatchState(**row._mapping)
            for bot_id in {m.bot0_id, m.bot1_id}:
                if bot_id in found:
                    found[bot_id].append(m)
    return [list(found[bot_id]) for bot_id in bot_ids]


def running_matches_of(
    bot_id: int, also: Sequence[int] = (), *, sessions: sessionmaker[Session] | None = None
) -> list[Match]:
    """The running matches `bot_id` plays in, plus the matches `also` (whatever their state)."""
    query = select(Match).where(or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))
    if also:
        query = query.where(or_(Match.state == RUNNING, Match.id.in_(list(also))))
    else:
        query = query.where(Match.state == RUNNING)
    with factory_of(sessions)() as session:
        return list(session.scalars(query.order_by(Match.id)).unique())


def finished_hands(
    match_id: int, from_number: int, *, sessions: sessionmaker[Session] | None = None
) -> list[Hand]:
    """The finished hands of a match numbered `from_number` or more, in order."""
    with factory_of(sessions)() as session:
        return list(session.scalars(select(Hand).where(
            Hand.match_id == match_id, Hand.number >= from_number, Hand.winner.is_not(None))
            .order_by(Hand.number)))
