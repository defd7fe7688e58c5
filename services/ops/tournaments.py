"""Tournaments (plain functions over the database): create, read, list, withdraw a bot, cancel,
and the crosstable of an export. The gRPC TournamentService (`services.api.tournament_servicer`)
calls these; it checks the operator token first for every change.

The events scheduler (`workers.events`) pairs the rounds and plays them; nothing here creates a
match. A change is one transaction that checks everything first, so bad input changes nothing:

- `create_tournament`: the format, the field (2 to 64 known bots, each once), the rounds (Swiss
  only: 1 to bots - 1), the profile, time control, concurrency and grace period are checked;
  then the tournament and its entries are written (state `running`, no pairs yet).
- `withdraw_bot`: the bot's entry is marked withdrawn and each of its pairs not yet decided is
  `forfeited` by it, in one transaction under a lock of the tournament's row; the running legs
  of those pairs are then aborted. The service refuses a new leg of a pair no longer `playing`
  (`services.core.matches.claim_leg`), so no match of a forfeited pair starts after it.
- `cancel_tournament`: the tournament is `cancelled` and every pair not yet decided `void`, in
  one transaction; then the running legs are aborted.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from db.base import utcnow
from db.event_state import EventState, list_tournaments, load
from db.events import T_CANCELLED, T_RUNNING, Tournament, TournamentEntry
from db.models import PERSON, RUNNING, Bot, Match
from db.pairs import (
    FORFEIT_A,
    FORFEIT_B,
    FORFEITED,
    OPEN,
    OWNER_TOURNAMENT,
    VOID,
    DuplicatePair,
    result_values,
)
from db.settings import Settings, settings
from events import formats
from events.scoring import forfeit_result
from events.standings import crosstable
from services.core import actions
from services.core.bounds import MAX_TIME_MS, MIN_MOVE_MS, MOVE_NOTE, in_range
from services.core.connections import factory_of
from services.core.errors import FailedPrecondition, InvalidArgument, NotFound, quote
from services.core.matches import bot_ids_named

log = logging.getLogger(__name__)

MAX_NAME = 80
MAX_REASON = 500
MAX_CONCURRENCY = 64
MAX_GRACE_S = 3600
DEFAULT_GRACE_S = 60
PROFILES = ("soft", "sharp")
SEED_MAX = (1 << formats.SEED_BITS) - 1


@dataclass(frozen=True)
class NewTournament:
    """What CreateTournament asks for (unset values: 0, empty, None)."""

    format: str
    bot_ids: Sequence[int] = ()
    bot_names: Sequence[str] = ()
    name: str = ""
    rounds: int | None = None
    profile: str = "soft"
    move_ms: int = 0
    bank_ms: int | None = None
    rated: bool = False
    concurrency: int = 0
    grace_s: int = 0
    seed: int = 0


@dataclass
class Cell:
    """One crosstable cell: what `bot` did against `opponent` over their decided pairs."""

    bot: int
    opponent: int
    points: int = 0
    scored: int = 0
    conceded: int = 0
    pair_ids: list[int] = field(default_factory=list)
    match_ids: list[int] = field(default_factory=list)


def _reason(reason: str, what: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise InvalidArgument(f"{what} needs a reason (for the standings and the bots' authors)")
    if len(reason) > MAX_REASON:
        raise InvalidArgument(f"the reason is {len(reason)} characters; at most {MAX_REASON}")
    return reason


def _field(new: NewTournament, session: Session,
           sessions: sessionmaker[Session] | None) -> list[int]:
    """The field's bot ids, in order, each a known bot (NotFound naming the first unknown)."""
    if new.bot_ids and new.bot_names:
        raise InvalidArgument("give the field as bot_ids or as bot_names, not both")
    ids = bot_ids_named(list(new.bot_names), sessions=sessions) if new.bot_names \
        else list(new.bot_ids)
    known = {bot_id: kind for bot_id, kind in
             session.execute(select(Bot.id, Bot.kind).where(Bot.id.in_(ids)))}
    for bot_id in ids:
        if bot_id not in known:
            raise NotFound(f"no bot with id {bot_id}: give registered bots' ids or names")
        if known[bot_id] == PERSON:  # people play from the browser, never in events
            raise InvalidArgument(f"bot {bot_id} is a person's seat: people do not play "
                                  "tournaments")
    return ids


def create_tournament(new: NewTournament, *, sessions: sessionmaker[Session] | None = None,
                      config: Settings | None = None) -> EventState:
    """Create a tournament (see the module's docstring); it as read back. InvalidArgument or
    NotFound naming what is wrong, with nothing written."""
    config = config or settings()
    if new.format not in formats.FORMATS:
        raise InvalidArgument(f"unknown format {quote(new.format)}: one of "
                              f"{', '.join(formats.FORMATS)}")
    name = (new.name or "").strip()
    if len(name) > MAX_NAME:
        raise InvalidArgument(f"the name is {len(name)} characters; at most {MAX_NAME}")
    if new.profile not in PROFILES:
        raise InvalidArgument(f"unknown profile {quote(new.profile)}: 'soft' or 'sharp' (R9)")
    rounds = new.rounds or None
    move_ms = new.move_ms or config.move_ms
    bank_ms = config.bank_ms if new.bank_ms is None else new.bank_ms
    in_range("time_control.move_ms", move_ms, MIN_MOVE_MS, MAX_TIME_MS,
             f"{MOVE_NOTE}; 0: the default {config.move_ms}")
    in_range("time_control.bank_ms", bank_ms, 0, MAX_TIME_MS, "ms")
    grace_s = new.grace_s or DEFAULT_GRACE_S
    in_range("grace_s", grace_s, 1, MAX_GRACE_S, f"seconds; 0: the default {DEFAULT_GRACE_S}")
    in_range("seed", new.seed, 0, SEED_MAX, "0: a random one")
    seed = new.seed or secrets.randbits(formats.SEED_BITS) or 1
    factory = factory_of(sessions)
    with factory.begin() as s:
        ids = _field(new, s, sessions)
        try:
            formats.check(new.format, ids, rounds)
            total = formats.total_rounds(new.format, len(ids), rounds)
        except ValueError as e:
            raise InvalidArgument(str(e)) from None
        concurrency = new.concurrency or max(1, len(ids) // 2)
        in_range("concurrency", concurrency, 1, MAX_CONCURRENCY,
                 "matches at once; 0: one per two bots")
        t = Tournament(name=name or f"{new.format} of {len(ids)} bots", format=new.format,
                       state=T_RUNNING, rounds=total, paired_rounds=0, profile=new.profile,
                       move_ms=move_ms, bank_ms=bank_ms, rated=new.rated,
                       concurrency=concurrency, grace_s=grace_s, seed=seed)
        s.add(t)
        s.flush()
        for position, bot_id in enumerate(ids):
            s.add(TournamentEntry(tournament_id=t.id, bot_id=bot_id, position=position))
        tournament_id = t.id
    log.info("tournament %s created: %s over %s", tournament_id, new.format, ids)
    return get_tournament(tournament_id, sessions=sessions)


def get_tournament(tournament_id: int, *, sessions: sessionmaker[Session] | None = None
                   ) -> EventState:
    """Tournament `tournament_id` with its field, pairs and byes; NotFound if there is none."""
    with factory_of(sessions)() as s:
        event = load(s, tournament_id)
    if event is None:
        raise NotFound(f"no tournament with id {tournament_id} (`bummerl tournament list`)")
    return event


def list_all(state: str | None = None, *, sessions: sessionmaker[Session] | None = None
             ) -> list[tuple[Tournament, int]]:
    """The newest tournaments first (in `state` if given), each with its field's size."""
    with factory_of(sessions)() as s:
        rows = list_tournaments(s, [state] if state else [])
        counts: dict[int, int] = {}
        for tournament_id in s.scalars(select(TournamentEntry.tournament_id).where(
                TournamentEntry.tournament_id.in_([t.id for t in rows]))):
            counts[tournament_id] = counts.get(tournament_id, 0) + 1
    return [(t, counts.get(t.id, 0)) for t in rows]


def _locked_running(s: Session, tournament_id: int, what: str) -> Tournament:
    t = s.scalar(select(Tournament).where(Tournament.id == tournament_id).with_for_update())
    if t is None:
        raise NotFound(f"no tournament with id {tournament_id} (`bummerl tournament list`)")
    if t.state != T_RUNNING:
        raise FailedPrecondition(f"tournament {tournament_id} is {t.state}: only a running "
                                 f"tournament can {what}")
    return t


def _open_pairs(s: Session, tournament_id: int, bot_id: int | None = None
                ) -> list[DuplicatePair]:
    query = select(DuplicatePair).where(
        DuplicatePair.owner == OWNER_TOURNAMENT, DuplicatePair.owner_id == tournament_id,
        DuplicatePair.state.in_(OPEN)).order_by(DuplicatePair.round, DuplicatePair.board)
    if bot_id is not None:
        query = query.where((DuplicatePair.bot_a_id == bot_id) |
                            (DuplicatePair.bot_b_id == bot_id))
    return list(s.scalars(query.with_for_update()))


def withdraw_bot(tournament_id: int, bot_id: int, reason: str, *,
                 sessions: sessionmaker[Session] | None = None) -> tuple[EventState, list[int]]:
    """Withdraw `bot_id` from running tournament `tournament_id` (see the module's docstring);
    the tournament after it and the pairs it forfeited."""
    reason = _reason(reason, "withdrawing a bot")
    factory = factory_of(sessions)
    now = utcnow()
    with factory.begin() as s:
        _locked_running(s, tournament_id, "have a bot withdrawn")
        entry = s.get(TournamentEntry, (tournament_id, bot_id))
        if entry is None:
            raise NotFound(f"bot {bot_id} is not in tournament {tournament_id}'s field")
        if entry.withdrawn_at is not None:
            raise FailedPrecondition(f"bot {bot_id} was withdrawn from tournament "
                                     f"{tournament_id} already ({entry.withdrawn_reason})")
        entry.withdrawn_at = now
        entry.withdrawn_reason = reason
        forfeited = []
        for pair in _open_pairs(s, tournament_id, bot_id):
            who = FORFEIT_A if pair.bot_a_id == bot_id else FORFEIT_B
            s.execute(update(DuplicatePair).where(DuplicatePair.id == pair.id).values(
                {**result_values(forfeit_result(who)), "state": FORFEITED, "finished_at": now,
                 "detail": f"bot {bot_id} was withdrawn from the event: {reason}"}))
            forfeited.append(pair.id)
    _abort_legs(forfeited, f"the pair was forfeited: bot {bot_id} withdrawn from tournament "
                f"{tournament_id} ({reason})", sessions)
    return get_tournament(tournament_id, sessions=sessions), forfeited


def cancel_tournament(tournament_id: int, reason: str, *,
                      sessions: sessionmaker[Session] | None = None
                      ) -> tuple[EventState, list[int]]:
    """Cancel running tournament `tournament_id` (see the module's docstring); it after, and
    the pairs made void."""
    reason = _reason(reason, "cancelling a tournament")
    factory = factory_of(sessions)
    now = utcnow()
    with factory.begin() as s:
        t = _locked_running(s, tournament_id, "be cancelled")
        t.state = T_CANCELLED
        t.finished_at = now
        t.cancelled_reason = reason
        voided = []
        for pair in _open_pairs(s, tournament_id):
            s.execute(update(DuplicatePair).where(DuplicatePair.id == pair.id).values(
                state=VOID, finished_at=now, detail=f"the event was cancelled: {reason}"))
            voided.append(pair.id)
    _abort_legs(voided, f"tournament {tournament_id} was cancelled ({reason})", sessions)
    return get_tournament(tournament_id, sessions=sessions), voided


def _abort_legs(pair_ids: list[int], reason: str,
                sessions: sessionmaker[Session] | None) -> None:
    """Abort the running matches of `pair_ids` (decided already: no new leg is made)."""
    if not pair_ids:
        return
    with factory_of(sessions)() as s:
        running = list(s.scalars(select(Match.id).where(Match.pair_id.in_(pair_ids),
                                                         Match.state == RUNNING)))
    for match_id in running:
        # one that ended meanwhile is left as it is: the pair is decided already
        with contextlib.suppress(FailedPrecondition):
            actions.abort_match(match_id, reason, sessions=sessions)


def crosstable_of(event: EventState) -> list[Cell]:
    """A cell for each bot (in standings order) and each opponent it met."""
    order = [row.bot for row in event.standings()]
    by_id = {p.id: p for p in event.pairs}
    table = crosstable(order, event.scores())
    ids_of = {(p.round, p.board): p.id for p in event.pairs}
    cells = []
    for bot in order:
        for opponent in order:
            met = table.get((bot, opponent))
            if not met:
                continue
            cell = Cell(bot, opponent)
            for score in met:
                pair = by_id[ids_of[(score.round, score.board)]]
                cell.pair_ids.append(pair.id)
                cell.match_ids.extend(i for i in (pair.match_a_id, pair.match_b_id) if i)
                if score.decided:
                    points, _, scored, conceded = score.of(bot)
                    cell.points += points
                    cell.scored += scored
                    cell.conceded += conceded
            cells.append(cell)
    return cells
