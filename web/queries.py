"""Read-only data access for the dashboard: plain functions of a session factory that return
plain dicts (the JSON endpoints return them as they are; the templates render them).

Only public information leaves here: the action log (public actions), hand results, counters;
a match's seed only once it is over (the seed decides every deck).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from db.base import aware
from db.batch import SIM_RUNNING, Simulation
from db.models import FINISHED, RUNNING, ActionLog, Bot, Hand, Match
from db.presence import is_connected
from db.progress import progress
from db.ratings import LadderMatch, Rating
from db.standings import standings as ladder_standings
from engine import Profile
from services.config import settings
from web.transcript import describe

PROFILES = [p.value for p in Profile]
STATES = [RUNNING, FINISHED]


class Missing(LookupError):
    """No such thing (a 404); the message names what is missing."""


class Invalid(ValueError):
    """A malformed request (a 400); the message says what is wrong."""


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
            "strategy": bot.house_strategy}


def match_summary(m: Match, ladder_profile: str | None = None) -> dict[str, Any]:
    """What the lists show of a match (public; the seed only once it is over)."""
    over = m.state == FINISHED
    return {
        "id": m.id,
        "state": m.state,
        "profile": m.profile,
        "ladder": ladder_profile is not None,
        "seats": [_seat(m.bot0), _seat(m.bot1)],
        "counters": [m.counter0, m.counter1],
        "hand_number": m.hand_number,  # from 0, as in the engine
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
        "max_illegal": m.max_illegal,
        "deadline_at": iso(m.deadline_at) if not over else None,
        "created_at": iso(m.created_at),
        "finished_at": iso(m.finished_at),
        "seed": m.seed if over else None,
    }


@dataclass(frozen=True)
class MatchFilter:
    state: str | None = None
    bot_id: int | None = None
    profile: str | None = None


def bot_exists(sessions: sessionmaker[Session], bot_id: int) -> Bot:
    with sessions() as s:
        bot = s.get(Bot, bot_id)
    if bot is None:
        raise Missing(f"no bot with id {bot_id}")
    return bot


def list_matches(sessions: sessionmaker[Session], where: MatchFilter, page: int,
                 per_page: int) -> dict[str, Any]:
    """One page of matches, running ones first, then newest first."""
    if where.state is not None and where.state not in STATES:
        raise Invalid(f"unknown match state {where.state!r}: running or finished")
    if where.profile is not None:
        check_profile(where.profile)
    if where.bot_id is not None:
        bot_exists(sessions, where.bot_id)
    if page < 1:
        raise Invalid(f"page must be 1 or more, not {page}")
    conditions = []
    if where.state:
        conditions.append(Match.state == where.state)
    if where.profile:
        conditions.append(Match.profile == where.profile)
    if where.bot_id is not None:
        conditions.append(or_(Match.bot0_id == where.bot_id, Match.bot1_id == where.bot_id))
    with sessions() as s:
        total = s.scalar(select(func.count()).select_from(Match).where(*conditions)) or 0
        pages = max(1, math.ceil(total / per_page))
        if page > pages:
            raise Missing(f"page {page} does not exist: there {'is' if pages == 1 else 'are'} "
                          f"{pages} page{'s' * (pages != 1)}")
        rows = s.execute(
            select(Match, LadderMatch.profile)
            .outerjoin(LadderMatch, LadderMatch.match_id == Match.id)
            .where(*conditions)
            .order_by(case((Match.state == RUNNING, 0), else_=1), Match.id.desc())
            .offset((page - 1) * per_page).limit(per_page)).unique().all()
        items = [match_summary(m, lp) for m, lp in rows]
        running = s.scalar(select(func.count()).select_from(Match)
                           .where(Match.state == RUNNING, *conditions)) or 0
    return {"matches": items, "page": page, "pages": pages, "per_page": per_page,
            "total": total, "running": running}


def _hand(h: Hand) -> dict[str, Any]:
    over = h.winner is not None
    return {
        "number": h.number,
        "dealer": h.dealer,
        "first_seq": h.first_seq,
        "last_seq": h.last_seq,
        "over": over,
        "winner": h.winner,
        "reason": h.reason,
        "game_points": h.game_points,
        "points": [h.points0, h.points1] if over else None,
        "tricks": [h.tricks0, h.tricks1] if over else None,
        "finished_at": iso(h.finished_at),
    }


def match_detail(sessions: sessionmaker[Session], match_id: int) -> dict[str, Any]:
    """A match with its hands, each with its part of the action log (a readable transcript)."""
    with sessions() as s:
        m = s.get(Match, match_id)
        if m is None:
            raise Missing(f"no match with id {match_id}")
        ladder_profile = s.scalar(select(LadderMatch.profile)
                                  .where(LadderMatch.match_id == match_id))
        summary = match_summary(m, ladder_profile)
        hands = [_hand(h) for h in s.scalars(
            select(Hand).where(Hand.match_id == match_id).order_by(Hand.first_seq))]
        actions = list(s.scalars(select(ActionLog).where(ActionLog.match_id == match_id)
                                 .order_by(ActionLog.seq)))
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
    return summary


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


def standings(sessions: sessionmaker[Session], profile: str) -> list[dict[str, Any]]:
    """The ladder's standings in `profile` (`db.standings`), best first."""
    check_profile(profile)
    table = []
    for rank, st in enumerate(ladder_standings(profile, sessions, settings().heartbeat_s), 1):
        table.append({
            "rank": rank, "bot_id": st.bot_id, "name": st.name, "kind": st.kind,
            "strategy": st.strategy, "mu": st.mu, "sigma": st.sigma,
            "low": st.mu - 2 * st.sigma, "high": st.mu + 2 * st.sigma,
            "ordinal": st.ordinal, "matches": st.matches, "wins": st.wins,
            "win_rate": st.wins / st.matches if st.matches else None,
            "provisional": st.provisional, "playing": st.playing, "connected": st.connected,
        })
    return table


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
    ratings = []
    for profile in profiles:
        table = standings(sessions, profile) if profile in PROFILES else []
        for row in table:
            if row["bot_id"] == bot_id:
                ratings.append({"profile": profile, "of": len(table), **row})
    return {**_seat(bot), "id": bot.id, "created_at": iso(bot.created_at), "ratings": ratings,
            "connected": is_connected(bot, settings().heartbeat_s),
            "connected_since": iso(bot.connected_since), "last_seen_at": iso(bot.last_seen_at),
            "running": counts.get(RUNNING, 0), "finished": counts.get(FINISHED, 0)}


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
