"""The ladder: keep N matches going per rules profile, pair informatively, rate with openskill.

- Ratings: openskill's Plackett-Luce model, one rating per bot per profile (`db.ratings`). A
  finished ladder match updates both ratings once (guarded by `ladder_matches.rated_at`).
  Shown as mu ± 2·sigma; the standings sort by the conservative ordinal mu - 3·sigma. A bot is
  *provisional* until it has played `PROVISIONAL_MATCHES` rated matches.
- Who plays: every house bot, and every remote bot that is connected now (a Play stream of it is
  open: its presence heartbeat in `bots.last_seen_at` is fresh, see `services.live.presence`)
  and takes pairings (not connected for challenges only, nor finishing its running matches:
  `db.presence.takes_pairings`), with no ladder match running (one at a time). A bot that
  disconnects is not given new matches; one that does not answer in a running match forfeits
  on time, per the service's policy. The service checks again as it creates the match (under a
  lock of the bots' rows); a pairing it refuses so is skipped until the next tick.
- Pairings: among the eligible pairs not already playing each other, weighted by how close the
  match is (openskill's draw probability) times how uncertain the two ratings are (sigma), so
  close and little-known pairings are chosen most; random among them, so the ladder varies.
"""

from __future__ import annotations

import logging
import os
import random
from datetime import UTC, datetime

import grpc
from openskill.models import PlackettLuce
from sqlalchemy import CursorResult, exists, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from db.base import session_factory
from db.models import ABORTED, FINISHED, HOUSE, Bot, Match
from db.presence import takes_pairings
from db.ratings import LadderMatch, Rating, RatingHistory
from db.standings import (  # noqa: F401  (PROVISIONAL_MATCHES: part of this module's API)
    PROVISIONAL_MATCHES,
    Standing,
    running_ladder,
    running_ladder_counts,
)
from db.standings import standings as db_standings
from services.core.config import settings
from workers import conduct
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
    return int(os.environ.get("BUMMERL_LADDER_MATCHES", "2"))


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


def apply_result(s: Session, match: Match) -> None:
    """Update both bots' ratings in `match.profile` for finished `match` (its winner), in the
    caller's transaction, with a history row each. The caller makes sure it happens once."""
    assert match.winner is not None
    rows = [_rating_row(s, match.bot_id(seat), match.profile, lock=True) for seat in (0, 1)]
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
def eligible_bots(s: Session, profile: str, heartbeat_s: float | None = None) -> list[Bot]:
    """House bots, and connected remote bots that take pairings, with no ladder match
    running; never a suspended bot."""
    heartbeat_s = settings().heartbeat_s if heartbeat_s is None else heartbeat_s
    busy = running_ladder_counts(s, profile)
    moment = now()

    def available(bot: Bot) -> bool:
        return busy.get(bot.id, 0) == 0 and takes_pairings(bot, heartbeat_s, moment)

    return [bot for bot in s.scalars(select(Bot).where(Bot.suspended_at.is_(None))
                                     .order_by(Bot.id))
            if bot.kind == HOUSE or available(bot)]


def pair_weight(a: Rating, b: Rating) -> float:
    """How informative a match between a and b is: closeness × uncertainty."""
    ra, rb = MODEL.rating(mu=a.mu, sigma=a.sigma), MODEL.rating(mu=b.mu, sigma=b.sigma)
    closeness = MODEL.predict_draw([[ra], [rb]])
    uncertainty = (a.sigma + b.sigma) / (2 * MODEL.sigma)
    return max(1e-6, closeness * (0.25 + uncertainty))


def choose_pair(ratings: dict[int, Rating], playing_pairs: set[frozenset[int]],
                rng: random.Random) -> tuple[int, int] | None:
    """A pair of bot ids (random seat order), weighted by `pair_weight`; None if none."""
    ids = sorted(ratings)
    pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]
             if frozenset((a, b)) not in playing_pairs]
    if not pairs:
        return None
    weights = [pair_weight(ratings[a], ratings[b]) for a, b in pairs]
    a, b = rng.choices(pairs, weights=weights)[0]
    return (a, b) if rng.random() < 0.5 else (b, a)


def create_match(bot_ids: tuple[int, int], profile: str) -> int:
    """Create a ladder match through the engine service (CreateMatch over gRPC with the house
    token, `workers.service`); its id. The service records it as a ladder match in the same
    transaction, so a match whose answer is lost (a time-out) is still rated and still counts
    as running; the service announces its first turn."""
    from workers.service import service

    return service().create_match(bot_ids, profile, ladder=True)


def start_matches(profile: str, target: int, sessions: sessionmaker[Session] | None = None,
                  rng: random.Random | None = None) -> list[int]:
    """Create ladder matches in `profile` until `target` are running; the new match ids."""
    sessions = sessions or session_factory()
    rng = rng or random.Random()
    created: list[int] = []
    with sessions() as s:
        running = running_ladder(s, profile)
        need = target - len(running)
        if need <= 0:
            return created
        bots = eligible_bots(s, profile)
        try:
            ratings = {bot.id: _rating_row(s, bot.id, profile) for bot in bots}
            s.commit()
        except IntegrityError:  # a rating row created concurrently: try again next tick
            log.info("ladder %s: rating rows raced; next tick", profile)
            return created
        playing = {frozenset((m.bot0_id, m.bot1_id)) for m in running}
    remote = {bot.id for bot in bots if bot.kind != HOUSE}
    for _ in range(need):
        pair = choose_pair(ratings, playing, rng)
        if pair is None:
            break
        try:
            created.append(create_match(pair, profile))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.FAILED_PRECONDITION:  # type: ignore[attr-defined]
                raise
            # e.g. a bot said meanwhile that it takes no pairing: the next tick decides again
            log.info("ladder %s: pairing %s refused: %s", profile, pair,
                     e.details())  # type: ignore[attr-defined]
            playing.add(frozenset(pair))  # not this pair again in this tick
            for bot_id in pair:
                if bot_id in remote:
                    ratings.pop(bot_id, None)
            continue
        playing.add(frozenset(pair))
        for bot_id in pair:  # a remote bot plays one ladder match at a time
            if bot_id in remote:
                ratings.pop(bot_id, None)
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
        rate_finished(sessions)
        return started


