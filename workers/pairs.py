"""The duplicate-pair scheduler: starting due pairs and settling finished ones (`db.pairs`).

Plain functions the events' Celery tasks call (tournaments: `workers.events`; version tests
likewise), each for one owner (`owner`, `owner_id`). Every one is idempotent and safe to run
twice at once or again after a crash: the database is the truth, and each change is a
conditional UPDATE that only one caller wins.

- `start_due` starts the due waiting pairs, in (round, board) order, while the owner has fewer
  than `limit` matches running (a playing pair counts one: its legs are played one after the
  other) and neither bot is in another open pair of the owner (`per_bot`). A pair starts only
  when both bots can play: a house bot always, a remote bot while it is connected and takes
  the owner's kind of match (`takes`: a tournament's pairs are pairings, refused by a bot
  connected for challenges only; a version test's are taken by one, as challenges are:
  `db.presence`; neither by a bot finishing up); a suspended bot never. It
  is claimed first (`waiting` → `playing`, one UPDATE), then leg 0 is created through the engine
  service (CreateMatch with the pair and the leg: `client`, the house token's
  `workers.service`), which writes the match id on the pair in the match's own transaction.
  **Leg 1 is created only once leg 0 has ended** (finished; an aborted leg 0 voids the pair
  instead), so a bot never holds the cards of one leg while its opponent's mirror of them is
  live in the other. A claimed pair with a leg missing (the call failed, its answer was lost,
  the worker died, or leg 0 just ended) gets it on a later call: the service returns the match
  it made for that leg, if it made one, so nothing is made twice.
- A bot that cannot play when its pair is due gets a grace period: `grace_until` is set to now
  + `grace_s` the first time it is seen absent, cleared when both can play again; past it the
  absent bot forfeits the pair (`forfeited`, `forfeit` "a", "b" or "both"; events.scoring).
- `settle` marks each playing pair whose two matches both ended `done`, with its result
  (events.scoring); a pair with a match an operator aborted becomes `void` (no result): at
  once if it is leg 0 (leg 1 is then never made).
- `void_orphans` is the periodic repair (each events' tick): an open pair whose event is not
  open any more (a crash between an event's end and the voiding of its pairs, or an event
  deleted) is made `void` then, so no pair stays open for good (docs/events.md, "How every
  pair ends").
- `rate_done` rates the two matches of each settled pair that is `rated`, once
  (`rated_at`), with the ladder's openskill model (`workers.ladder.apply_result`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import Select, select, update
from sqlalchemy.orm import Session, sessionmaker

from db.base import aware, utcnow
from db.models import ABORTED, FINISHED, REMOTE, RUNNING, Bot, Match
from db.pairs import (
    DONE,
    FORFEIT_A,
    FORFEIT_B,
    FORFEIT_BOTH,
    FORFEITED,
    OPEN,
    PLAYING,
    VOID,
    WAITING,
    DuplicatePair,
    result_values,
)
from db.presence import PAIRING, is_connected, takes
from db.settings import settings
from events.scoring import Leg, forfeit_result, pair_result
from workers import conduct
from workers.ladder import apply_result, rowcount

log = logging.getLogger(__name__)

DEFAULT_GRACE_S = 60.0


class Creator(Protocol):
    """What creates a pair's legs: the engine service (`workers.service.Service`)."""

    def create_pair_match(self, pair_id: int, leg: int) -> int: ...


def _open_pairs(s: Session, owner: str, owner_id: int) -> list[DuplicatePair]:
    return list(s.scalars(
        select(DuplicatePair)
        .where(DuplicatePair.owner == owner, DuplicatePair.owner_id == owner_id,
               DuplicatePair.state.in_((WAITING, PLAYING)))
        .order_by(DuplicatePair.round, DuplicatePair.board, DuplicatePair.id)))


def can_play(bot: Bot, heartbeat_s: float, now: datetime, kind: str = PAIRING) -> bool:
    """Whether `bot` can play a pair now: not suspended, and a house bot or connected and
    taking a match of `kind` (`db.presence`: PAIRING for a tournament's pairs, which a bot
    connected for challenges only refuses; CHALLENGE for a version test's, which it takes;
    neither while it is finishing up)."""
    if bot.suspended_at is not None:
        return False
    return bot.kind != REMOTE or (is_connected(bot, heartbeat_s, now)
                                  and takes(bot.accepts, kind))


def start_due(sessions: sessionmaker[Session], client: Creator, *, owner: str, owner_id: int,
              limit: int, grace_s: float = DEFAULT_GRACE_S, per_bot: int | None = 1,
              heartbeat_s: float | None = None, now: datetime | None = None,
              kind: str = PAIRING) -> list[int]:
    """Start the owner's due pairs (see the module's docstring); the ids of the pairs claimed
    by this call. `limit` caps the owner's running matches, `per_bot` a bot's open pairs of
    this owner (None: no cap); `kind` the kind of match the pairs' bots must take
    (`db.presence`: PAIRING, or CHALLENGE for a version test's)."""
    now = now or utcnow()
    heartbeat_s = settings().heartbeat_s if heartbeat_s is None else heartbeat_s
    with sessions() as s:
        pairs = _open_pairs(s, owner, owner_id)
        match_ids = [i for p in pairs for i in (p.match_a_id, p.match_b_id) if i is not None]
        states: dict[int, str] = {row.id: row.state for row in s.execute(
            select(Match.id, Match.state).where(Match.id.in_(match_ids)))}
        bot_ids = {i for p in pairs for i in (p.bot_a_id, p.bot_b_id)}
        bots = {b.id: b for b in s.scalars(select(Bot).where(Bot.id.in_(bot_ids)))}
        s.expunge_all()
    used = 0
    busy: Counter[int] = Counter()
    unfinished: list[DuplicatePair] = []
    for pair in pairs:
        if pair.state != PLAYING:
            continue
        busy.update((pair.bot_a_id, pair.bot_b_id))
        missing = next_leg(pair, states)
        if missing is not None:
            unfinished.append(pair)
        if missing is not None or any(states.get(m) == RUNNING for m in
                                      (pair.match_a_id, pair.match_b_id) if m is not None):
            used += 1  # one match of the pair is running, or about to be
    for pair in unfinished:  # claimed before, its next leg missing: make it (or find it)
        create_legs(client, pair, states)
    started: list[int] = []
    for pair in pairs:
        if pair.state != WAITING or aware(pair.due_at) > now:
            continue
        ready = [can_play(bots[pair.bot_a_id], heartbeat_s, now, kind),
                 can_play(bots[pair.bot_b_id], heartbeat_s, now, kind)]
        if not all(ready):
            _absent(sessions, pair, ready, bots, grace_s, now)
            continue
        if pair.grace_until is not None:
            _present_again(sessions, pair)
        if per_bot is not None and max(busy[pair.bot_a_id], busy[pair.bot_b_id]) >= per_bot:
            continue
        if used + 1 > limit:
            continue
        if not claim(sessions, pair, now):
            continue  # another scheduler took it, or an operator decided it meanwhile
        busy.update((pair.bot_a_id, pair.bot_b_id))
        used += 1
        started.append(pair.id)
        create_legs(client, pair, states)
    if started:
        log.info("pairs of %s %s: started %s", owner, owner_id, started)
    return started


def claim(sessions: sessionmaker[Session], pair: DuplicatePair, now: datetime) -> bool:
    """`waiting` → `playing`, if it is still waiting; whether this call did it."""
    with sessions.begin() as s:
        done = s.execute(update(DuplicatePair)
                         .where(DuplicatePair.id == pair.id, DuplicatePair.state == WAITING)
                         .values(state=PLAYING, started_at=now, grace_until=None))
        return rowcount(done) == 1


def next_leg(pair: DuplicatePair, states: dict[int, str]) -> int | None:
    """The leg claimed `pair` needs made now: 0 if it has none, 1 once leg 0 has finished
    (never while leg 0 runs, nor after it was aborted: the pair is void); None otherwise.
    `states`: the state of each match id known."""
    if pair.match_a_id is None:
        return 0
    if pair.match_b_id is None and states.get(pair.match_a_id) == FINISHED:
        return 1
    return None


def create_legs(client: Creator, pair: DuplicatePair, states: dict[int, str]) -> int | None:
    """Create the leg claimed `pair` needs now (`next_leg`; the service records it on the
    pair); the match id made or found, or None. A failure is logged and left for the next
    call."""
    leg = next_leg(pair, states)
    if leg is None:
        return None
    try:
        return client.create_pair_match(pair.id, leg)
    except Exception as e:  # noqa: BLE001  (the next call asks again: the key is the leg)
        log.warning("pair %s: creating leg %s failed, retried on the next tick: %s",
                    pair.id, leg, e)
        return None


def _absent(sessions: sessionmaker[Session], pair: DuplicatePair, ready: list[bool],
            bots: dict[int, Bot], grace_s: float, now: datetime) -> None:
    """A bot of due `pair` cannot play: start its grace period, or forfeit it once over."""
    if pair.grace_until is None:
        with sessions.begin() as s:
            s.execute(update(DuplicatePair)
                      .where(DuplicatePair.id == pair.id, DuplicatePair.state == WAITING,
                             DuplicatePair.grace_until.is_(None))
                      .values(grace_until=now + timedelta(seconds=grace_s)))
        return
    if aware(pair.grace_until) > now:
        return
    who = FORFEIT_BOTH if not any(ready) else FORFEIT_A if not ready[0] else FORFEIT_B
    names = [bots[i].name for i, ok in zip((pair.bot_a_id, pair.bot_b_id), ready, strict=True)
             if not ok]
    detail = (f"{' and '.join(names)} could not play (not connected, or suspended) for the "
              f"whole grace period after the pair was due: forfeited")
    forfeit(sessions, pair.id, who, detail, now, states=(WAITING,))


def _present_again(sessions: sessionmaker[Session], pair: DuplicatePair) -> None:
    with sessions.begin() as s:
        s.execute(update(DuplicatePair)
                  .where(DuplicatePair.id == pair.id, DuplicatePair.state == WAITING)
                  .values(grace_until=None))


def forfeit(sessions: sessionmaker[Session], pair_id: int, who: str, detail: str,
            now: datetime | None = None, states: Iterable[str] = (WAITING, PLAYING)) -> bool:
    """Decide pair `pair_id` as forfeited by `who` ("a", "b", "both"), if it is in one of
    `states`; whether this call did it. (A running leg is left to the caller to abort.)"""
    values = {**result_values(forfeit_result(who)), "state": FORFEITED,
              "finished_at": now or utcnow(), "detail": detail}
    with sessions.begin() as s:
        done = s.execute(update(DuplicatePair)
                         .where(DuplicatePair.id == pair_id, DuplicatePair.state.in_(states))
                         .values(values))
        return rowcount(done) == 1


def void_orphans(sessions: sessionmaker[Session], *, owner: str, open_ids: Select[Any],
                 why: str, now: datetime | None = None) -> list[int]:
    """Void the owner's open pairs whose event is not among `open_ids` (a SELECT of the owner's
    open events' ids, read in the same statement, so an event opened meanwhile keeps its
    pairs); the ids voided. A leg still running is played out; the pair has no result."""
    where = (DuplicatePair.owner == owner, DuplicatePair.state.in_(OPEN),
             DuplicatePair.owner_id.not_in(open_ids.scalar_subquery()))
    with sessions.begin() as s:
        ids = list(s.scalars(select(DuplicatePair.id).where(*where)))
        if ids:
            s.execute(update(DuplicatePair).where(DuplicatePair.id.in_(ids), *where)
                      .values(state=VOID, detail=why, finished_at=now or utcnow()),
                      execution_options={"synchronize_session": False})
    if ids:
        log.warning("%s pairs %s were open after their event ended: void", owner, ids)
    return ids


def leg_of(m: Match) -> Leg:
    assert m.winner is not None
    return Leg(m.winner, (m.counter0, m.counter1))


def settle(sessions: sessionmaker[Session], *, owner: str, owner_id: int,
           now: datetime | None = None) -> list[int]:
    """Mark the owner's playing pairs whose two matches ended: `done` with the result, or
    `void` if an operator aborted one; the ids settled by this call."""
    now = now or utcnow()
    with sessions() as s:
        pairs = list(s.scalars(select(DuplicatePair).where(
            DuplicatePair.owner == owner, DuplicatePair.owner_id == owner_id,
            DuplicatePair.state == PLAYING, DuplicatePair.match_a_id.is_not(None))))
        ids = [i for p in pairs for i in (p.match_a_id, p.match_b_id) if i is not None]
        matches = {m.id: m for m in s.scalars(select(Match).where(Match.id.in_(ids))).unique()}
        s.expunge_all()
    settled = []
    for pair in pairs:
        legs = [matches[i] for i in (pair.match_a_id, pair.match_b_id) if i is not None]
        if any(m.state == RUNNING for m in legs):
            continue
        aborted = [m.id for m in legs if m.state == ABORTED]
        if len(legs) < 2 and not aborted:
            continue  # leg 0 finished: leg 1 is made by the next `start_due`
        values: dict[str, object]
        if aborted:
            values = {"state": VOID, "detail": f"match {aborted[0]} was aborted by an operator: "
                      "the pair has no result"}
        else:
            result = pair_result(leg_of(legs[0]), leg_of(legs[1]))
            values = {**result_values(result), "state": DONE}
        with sessions.begin() as s:
            done = s.execute(update(DuplicatePair)
                             .where(DuplicatePair.id == pair.id, DuplicatePair.state == PLAYING)
                             .values({**values, "finished_at": now}))
            if rowcount(done):
                settled.append(pair.id)
    return settled


def rate_done(sessions: sessionmaker[Session], *, owner: str, owner_id: int) -> int:
    """Rate the matches of the owner's done, rated, not yet rated pairs (once each, guarded by
    `rated_at`); how many pairs."""
    with sessions() as s:
        ids = list(s.scalars(select(DuplicatePair.id).where(
            DuplicatePair.owner == owner, DuplicatePair.owner_id == owner_id,
            DuplicatePair.state == DONE, DuplicatePair.rated.is_(True),
            DuplicatePair.rated_at.is_(None))))
    rated = 0
    for pair_id in ids:
        with sessions.begin() as s:
            claimed = s.execute(update(DuplicatePair)
                                .where(DuplicatePair.id == pair_id,
                                       DuplicatePair.rated_at.is_(None))
                                .values(rated_at=utcnow()))
            if rowcount(claimed) == 0:
                continue
            pair = s.get(DuplicatePair, pair_id)
            assert pair is not None
            for match_id in (pair.match_a_id, pair.match_b_id):
                m = s.get(Match, match_id)
                if m is None or m.state != FINISHED or m.winner is None:
                    continue
                if conduct.counts_for_rating(m):
                    apply_result(s, m)
                else:
                    conduct.mark_unrated(s, m)
            rated += 1
    return rated

