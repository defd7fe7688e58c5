"""The events scheduler: drives each running tournament (`db.events`) to its end.

`tick()` (beat, every `BUMMERL_EVENTS_EVERY` s) sends one `bummerl.event_step` task per running
tournament; `step(tournament_id)` re-reads that tournament from the database and does what is
due, in this order:

1. **settle and rate**: `workers.pairs` settles the pairs whose legs ended and rates the rated
   ones.
2. **pair**: a scheduled format (round-robin, double round-robin, gauntlet) gets every round's
   pairs at its first step (`events.formats.schedule`); a Swiss event gets its next round once
   every pair of the rounds so far is decided (`events.swiss.pair_round` from the standings,
   the pairings played, the byes and how often each bot was bot a more than bot b), with a
   bye for the odd bot out (`tournament_byes`). Withdrawn bots are left out of later Swiss
   rounds. The pairs, the bye and the new `paired_rounds` are written in one transaction,
   conditional on `paired_rounds` being what was read, so a round is paired once however many
   steps race.
3. **play**: `workers.pairs.start_due` starts due pairs while the event has fewer than
   `concurrency` matches running, one pair per bot at a time (its legs one after the other,
   leg 1 once leg 0 has ended); a bot absent past `grace_s` forfeits.
4. **finish**: once every round is paired and every pair decided, the tournament is
   `finished` (conditional UPDATE: once).

Besides the tick, the end of a tournament's match (the service's match-end hook, through
`bummerl.rate`) sends that tournament a step at once (`after_match`), so a pair's leg 1, or the
next pair of its bots, starts without waiting for the tick.

Every step is idempotent and keeps nothing in the worker: a worker killed mid-step, a lost
CreateMatch answer or a restarted service leaves the database in a state the next step
continues from (`workers.pairs` explains why nothing is made twice). Matches are made only
through the engine service's gRPC API with the house token (`workers.service`).
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from db.base import session_factory, utcnow
from db.event_state import EventState, load
from db.events import T_FINISHED, T_RUNNING, Tournament, TournamentBye
from db.models import ORIGIN_TOURNAMENT, Match
from db.pairs import (
    FINAL,
    FORFEIT_A,
    FORFEIT_B,
    FORFEIT_BOTH,
    FORFEITED,
    OWNER_TOURNAMENT,
    DuplicatePair,
    result_values,
)
from events import formats, swiss
from events.scoring import forfeit_result
from workers import pairs
from workers.ladder import rowcount
from workers.locks import only_one

log = logging.getLogger(__name__)


def every_s() -> float:
    """Seconds between two steps of each tournament (beat's period)."""
    return float(os.environ.get("BUMMERL_EVENTS_EVERY", "2"))


def running_ids(sessions: sessionmaker[Session]) -> list[int]:
    with sessions() as s:
        return list(s.scalars(select(Tournament.id).where(Tournament.state == T_RUNNING)
                              .order_by(Tournament.id)))


def tick(send: Callable[[int], None], sessions: sessionmaker[Session] | None = None
         ) -> list[int]:
    """Send a step for every running tournament (`send(tournament_id)`); their ids. Voids
    first the open pairs of tournaments not running (`workers.pairs.void_orphans`)."""
    sessions = sessions or session_factory()
    pairs.void_orphans(sessions, owner=OWNER_TOURNAMENT, open_ids=select(Tournament.id).where(
        Tournament.state == T_RUNNING), why="the event had ended before the pair was decided: "
        "no result")
    ids = running_ids(sessions)
    for tournament_id in ids:
        send(tournament_id)
    return ids


def after_match(match_id: int, send: Callable[[int], None],
                sessions: sessionmaker[Session] | None = None) -> int | None:
    """A match ended (the service's match-end hook): if it is a leg of a running tournament's
    pair, send that tournament a step now (`send(tournament_id)`), so leg 1 or the next pair
    starts at once rather than at the next tick; the tournament's id, or None."""
    with (sessions or session_factory())() as s:
        row = s.execute(select(Match.origin, Match.event_id).where(Match.id == match_id)).first()
        if row is None or row.origin != ORIGIN_TOURNAMENT or row.event_id is None:
            return None
        state = s.scalar(select(Tournament.state).where(Tournament.id == row.event_id))
    if state != T_RUNNING:
        return None
    send(row.event_id)
    return int(row.event_id)


def step(tournament_id: int, sessions: sessionmaker[Session] | None = None,
         client: pairs.Creator | None = None) -> str:
    """One step of tournament `tournament_id` (see the module's docstring); its state after."""
    sessions = sessions or session_factory()
    with only_one(sessions, f"event-{tournament_id}") as mine:
        if not mine:
            return "busy"  # another worker is stepping it now
        event = _load(sessions, tournament_id)
        if event is None or event.tournament.state != T_RUNNING:
            return event.tournament.state if event else "missing"
        owner = OWNER_TOURNAMENT
        # Settle first: the pair that ends a Swiss round lets this same step pair the next.
        if pairs.settle(sessions, owner=owner, owner_id=tournament_id):
            event = _load(sessions, tournament_id)
            assert event is not None
        pairs.rate_done(sessions, owner=owner, owner_id=tournament_id)
        pair_next(sessions, event)
        t = event.tournament
        if client is None:
            from workers.service import service

            client = service()
        pairs.start_due(sessions, client, owner=owner, owner_id=t.id, limit=t.concurrency,
                        grace_s=t.grace_s)
        return finish_if_done(sessions, tournament_id)


def _load(sessions: sessionmaker[Session], tournament_id: int) -> EventState | None:
    with sessions() as s:
        return load(s, tournament_id)


def pair_next(sessions: sessionmaker[Session], event: EventState) -> bool:
    """Pair what is due of `event`: every round of a scheduled format, the next Swiss round
    once the ones so far are decided. Whether this call paired anything."""
    t = event.tournament
    if t.paired_rounds >= t.rounds:
        return False
    if t.format in formats.SCHEDULED:
        made = formats.schedule(t.format, event.field)
        withdrawn = set(event.withdrawn)
        new = [(p.round, p.board, p.a, p.b) for p in made]
        return _write_round(sessions, t, t.rounds, new, None, withdrawn)
    if any(p.state not in FINAL for p in event.pairs):
        return False  # the round being played is not over
    field = event.active
    standings = {row.bot: row.points for row in event.standings()}
    played = {frozenset((p.bot_a_id, p.bot_b_id)) for p in event.pairs}
    # Who is bot a: the one that was bot a less often *than bot b* so far (a plain count of
    # times as bot a would let a bot that was bot b every round stay so on ties).
    a_counts = Counter(p.bot_a_id for p in event.pairs)
    a_counts.subtract(p.bot_b_id for p in event.pairs)
    byes = {b.bot_id for b in event.byes}
    paired = swiss.pair_round(field, standings, played, byes, a_counts)
    round_ = t.paired_rounds + 1
    new = [(round_, board, a, b) for board, (a, b) in enumerate(paired.pairs, start=1)]
    return _write_round(sessions, t, round_, new, paired.bye, set())


def _write_round(sessions: sessionmaker[Session], t: Tournament, up_to: int,
                 new: list[tuple[int, int, int, int]], bye: int | None,
                 withdrawn: set[int]) -> bool:
    """Insert the pairs `new` (round, board, bot a, bot b) and the `bye` of round `up_to`, and
    set `paired_rounds` to `up_to`, in one transaction, if no other step did it first. A pair
    of a withdrawn bot is written forfeited (scheduled formats pair the whole field)."""
    now = utcnow()
    with sessions.begin() as s:
        done = s.execute(update(Tournament)
                         .where(Tournament.id == t.id, Tournament.state == T_RUNNING,
                                Tournament.paired_rounds == t.paired_rounds)
                         .values(paired_rounds=up_to))
        if rowcount(done) != 1:
            return False
        for round_, board, a, b in new:
            pair = DuplicatePair(
                owner=OWNER_TOURNAMENT, owner_id=t.id, round=round_, board=board,
                seed=formats.pair_seed(t.seed, round_, board), bot_a_id=a, bot_b_id=b,
                profile=t.profile, move_ms=t.move_ms, bank_ms=t.bank_ms, rated=t.rated,
                due_at=now)
            s.add(pair)
            if {a, b} & withdrawn:
                _forfeited(pair, withdrawn, now)
        if bye is not None:
            s.add(TournamentBye(tournament_id=t.id, round=up_to, bot_id=bye))
    log.info("tournament %s: paired up to round %s (%d pairs%s)", t.id, up_to, len(new),
             f", bye {bye}" if bye is not None else "")
    return True


def _forfeited(pair: DuplicatePair, withdrawn: set[int], now: datetime) -> None:
    a, b = pair.bot_a_id, pair.bot_b_id
    who = FORFEIT_BOTH if {a, b} <= withdrawn else FORFEIT_A if a in withdrawn else FORFEIT_B
    for name, value in result_values(forfeit_result(who)).items():
        setattr(pair, name, value)
    pair.state = FORFEITED
    pair.finished_at = now
    pair.detail = "withdrawn from the event before the pair was played: forfeited"


def finish_if_done(sessions: sessionmaker[Session], tournament_id: int) -> str:
    """Mark the tournament finished if every round is paired and every pair decided; its
    state."""
    with sessions.begin() as s:
        t = s.get(Tournament, tournament_id)
        if t is None:
            return "missing"
        if t.state != T_RUNNING or t.paired_rounds < t.rounds:
            return t.state
        open_pairs = s.scalar(select(DuplicatePair.id).where(
            DuplicatePair.owner == OWNER_TOURNAMENT, DuplicatePair.owner_id == tournament_id,
            DuplicatePair.state.not_in(FINAL)).limit(1))
        if open_pairs is not None:
            return t.state
        done = s.execute(update(Tournament)
                         .where(Tournament.id == tournament_id, Tournament.state == T_RUNNING)
                         .values(state=T_FINISHED, finished_at=utcnow()))
        if rowcount(done):
            log.info("tournament %s finished", tournament_id)
        return T_FINISHED
