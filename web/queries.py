"""Read-only data access for the dashboard: plain functions of a session factory that return
plain dicts (the JSON endpoints return them as they are; the templates render them).

Only public information leaves here: the action log (public actions), hand results, counters;
a match's seed only once it is over (the seed decides every deck).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, and_, case, func, or_, select, union
from sqlalchemy.orm import Session, sessionmaker

from db import ladder_state as ladder_states
from db import records
from db.base import aware, utcnow
from db.batch import SIM_RUNNING, Simulation, SimulationChunk
from db.events import Tournament
from db.models import (
    ABORTED,
    ARCHIVE_RECORDS,
    ARCHIVE_TABLE,
    FINISHED,
    HOUSE,
    ORIGIN_TOURNAMENT,
    ORIGINS,
    RUNNING,
    ActionArchive,
    ActionLog,
    Bot,
    Hand,
    Match,
    Refusal,
)
from db.pairs import DuplicatePair, counting
from db.presence import is_connected
from db.progress import progress
from db.ratings import LadderMatch, Rating, RatingHistory
from db.settings import settings
from db.standings import INITIAL_MU, Standing, rank_of
from db.standings import standings as ladder_standings
from engine import Profile
from web import table
from web.transcript import describe

PROFILES = [p.value for p in Profile]
STATES = [RUNNING, FINISHED, ABORTED]
REFUSALS_SHOWN = 20  # the latest refused actions a match page lists


class Missing(LookupError):
    """No such thing (a 404); the message names what is missing."""


class Invalid(ValueError):
    """A malformed request (a 400); the message says what is wrong."""


class Conflict(Exception):
    """A request the state of things refuses for now (a 409); the message says why."""


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise Missing(f"unknown rules profile {profile!r}: one of {', '.join(PROFILES)}")
    return profile


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return aware(moment).isoformat()


# --- matches ---------------------------------------------------------------------------------
def _seat(bot: Bot) -> dict[str, Any]:
    return {"bot_id": bot.id, "name": bot.name, "kind": bot.kind,
            "strategy": bot.house_strategy, "suspended_at": iso(bot.suspended_at),
            "suspended_reason": bot.suspended_reason}


def legs_in_play(s: Session, pair_ids: set[int]) -> set[int]:
    """The duplicate pairs among `pair_ids` whose other leg has not ended: a match of theirs
    runs, or the pair is open with a leg not made yet (leg 1 is made once leg 0 is over). A
    leg of such a pair shows neither its seed nor its deals, even when it is over: the other
    leg has the same seed, so the same deck for every hand number (docs/events.md, "What is
    mirrored"). The exports' rule (`db.records.pairs_in_play`)."""
    return records.pairs_in_play(s, pair_ids)


def match_summary(m: Match, ladder_profile: str | None = None,
                  pair_in_play: bool = False) -> dict[str, Any]:
    """What the lists show of a match (public; the seed only once it is over, and for a leg
    of a duplicate pair once both legs are: `pair_in_play`)."""
    over = m.state != RUNNING  # finished or aborted: its last hand is no longer in play
    house = HOUSE in (m.bot0.kind, m.bot1.kind)
    return {
        "id": m.id,
        "state": m.state,
        "profile": m.profile,
        "ladder": ladder_profile is not None,
        "seats": [_seat(m.bot0), _seat(m.bot1)],
        "versions": [m.version0, m.version1],  # what each seat's bot said it runs (or None)
        "counters": [m.counter0, m.counter1],
        "hand_number": m.hand_number,  # from 0, as in the engine, the API and the kit
        "seq": m.seq,
        "to_act": m.to_act if not over else None,
        "winner": m.winner,
        "schneider": m.schneider,
        "end_reason": m.end_reason,
        "end_detail": m.end_detail,
        "forfeit_seat": m.forfeit_seat,
        "illegal": [m.illegal0, m.illegal1],
        "bank_ms": [m.bank0_ms, m.bank1_ms],
        "move_ms": m.move_ms,
        "bank_ms_start": m.bank_ms,
        "max_illegal": m.max_illegal,
        # a house bot's move time is the service's setting, not the match's (no bank)
        "house_move_ms": settings().house_move_ms if house else None,
        "deadline_at": iso(m.deadline_at) if not over else None,
        "turn_started_at": iso(m.turn_started_at) if not over else None,
        "created_at": iso(m.created_at),
        "finished_at": iso(m.finished_at),
        "seed": m.seed if over and not pair_in_play else None,
        "pair_in_play": pair_in_play,  # a leg of a pair whose other leg still runs
    }


@dataclass(frozen=True)
class MatchFilter:
    state: str | None = None
    bot_id: int | None = None
    profile: str | None = None
    origin: str | None = None  # ORIGINS


def bot_exists(sessions: sessionmaker[Session], bot_id: int) -> Bot:
    with sessions() as s:
        bot = s.get(Bot, bot_id)
    if bot is None:
        raise Missing(f"no bot with id {bot_id}")
    return bot


COUNT_CAP = 10_000  # matches counted at most (beyond: "10,000+", and keyset pages)


def list_matches(sessions: sessionmaker[Session], where: MatchFilter, page: int,
                 per_page: int, before: int | None = None) -> dict[str, Any]:
    """One page of matches, running ones first, then newest first.

    The matches that are over are counted up to `COUNT_CAP` (`more` says there are more), so
    neither the count nor a page costs more than that many index entries, however long the
    history: past the numbered pages, `before` (a match id: the `next_before` of a page) gives
    the matches that are over older than it, by keyset on the primary key."""
    if where.state is not None and where.state not in STATES:
        raise Invalid(f"unknown match state {where.state!r}: {', '.join(STATES)}")
    if where.profile is not None:
        check_profile(where.profile)
    if where.origin is not None and where.origin not in ORIGINS:
        raise Invalid(f"unknown origin {where.origin!r}: {', '.join(ORIGINS)}")
    if where.bot_id is not None:
        bot_exists(sessions, where.bot_id)
    if page < 1:
        raise Invalid(f"page must be 1 or more, not {page}")
    if before is not None and before < 1:
        raise Invalid(f"before must be a match id (1 or more), not {before}")
    conditions = []
    if where.state:
        conditions.append(Match.state == where.state)
    if where.profile:
        conditions.append(Match.profile == where.profile)
    if where.origin:
        conditions.append(Match.origin == where.origin)
    if where.bot_id is not None:
        conditions.append(or_(Match.bot0_id == where.bot_id, Match.bot1_id == where.bot_id))
    done = [Match.state != RUNNING, *conditions]
    with sessions() as s:
        running = s.scalar(select(func.count()).select_from(Match)
                           .where(Match.state == RUNNING, *conditions)) or 0
        over = 0 if where.state == RUNNING else s.scalar(select(func.count()).select_from(
            select(Match.id).where(*done).limit(COUNT_CAP + 1).subquery())) or 0
        more = over > COUNT_CAP
        over = min(over, COUNT_CAP)
        total = running + over
        pages = max(1, math.ceil(total / per_page))
        if before is not None:  # a keyset page: the matches over, older than `before`
            rows = _match_rows(s, [*done, Match.id < before], 0, per_page + 1)
            items = _summaries(s, rows[:per_page])
            return {"matches": items, "page": None, "pages": pages, "per_page": per_page,
                    "total": total, "running": running, "more": more, "before": before,
                    "next_before": items[-1]["id"] if len(rows) > per_page else None}
        if page > pages:
            raise Missing(f"page {page} does not exist: there {'is' if pages == 1 else 'are'} "
                          f"{pages} page{'s' * (pages != 1)}"
                          + (" numbered; older matches: ?before=ID" if more else ""))
        # Running matches first, then the others, each newest first: two walks down the
        # primary key (the running ones by the state index) instead of sorting every match.
        start = (page - 1) * per_page
        rows = []
        if start < running:
            rows += _match_rows(s, [Match.state == RUNNING, *conditions], start, per_page)
        if len(rows) < per_page and over:
            rows += _match_rows(s, done, max(0, start - running), per_page - len(rows))
        items = _summaries(s, rows)
    last = page == pages and more and items
    return {"matches": items, "page": page, "pages": pages, "per_page": per_page,
            "total": total, "running": running, "more": more, "before": None,
            "next_before": items[-1]["id"] if last else None}


def _summaries(s: Session, rows: list[Any]) -> list[dict[str, Any]]:
    """The summaries of `rows` (a match and its ladder profile each), a pair's leg without
    its seed while the other leg has not ended."""
    in_play = legs_in_play(s, {m.pair_id for m, _ in rows if m.pair_id is not None})
    return [match_summary(m, lp, m.pair_id in in_play) for m, lp in rows]


def _match_rows(s: Session, conditions: list[Any], offset: int, limit: int) -> list[Any]:
    """The matches `conditions` hold, newest first, from `offset` on: their ids first (the
    primary key's index alone), then those rows with their bots and ladder profile."""
    ids = list(s.scalars(select(Match.id).where(*conditions).order_by(Match.id.desc())
                         .offset(offset).limit(limit)))
    if not ids:
        return []
    return list(s.execute(
        select(Match, LadderMatch.profile)
        .outerjoin(LadderMatch, LadderMatch.match_id == Match.id)
        .where(Match.id.in_(ids)).order_by(Match.id.desc())).unique().all())


def event_of_match(s: Session, m: Match) -> dict[str, Any] | None:
    """The event a match belongs to, for its page: kind (`tournament` or `test`, its
    `origin`), id, name (a tournament's), round, pair and leg, and whether the pair counts
    (`db.pairs.counting`); None for a match of no event."""
    if m.event_id is None:
        return None
    name = None
    if m.origin == ORIGIN_TOURNAMENT:
        name = s.scalar(select(Tournament.name).where(Tournament.id == m.event_id))
    pair = s.execute(select(DuplicatePair.state, DuplicatePair.forfeit).where(
        DuplicatePair.id == m.pair_id)).first() if m.pair_id is not None else None
    return {"kind": m.origin, "id": m.event_id, "name": name, "round": m.event_round,
            "pair_id": m.pair_id, "leg": m.pair_leg,
            "counts": counting(pair.state, pair.forfeit) if pair is not None else None}


def _hand(h: Hand, seq: int | None = None) -> dict[str, Any]:
    """A hand's row; with `seq`, as it stood after the match's first `seq` actions."""
    over = h.winner is not None and (seq is None or (h.last_seq is not None and h.last_seq < seq))
    return {
        "number": h.number,
        "dealer": h.dealer,
        "first_seq": h.first_seq,
        "last_seq": h.last_seq,
        "over": over,
        "winner": h.winner if over else None,
        "reason": h.reason if over else None,
        "game_points": h.game_points if over else None,
        "points": [h.points0, h.points1] if over else None,
        "tricks": [h.tricks0, h.tricks1] if over else None,
        "finished_at": iso(h.finished_at) if over else None,
    }


def match_detail(sessions: sessionmaker[Session], match_id: int) -> dict[str, Any]:
    """A match with its hands, each with its part of the action log (a readable transcript)."""
    with sessions() as s:
        m = s.get(Match, match_id)
        if m is None:
            raise Missing(f"no match with id {match_id}")
        ladder_profile = s.scalar(select(LadderMatch.profile)
                                  .where(LadderMatch.match_id == match_id))
        in_play = m.pair_id is not None and bool(legs_in_play(s, {m.pair_id}))
        summary = match_summary(m, ladder_profile, in_play)
        summary["event"] = event_of_match(s, m)
        seed = m.seed  # stays here: it decides the deck of the hand in play
        # Each statement may see a later state than the match row (autocommit reads, READ
        # COMMITTED): everything is cut at the row's seq, so the page is one consistent state.
        at = m.seq
        hands = [_hand(h, at) for h in s.scalars(
            select(Hand).where(Hand.match_id == match_id, Hand.first_seq <= at)
            .order_by(Hand.first_seq))]
        actions: list[ActionLog] | list[ActionArchive] = []
        if m.actions_archive == ARCHIVE_TABLE:
            actions = list(s.scalars(select(ActionArchive).where(
                ActionArchive.match_id == match_id, ActionArchive.seq < at)
                .order_by(ActionArchive.seq)))
        elif m.actions_archive != ARCHIVE_RECORDS:
            actions = list(s.scalars(select(ActionLog).where(
                ActionLog.match_id == match_id, ActionLog.seq < at).order_by(ActionLog.seq)))
        refusals = list(s.scalars(select(Refusal).where(Refusal.match_id == match_id,
                                                        Refusal.seq <= at)
                                  .order_by(Refusal.id.desc()).limit(REFUSALS_SHOWN)))
    names = [seat["name"] for seat in summary["seats"]]
    for hand in hands:
        hand["actions"] = []
    at = 0
    for a in actions:
        while at + 1 < len(hands) and hands[at + 1]["first_seq"] <= a.seq:
            at += 1
        entry = {"seq": a.seq, "seat": a.seat, "name": names[a.seat], "action": a.action,
                 "text": describe(a.action), "at": iso(a.created_at)}
        if hands:
            hands[at]["actions"].append(entry)
    for hand in hands:
        number_tricks(hand["actions"])
    summary["hands"] = hands
    summary["table"] = None
    # `bummerl db prune` moved the log: to the archive table (shown as before) or to record
    # files (the hands' results stay; the transcript and the table are gone from here)
    summary["actions_archive"] = m.actions_archive
    summary["actions_pruned_at"] = iso(m.actions_pruned_at)
    if hands and m.actions_archive != ARCHIVE_RECORDS:
        current = hands[-1]
        dealt = table.deal(seed, summary["profile"], current["number"], current["dealer"])
        steps = [(a["seat"], a["action"]) for a in current["actions"]]
        summary["table"] = table.public_table(table.play(dealt, steps),
                                              tuple(summary["counters"]), current["number"])
    # A refused action of the hand in play tells what its seat holds: its card (a play that
    # does not follow suit), and its rule too ("R3.4": that seat could follow suit), its kind
    # (an exchange refused: no trump jack). This page is public, the opponent's included: only
    # that there was a refusal shows until that hand is over (issue 44); the refused seat was
    # told everything at once, in the answer to its action.
    in_play_from = hands[-1]["first_seq"] if hands and not hands[-1]["over"] else None
    summary["refusals"] = []
    for r in refusals:
        hidden = in_play_from is not None and r.seq >= in_play_from
        summary["refusals"].append({
            "seq": r.seq, "seat": r.seat, "name": names[r.seat],
            "action": "…" if hidden else r.action,
            "rule": None if hidden else r.rule,
            "message": "refused: the action and its rule are shown once this hand is over"
            if hidden else r.message,
            "at": iso(r.created_at)})
    return summary


def hand_replay(sessions: sessionmaker[Session], match_id: int, number: int
                ) -> dict[str, Any]:
    """Hand `number` (from 0) of a match, step by step with its deal: only once it is over."""
    with sessions() as s:
        m = s.get(Match, match_id)
        if m is None:
            raise Missing(f"no match with id {match_id}")
        if m.pair_id is not None and m.state != RUNNING and legs_in_play(s, {m.pair_id}):
            raise Missing(f"hand {number} of match {match_id} is shown once the other match "
                          "of its duplicate pair is over too: both are dealt from one seed")
        summary = match_summary(m)
        h = s.scalar(select(Hand).where(Hand.match_id == match_id, Hand.number == number))
        if h is None:
            raise Missing(f"match {match_id} has no hand {number} (its hands are numbered "
                          "from 0)")
        if h.winner is None or h.last_seq is None:
            raise Missing(f"hand {number} of match {match_id} is still in play: its deal is "
                          "shown once it is over")
        if m.actions_archive == ARCHIVE_RECORDS:
            raise Missing(f"match {match_id}'s action log was archived as match records on "
                          f"{iso(m.actions_pruned_at)} (bummerl db prune): its hands' results "
                          "are on the match page, their steps in the record files")
        hand = _hand(h)
        seed = m.seed
        log: type[ActionLog] | type[ActionArchive] = \
            ActionArchive if m.actions_archive == ARCHIVE_TABLE else ActionLog
        actions = list(s.execute(select(log.seat, log.action).where(
            log.match_id == match_id, log.seq >= h.first_seq,
            log.seq <= h.last_seq).order_by(log.seq)).all())
        hands = s.scalar(select(func.count()).select_from(Hand)
                         .where(Hand.match_id == match_id)) or 0
    names = [seat["name"] for seat in summary["seats"]]
    dealt = table.deal(seed, summary["profile"], number, hand["dealer"])
    hand["steps"] = table.replay_steps(dealt, actions, names)
    return {"match": summary, "hand": hand, "hands": hands}


def number_tricks(actions: list[dict[str, Any]]) -> None:
    """Mark each play with its trick (1, 2, ...): in the log plays come in pairs, lead first."""
    plays = 0
    for entry in actions:
        if entry["action"].startswith("play "):
            entry["trick"] = plays // 2 + 1
            entry["leads"] = plays % 2 == 0
            plays += 1


# --- ratings ---------------------------------------------------------------------------------
def rated_profiles(sessions: sessionmaker[Session]) -> list[str]:
    """The profiles with ratings or ladder matches, in the engine's order (at least 'soft')."""
    with sessions() as s:
        found = set(s.scalars(select(Rating.profile).distinct()))
        found |= set(s.scalars(select(LadderMatch.profile).distinct()))
    return [p for p in PROFILES if p in found] or [PROFILES[0]]


def ladder_state(sessions: sessionmaker[Session], profile: str) -> dict[str, Any]:
    """What the ladder of `profile` does now, and when idle why and when the next match can
    come (`db.ladder_state`)."""
    with sessions() as s:
        state = ladder_states.ladder_state(s, profile, settings().heartbeat_s)
    return {"running": state.running, "target": state.target, "free": list(state.free),
            "idle": state.idle, "reason": state.reason, "next_match": state.next_match}


def standings(sessions: sessionmaker[Session], profile: str, with_change: bool = False
              ) -> list[dict[str, Any]]:
    """The ladder's standings in `profile` (`db.standings`), best first; `with_change` adds
    each bot's `change_day`: how its mu moved over the last 24 hours (rating history)."""
    check_profile(profile)
    table = [standing_row(rank, st) for rank, st in
             enumerate(ladder_standings(profile, sessions, settings().heartbeat_s), 1)]
    if with_change:
        changes = day_changes(sessions, profile)
        for row in table:
            row["change_day"] = changes.get(row["bot_id"])
    return table


def standing_row(rank: int, st: Standing) -> dict[str, Any]:
    """A row of the standings (and of a bot's ratings)."""
    return {
        "rank": rank, "bot_id": st.bot_id, "name": st.name, "kind": st.kind,
        "strategy": st.strategy, "mu": st.mu, "sigma": st.sigma,
        "low": st.mu - 2 * st.sigma, "high": st.mu + 2 * st.sigma,
        "ordinal": st.ordinal, "matches": st.matches, "wins": st.wins,
        "win_rate": st.wins / st.matches if st.matches else None,
        "provisional": st.provisional, "playing": st.playing, "connected": st.connected,
        "suspended_at": iso(st.suspended_at), "suspended_reason": st.suspended_reason,
        "version": st.version,
    }


def day_changes(sessions: sessionmaker[Session], profile: str) -> dict[int, float]:
    """mu now minus mu 24 hours ago, per bot rated in `profile` during the last day. The rating
    a day ago is the last history row before then; a bot without one started the day at
    openskill's initial mu (or, rated before history was kept, at its first row of the day)."""
    since = utcnow() - timedelta(days=1)
    with sessions() as s:
        recent = s.execute(select(RatingHistory.bot_id, func.count(), func.min(RatingHistory.id))
                           .where(RatingHistory.profile == profile, RatingHistory.at >= since)
                           .group_by(RatingHistory.bot_id)).all()
        if not recent:
            return {}
        ids = [bot_id for bot_id, _, _ in recent]
        now_mu = dict(s.execute(select(Rating.bot_id, Rating.mu).where(
            Rating.profile == profile, Rating.bot_id.in_(ids))).all())
        matches = dict(s.execute(select(Rating.bot_id, Rating.matches).where(
            Rating.profile == profile, Rating.bot_id.in_(ids))).all())
        # each bot's last row before then: one step down its (bot, profile, at) index
        last = (select(RatingHistory.id)
                .where(RatingHistory.bot_id == Rating.bot_id, RatingHistory.profile == profile,
                       RatingHistory.at < since)
                .order_by(RatingHistory.at.desc(), RatingHistory.id.desc()).limit(1)
                .correlate(Rating).scalar_subquery())
        before = [(bot_id, found) for bot_id, found in s.execute(
            select(Rating.bot_id, last).where(Rating.profile == profile,
                                              Rating.bot_id.in_(ids))).all()
            if found is not None]
        mu_of = dict(s.execute(select(RatingHistory.id, RatingHistory.mu).where(
            RatingHistory.id.in_([i for _, i in before] + [i for _, _, i in recent])))
            .all())
    last_before = dict(before)
    out = {}
    for bot_id, count, first_id in recent:
        if bot_id not in now_mu:
            continue
        if bot_id in last_before:
            start = mu_of[last_before[bot_id]]
        elif matches.get(bot_id, 0) <= count:
            start = INITIAL_MU
        else:
            start = mu_of[first_id]
        out[bot_id] = now_mu[bot_id] - start
    return out


# --- bots ------------------------------------------------------------------------------------
def bot_detail(sessions: sessionmaker[Session], bot_id: int) -> dict[str, Any]:
    """A bot, its rating and rank in each profile it is rated in, its match counts."""
    bot = bot_exists(sessions, bot_id)
    with sessions() as s:
        profiles = sorted(s.scalars(select(Rating.profile).where(Rating.bot_id == bot_id)),
                          key=lambda p: PROFILES.index(p) if p in PROFILES else len(PROFILES))
        mine = or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id)
        counts = {state: n for state, n in s.execute(
            select(Match.state, func.count()).where(mine).group_by(Match.state))}
        # its rank in each profile, counted in the database (not the whole ladder read)
        ranks = [(p, rank_of(s, p, bot_id, settings().heartbeat_s)) for p in profiles
                 if p in PROFILES]
    ratings = [{"profile": profile, "of": of, **standing_row(rank, st)}
               for profile, found in ranks if found is not None
               for rank, of, st in [found]]
    connected = is_connected(bot, settings().heartbeat_s)
    return {**_seat(bot), "id": bot.id, "created_at": iso(bot.created_at), "ratings": ratings,
            "connected": connected,
            # what its Play streams take (db.presence): None/"all", "challenges", "none"
            "accepts": bot.accepts if connected else None,
            # since when its open connection is (None when not connected: a closed or stale
            # connection's start is no "connected since"), and when it was last seen
            "connected_since": iso(bot.connected_since) if connected else None,
            "last_seen_at": iso(bot.last_seen_at),
            "running": counts.get(RUNNING, 0), "finished": counts.get(FINISHED, 0),
            # the version it runs now: its newest Play stream's (a house bot: its strategy)
            "version": bot.version or bot.house_strategy}


def versions(sessions: sessionmaker[Session], bot_id: int) -> list[dict[str, Any]]:
    """The bot's record per version it ran (`matches.version0`/`version1`; None: none said),
    newest first: matches, finished, won, score (won / finished), first and last seen (when
    its first and latest match of that version was created)."""
    rows: list[Any] = []
    with sessions() as s:
        for seat in (0, 1):
            version = getattr(Match, f"version{seat}")
            bot_column = getattr(Match, f"bot{seat}_id")
            rows += s.execute(
                select(version, func.count(), func.sum(case((Match.state == FINISHED, 1),
                                                            else_=0)),
                       func.sum(case((and_(Match.state == FINISHED, Match.winner == seat), 1),
                                     else_=0)),
                       func.min(Match.created_at), func.max(Match.created_at))
                .where(bot_column == bot_id).group_by(version)).all()
    table: dict[str | None, dict[str, Any]] = {}
    for version, n, finished, won, first, last in rows:
        row = table.setdefault(version, {"version": version, "matches": 0, "finished": 0,
                                         "won": 0, "first": None, "last": None})
        row["matches"] += n
        row["finished"] += int(finished or 0)
        row["won"] += int(won or 0)
        first, last = aware(first), aware(last)
        row["first"] = first if row["first"] is None else min(row["first"], first)
        row["last"] = last if row["last"] is None else max(row["last"], last)
    out = sorted(table.values(), key=lambda r: r["last"], reverse=True)
    for row in out:
        row["score"] = row["won"] / row["finished"] if row["finished"] else None
        row["first"], row["last"] = iso(row["first"]), iso(row["last"])
    return out


# --- simulations -----------------------------------------------------------------------------
def _simulation(sim: Simulation) -> dict[str, Any]:
    return {"id": sim.id, "strategy_a": sim.strategy_a, "strategy_b": sim.strategy_b,
            "profile": sim.profile, "state": sim.state, "deals": sim.deals,
            "deals_done": sim.deals_done, "progress": sim.deals_done / sim.deals if sim.deals
            else 0.0, "decision": sim.decision, "sprt": sim.sprt_elo0 is not None,
            "created_at": iso(sim.created_at), "finished_at": iso(sim.finished_at)}


def list_simulations(sessions: sessionmaker[Session], limit: int = 100) -> list[dict[str, Any]]:
    """The latest simulations, running ones first."""
    with sessions() as s:
        sims = s.scalars(select(Simulation)
                         .order_by(case((Simulation.state == SIM_RUNNING, 0), else_=1),
                                   Simulation.id.desc()).limit(limit))
        return [_simulation(sim) for sim in sims]


def simulation_detail(sessions: sessionmaker[Session], sim_id: int) -> dict[str, Any]:
    """A simulation with its result table (so far, while it runs: `db.progress`)."""
    with sessions() as s:
        sim = s.get(Simulation, sim_id)
        if sim is None:
            raise Missing(f"no simulation with id {sim_id}")
        out = _simulation(sim)
    out["result"] = progress(sim_id, sessions)["result"]
    return out


# --- health ----------------------------------------------------------------------------------
STUCK_GRACE_S = 5  # the service forfeits a late seat a few times a second: this late is stuck
HOUSE_MATCHES = 20  # a house bot's latest matches per seat that its last move is looked for in


def activity(sessions: sessionmaker[Session]) -> dict[str, Any]:
    """What the health page reads from the database: stuck matches, the last hour's forfeits
    and refused actions, connected bots, and when the workers last did each kind of task."""
    now = utcnow()
    hour = now - timedelta(hours=1)
    with sessions() as s:
        stuck = [match_summary(m) for m in s.scalars(
            select(Match).where(Match.state == RUNNING,
                                Match.deadline_at < now - timedelta(seconds=STUCK_GRACE_S))
            .order_by(Match.deadline_at).limit(50)).unique()]
        forfeits = dict(s.execute(
            select(Match.end_reason, func.count()).where(
                Match.forfeit_seat.is_not(None), Match.finished_at >= hour)
            .group_by(Match.end_reason)).all())
        refused = s.scalar(select(func.count()).select_from(Refusal)
                           .where(Refusal.created_at >= hour)) or 0
        remote = list(s.scalars(select(Bot).where(Bot.connected_since.is_not(None))
                                .order_by(Bot.name)))
        heartbeat = settings().heartbeat_s
        connected = [_seat(b) for b in remote if is_connected(b, heartbeat, now)]
        moves: list[datetime | None] = []
        for house in s.scalars(select(Bot.id).where(Bot.kind == HOUSE)):
            for seat in (0, 1):  # its latest matches in each seat: the latest moves are there
                moves.append(s.scalar(select(func.max(ActionLog.created_at)).where(
                    ActionLog.match_id.in_(latest_matches(house, HOUSE_MATCHES, seat)),
                    ActionLog.seat == seat)))
        found = [t for t in moves if t is not None]
        last = {
            "house move": max((aware(t) for t in found), default=None),
            "ladder rating": aware(s.scalar(select(func.max(LadderMatch.rated_at)))),
            "ladder match started": aware(s.scalar(select(func.max(LadderMatch.created_at)))),
            "simulation chunk": aware(s.scalar(select(func.max(SimulationChunk.done_at)))),
        }
        running = s.scalar(select(func.count()).select_from(Match)
                           .where(Match.state == RUNNING)) or 0
    return {"now": iso(now), "stuck": stuck, "forfeits_hour": forfeits,
            "refused_hour": refused, "connected": connected, "running": running,
            "last_task": {k: iso(v) for k, v in last.items()}}


# --- a bot's record --------------------------------------------------------------------------
def rating_history(sessions: sessionmaker[Session], bot_id: int) -> dict[str, list[dict[str, Any]]]:
    """A bot's rating after each rated match, per profile, oldest first."""
    out: dict[str, list[dict[str, Any]]] = {}
    with sessions() as s:
        for h in s.scalars(select(RatingHistory).where(RatingHistory.bot_id == bot_id)
                           .order_by(RatingHistory.at, RatingHistory.id)):
            out.setdefault(h.profile, []).append(
                {"at": iso(h.at), "mu": h.mu, "sigma": h.sigma, "match_id": h.match_id})
    return out


def opponents(sessions: sessionmaker[Session], bot_id: int) -> list[dict[str, Any]]:
    """The bot's finished matches per opponent: played, won, lost, forfeits each way (counted
    in the database: one row per opponent and seat, not one per match)."""
    table: dict[int, dict[str, Any]] = {}
    with sessions() as s:
        for seat in (0, 1):
            mine, theirs = (Match.bot0_id, Match.bot1_id) if seat == 0 else \
                (Match.bot1_id, Match.bot0_id)
            where = [mine == bot_id, Match.state == FINISHED]
            if seat == 1:  # a bot in both seats plays seat 0 (`Match.seat_of`)
                where.append(Match.bot0_id != bot_id)
            rows = s.execute(
                select(theirs, Bot.name, func.count(),
                       func.sum(case((Match.winner == seat, 1), else_=0)),
                       func.sum(case((Match.winner == 1 - seat, 1), else_=0)),
                       func.sum(case((Match.forfeit_seat == seat, 1), else_=0)),
                       func.sum(case((Match.forfeit_seat == 1 - seat, 1), else_=0)))
                .join(Bot, Bot.id == theirs).where(*where).group_by(theirs, Bot.name))
            for other, name, played, won, lost, forfeited, opponent_forfeited in rows:
                row = table.setdefault(other, {"bot_id": other, "name": name, "played": 0,
                                               "won": 0, "lost": 0, "forfeited": 0,
                                               "opponent_forfeited": 0})
                row["played"] += played
                row["won"] += won or 0
                row["lost"] += lost or 0
                row["forfeited"] += forfeited or 0
                row["opponent_forfeited"] += opponent_forfeited or 0
    for row in table.values():
        row["win_rate"] = row["won"] / row["played"] if row["played"] else None
    return sorted(table.values(), key=lambda r: (-r["played"], r["name"]))


def forfeits(sessions: sessionmaker[Session], bot_id: int) -> dict[str | None, int]:
    """How often the bot forfeited, by reason."""
    with sessions() as s:
        forfeited = or_(and_(Match.bot0_id == bot_id, Match.forfeit_seat == 0),
                        and_(Match.bot1_id == bot_id, Match.forfeit_seat == 1))
        return dict(s.execute(select(Match.end_reason, func.count()).where(forfeited)
                              .group_by(Match.end_reason)).all())


MOVE_SAMPLE = 5000  # the bot's latest actions that the move-time figures use
MOVE_MATCHES = 300  # ... among those of its latest matches (some 35 actions of it each)


def latest_matches(bot_id: int, limit: int, seat: int | None = None) -> Any:
    """The ids of the bot's `limit` newest matches (in `seat`, or in either), as a subquery:
    walks down the (bot, id) indexes, not a scan of its whole history."""
    columns = (Match.bot0_id, Match.bot1_id) if seat is None else \
        ((Match.bot0_id, Match.bot1_id)[seat],)
    parts = [select(Match.id).where(column == bot_id).order_by(Match.id.desc()).limit(limit)
             .subquery().select() for column in columns]
    if len(parts) == 1:
        return parts[0]
    both = union(*parts).subquery()
    return select(both.c.id).order_by(both.c.id.desc()).limit(limit)


def move_times(sessions: sessionmaker[Session], bot_id: int) -> dict[str, Any]:
    """Time per move of the bot: the gap between the previous action of the match (or its
    start) and the bot's action, over its latest `MOVE_SAMPLE` actions in its latest
    `MOVE_MATCHES` matches; median and p95."""
    previous = func.lag(ActionLog.created_at, type_=DateTime(timezone=True)).over(
        partition_by=ActionLog.match_id, order_by=ActionLog.seq)
    gaps = (select(ActionLog.match_id, ActionLog.seq, ActionLog.seat, ActionLog.created_at,
                   previous.label("before"))
            .where(ActionLog.match_id.in_(latest_matches(bot_id, MOVE_MATCHES))).subquery())
    with sessions() as s:
        rows = s.execute(
            select(gaps.c.created_at, gaps.c.before, Match.created_at)
            .join(Match, Match.id == gaps.c.match_id)
            .where(or_(and_(Match.bot0_id == bot_id, gaps.c.seat == 0),
                       and_(Match.bot1_id == bot_id, gaps.c.seat == 1)))
            .order_by(gaps.c.created_at.desc()).limit(MOVE_SAMPLE)).all()
    ms = sorted(max(0.0, (aware(at) - aware(before or started)).total_seconds() * 1000)
                for at, before, started in rows)
    if not ms:
        return {"moves": 0, "median_ms": None, "p95_ms": None}
    return {"moves": len(ms), "median_ms": _quantile(ms, 0.5), "p95_ms": _quantile(ms, 0.95)}


def _quantile(ordered: list[float], q: float) -> float:
    """The q-quantile of sorted values (linear between the closest ranks)."""
    at = q * (len(ordered) - 1)
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
