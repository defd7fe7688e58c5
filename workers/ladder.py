"""The ladder: keep N matches going per rules profile, pair informatively, rate with openskill.

- Ratings: openskill's Plackett-Luce model, one rating per bot per profile (`db.ratings`). A
  finished ladder match updates both ratings once (guarded by `ladder_matches.rated_at`).
  Shown as mu ± 2·sigma; the standings sort by the conservative ordinal mu - 3·sigma. A bot is
  *provisional* until it has played `PROVISIONAL_MATCHES` rated matches.
- Versions: a bot's rating carries across its versions (a new version is most often a small
  change of the old). A rated match in which it ran another version than its rating last saw
  (`ratings.version`, from `matches.version0`/`version1`) first widens its sigma, once per
  change: sigma <- max(sigma, min(sigma0, sigma + sigma0 / 3)), sigma0 openskill's initial
  sigma (`widen_for_version`; why this much: docs/versions.md).
- Who plays: every house bot, and every remote bot that is connected now (a Play stream of it is
  open: its presence heartbeat in `bots.last_seen_at` is fresh, see `services.live.presence`)
  and takes pairings (not connected for challenges only, nor finishing its running matches:
  `db.presence.takes_pairings`), with no ladder match running (one at a time). A bot that
  disconnects is not given new matches; one that does not answer in a running match forfeits
  on time, per the service's policy. The service checks again as it creates the match (under a
  lock of the bots' rows); a pairing it refuses so is skipped until the next tick. A remote bot
  playing for an event (a running tournament or version-test match, or a pair being started)
  gets no ladder match meanwhile.
- Pairings (`workers.ladder_pairing`): fair and informative. A remote bot that has waited
  `BUMMERL_LADDER_MAX_WAIT_S` for a ladder match is paired in the next tick if any opponent is
  free (on top of the target); otherwise bots are offered a match by uncertainty (sigma) plus
  wait, and each opponent is drawn weighted by how near its mu is and its own priority, never
  a pair already playing, nor one that met `BUMMERL_LADDER_PAIR_CAP` times in the last 24 h
  while the bot has another opponent to play (the cap never leaves the ladder idle).
- Idle: when no new pairing is possible although the profile is under its target,
  `db.ladder_state` says why and when the next match can come (the dashboard's standings
  and the terminal of `bummerl up` show it); the tick logs it once when it changes.
"""

from __future__ import annotations

import logging
import os
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import grpc
from openskill.models import PlackettLuce
from sqlalchemy import CursorResult, exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from db import ladder_state
from db.base import aware, session_factory
from db.models import ABORTED, FINISHED, HOUSE, Bot, Match
from db.ratings import LadderMatch, Rating, RatingHistory
from db.settings import settings
from db.standings import (  # noqa: F401  (PROVISIONAL_MATCHES: part of this module's API)
    PROVISIONAL_MATCHES,
    Standing,
    running_ladder,
    running_ladder_counts,
)
from db.standings import standings as db_standings
from workers import conduct
from workers import ladder_pairing as pairing
from workers.locks import only_one

log = logging.getLogger(__name__)

MODEL = PlackettLuce()


def rowcount(result: object) -> int:
    """Rows an UPDATE changed."""
    assert isinstance(result, CursorResult)
    return result.rowcount


def now() -> datetime:
    return datetime.now(UTC)


def target_matches() -> int:
    return ladder_state.target_matches()


def profiles() -> list[str]:
    return [p.strip() for p in os.environ.get("BUMMERL_LADDER_PROFILES", "soft").split(",")
            if p.strip()]


# --- ratings ---------------------------------------------------------------------------------
def _rating_row(s: Session, bot_id: int, profile: str, lock: bool = False) -> Rating:
    query = select(Rating).where(Rating.bot_id == bot_id, Rating.profile == profile)
    if lock:
        query = query.with_for_update()
    row = s.scalar(query)
    if row is None:
        fresh = MODEL.rating()
        row = Rating(bot_id=bot_id, profile=profile, mu=fresh.mu, sigma=fresh.sigma, matches=0,
                     wins=0, updated_at=now())
        s.add(row)
        s.flush()
    return row


VERSION_WIDENING = 1 / 3  # of openskill's initial sigma, added to sigma at a version change


def widen_for_version(row: Rating, version: str | None) -> bool:
    """Before rating a match in which the bot ran `version`: if its rating last saw another
    one, widen sigma by a third of the initial sigma (never past the initial sigma, never
    narrower than it was); record `version` as seen. True if it widened. A rating that has
    seen no match yet just records the version (its sigma is the initial one anyway)."""
    widened = row.matches > 0 and row.version != version
    if widened:
        initial = MODEL.sigma
        row.sigma = max(row.sigma, min(initial, row.sigma + VERSION_WIDENING * initial))
    row.version = version
    return widened


def apply_result(s: Session, match: Match) -> None:
    """Update both bots' ratings in `match.profile` for finished `match` (its winner), in the
    caller's transaction, with a history row each (after a version change, the widened sigma
    first: `widen_for_version`). The caller makes sure it happens once."""
    assert match.winner is not None
    rows = [_rating_row(s, match.bot_id(seat), match.profile, lock=True) for seat in (0, 1)]
    for seat, row in enumerate(rows):
        if widen_for_version(row, match.version0 if seat == 0 else match.version1):
            log.info("ladder: bot %d runs version %r in match %d: its %s sigma widens to %.3f",
                     row.bot_id, row.version, match.id, row.profile, row.sigma)
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in rows]
    ranks = [0.0, 1.0] if match.winner == 0 else [1.0, 0.0]
    new = MODEL.rate(teams, ranks=ranks)
    for seat, (row, [rating]) in enumerate(zip(rows, new, strict=True)):
        row.mu, row.sigma = rating.mu, rating.sigma
        row.matches += 1
        row.wins += int(match.winner == seat)
        row.updated_at = now()
        s.add(RatingHistory(bot_id=row.bot_id, profile=row.profile, match_id=match.id,
                            mu=row.mu, sigma=row.sigma, at=row.updated_at))


def rate_match(match_id: int, sessions: sessionmaker[Session] | None = None) -> bool:
    """Update both ratings for finished ladder match `match_id`, once; True if this call did."""
    sessions = sessions or session_factory()
    try:
        with sessions.begin() as s:
            match = s.get(Match, match_id)
            if match is None or match.state != FINISHED or match.winner is None:
                return False
            if not conduct.counts_for_rating(match):  # e.g. an early illegal forfeit
                conduct.mark_unrated(s, match)
                s.execute(update(LadderMatch).where(LadderMatch.match_id == match_id,
                                                    LadderMatch.rated_at.is_(None))
                          .values(rated_at=now()))
                return False
            claimed = s.execute(update(LadderMatch)
                                .where(LadderMatch.match_id == match_id,
                                       LadderMatch.rated_at.is_(None))
                                .values(rated_at=now()))
            if rowcount(claimed) == 0:
                return False  # not a ladder match, or rated already
            apply_result(s, match)
            return True
    except IntegrityError:  # a rating row created concurrently: the next tick rates it
        log.info("rating match %s raced with another; will retry", match_id)
        return False


def rate_finished(sessions: sessionmaker[Session] | None = None) -> int:
    """Rate every finished, unrated ladder match; how many. A match that cannot be rated is
    logged and left for the next tick: it never stops the others, nor the tick's pairing."""
    sessions = sessions or session_factory()
    with sessions.begin() as s:
        # An aborted ladder match is never rated: settle it, so that the unrated ladder rows
        # each tick reads stay the running and the just finished ones, however long the
        # history (before, every aborted match stayed among them for good).
        aborted = exists().where(Match.id == LadderMatch.match_id, Match.state == ABORTED)
        s.execute(update(LadderMatch).where(LadderMatch.rated_at.is_(None), aborted)
                  .values(rated_at=now()), execution_options={"synchronize_session": False})
    with sessions() as s:
        ids = list(s.scalars(select(LadderMatch.match_id)
                             .join(Match, Match.id == LadderMatch.match_id)
                             .where(LadderMatch.rated_at.is_(None), Match.state == FINISHED)
                             .order_by(LadderMatch.match_id)))
    rated = 0
    for match_id in ids:
        try:
            rated += rate_match(match_id, sessions)
        except Exception:  # noqa: BLE001  (its own problem; the next tick tries it again)
            log.exception("ladder: rating match %s failed; the next tick retries", match_id)
    return rated


# --- standings -------------------------------------------------------------------------------
def standings(profile: str = "soft", sessions: sessionmaker[Session] | None = None
              ) -> list[Standing]:
    """Every bot with a rating in `profile`, best (conservative ordinal) first (`db.standings`)."""
    return db_standings(profile, sessions or session_factory(), settings().heartbeat_s)


# --- pairing ---------------------------------------------------------------------------------
in_events = ladder_state.in_events


def eligible_bots(s: Session, profile: str, heartbeat_s: float | None = None) -> list[Bot]:
    """House bots, and connected remote bots that take pairings, with no ladder match
    running in `profile` and no event match running (a tournament's or a version test's);
    never a suspended bot (`db.ladder_state.free_bots`)."""
    heartbeat_s = settings().heartbeat_s if heartbeat_s is None else heartbeat_s
    return ladder_state.free_bots(s, profile, heartbeat_s, now())


_said: dict[str, str] = {}  # profile -> the idle reason last logged


def report_idle(profile: str, sessions: sessionmaker[Session]) -> ladder_state.LadderState:
    """The ladder's state in `profile` (`db.ladder_state`); logged once each time it turns
    idle for a new reason (and once when it pairs again)."""
    with sessions() as s:
        state = ladder_state.ladder_state(s, profile, settings().heartbeat_s, target_matches())
    said = _said.get(profile)
    if state.idle and said != state.reason:
        log.info("ladder %s: %s; next match %s", profile, state.reason, state.next_match)
        _said[profile] = state.reason
    elif not state.idle and said:
        log.info("ladder %s: pairing again", profile)
        _said.pop(profile)
    return state


WAIT_HORIZON_S = 86400.0  # waits count up to a day (the matches of the last day are read)


def _last_ended(s: Session, ladder_profile: str | None, since: datetime
                ) -> dict[int, datetime]:
    """The latest end from `since` on of a match per bot (either seat): of a ladder match in
    `ladder_profile`, or (None) of an event match."""
    out: dict[int, datetime] = {}
    for column in (Match.bot0_id, Match.bot1_id):
        query = select(column, func.max(Match.finished_at)).where(
            Match.finished_at >= since).group_by(column)
        if ladder_profile is None:
            query = query.where(Match.event_id.is_not(None))
        else:
            query = query.join(LadderMatch, LadderMatch.match_id == Match.id).where(
                LadderMatch.profile == ladder_profile)
        for bot_id, at in s.execute(query):
            if at is None:
                continue
            ended = aware(at)
            if bot_id not in out or ended > out[bot_id]:
                out[bot_id] = ended
    return out


def waits(s: Session, profile: str, bots: list[Bot], moment: datetime) -> dict[int, float]:
    """How long each bot has waited for a ladder match in `profile`, in seconds: since the
    latest of its last ladder match's end in the profile, its last event match's end, when it
    connected (remote), was reinstated, or was registered; at most `WAIT_HORIZON_S` (only the
    last day's matches are read). A house bot with a ladder match running waits 0."""
    horizon = moment - timedelta(seconds=WAIT_HORIZON_S)
    ladder_end = _last_ended(s, profile, horizon)
    event_end = _last_ended(s, None, horizon)
    busy = running_ladder_counts(s, profile)
    out = {}
    for bot in bots:
        if busy.get(bot.id):
            out[bot.id] = 0.0
            continue
        marks = [aware(bot.created_at), aware(bot.reinstated_at), ladder_end.get(bot.id),
                 event_end.get(bot.id)]
        if bot.kind != HOUSE:
            marks.append(aware(bot.connected_since))
        since = max(m for m in marks if m is not None)
        out[bot.id] = min(WAIT_HORIZON_S, max(0.0, (moment - since).total_seconds()))
    return out


def pair_counts(s: Session, profile: str, since: datetime) -> dict[frozenset[int], int]:
    """Ladder matches in `profile` created from `since` on, per pair of bots (any seats, any
    end: running, finished or aborted)."""
    out: dict[frozenset[int], int] = {}
    for a, b, n in s.execute(
            select(Match.bot0_id, Match.bot1_id, func.count())
            .join(LadderMatch, LadderMatch.match_id == Match.id)
            .where(LadderMatch.profile == profile, LadderMatch.created_at >= since)
            .group_by(Match.bot0_id, Match.bot1_id)):
        out[pairing.key(a, b)] = out.get(pairing.key(a, b), 0) + n
    return out


def create_match(bot_ids: tuple[int, int], profile: str) -> int:
    """Create a ladder match through the engine service (CreateMatch over gRPC with the house
    token, `workers.service`); its id. The service records it as a ladder match in the same
    transaction, so a match whose answer is lost (a time-out) is still rated and still counts
    as running; the service announces its first turn."""
    from workers.service import service

    return service().create_match(bot_ids, profile, ladder=True)


def start_matches(profile: str, target: int, sessions: sessionmaker[Session] | None = None,
                  rng: random.Random | None = None, *, max_wait_s: float | None = None,
                  pair_cap: int | None = None) -> list[int]:
    """Create ladder matches in `profile` until `target` are running, plus one for each
    starving bot (`workers.ladder_pairing`); the new match ids. `max_wait_s` and `pair_cap`:
    `BUMMERL_LADDER_MAX_WAIT_S` and `BUMMERL_LADDER_PAIR_CAP` unless given."""
    sessions = sessions or session_factory()
    rng = rng or random.Random()
    max_wait_s = settings().ladder_max_wait_s if max_wait_s is None else max_wait_s
    pair_cap = settings().ladder_pair_cap if pair_cap is None else pair_cap
    created: list[int] = []
    moment = now()
    with sessions() as s:
        running = running_ladder(s, profile)
        need = target - len(running)
        bots = eligible_bots(s, profile)
        try:
            ratings = {bot.id: _rating_row(s, bot.id, profile) for bot in bots}
            s.commit()
        except IntegrityError:  # a rating row created concurrently: try again next tick
            log.info("ladder %s: rating rows raced; next tick", profile)
            return created
        waited = waits(s, profile, bots, moment)
        met = pair_counts(s, profile, moment - timedelta(days=1))
        playing = {pairing.key(m.bot0_id, m.bot1_id) for m in running}
    pool = {bot.id: pairing.Candidate(bot.id, bot.kind != HOUSE, ratings[bot.id].mu,
                                      ratings[bot.id].sigma, waited[bot.id]) for bot in bots}
    while True:
        pair = pairing.next_pair(pool, playing, met, pair_cap=pair_cap, max_wait_s=max_wait_s,
                                 room=len(created) < need, rng=rng)
        if pair is None:
            break
        playing.add(pairing.key(*pair))  # not this pair again in this tick
        try:
            created.append(create_match(pair, profile))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.FAILED_PRECONDITION:  # type: ignore[attr-defined]
                raise
            # e.g. a bot said meanwhile that it takes no pairing: the next tick decides again
            log.info("ladder %s: pairing %s refused: %s", profile, pair,
                     e.details())  # type: ignore[attr-defined]
        else:
            met[pairing.key(*pair)] = met.get(pairing.key(*pair), 0) + 1
        for bot_id in pair:
            if pool[bot_id].remote:  # a remote bot plays one ladder match at a time
                pool.pop(bot_id)
            else:  # a house bot just got a match: it waits no more
                pool[bot_id] = replace(pool[bot_id], wait_s=0.0)
    if created:
        log.info("ladder %s: started matches %s", profile, created)
    return created


def tick(sessions: sessionmaker[Session] | None = None) -> dict[str, list[int]]:
    """The scheduler's periodic step: rate what finished, then top up every profile."""
    sessions = sessions or session_factory()
    with only_one(sessions, "ladder-tick") as mine:  # two at once would start too many
        if not mine:
            log.info("ladder tick skipped: another worker is running one")
            return {}
        rate_finished(sessions)
        conduct.suspend_forfeiters(sessions)
        started = {}
        for profile in profiles():
            started[profile] = start_matches(profile, target_matches(), sessions)
            report_idle(profile, sessions)
        rate_finished(sessions)
        return started


