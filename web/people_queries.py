"""What the web reads of people from the shared database (read-only, like every dashboard
read): a person's page and open tables, the people's leaderboard, a bot's record against
people, the ladder ratings /play shows, an invite's state. Acting for a person goes through
the service (web.service_client).

A person's seat holder is a `bots` row of kind `person` (db.people): their matches, records
and exports are those of that bot.
"""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy import case, func, or_, select
from sqlalchemy.orm import aliased

from db.models import FINISHED, PERSON, RUNNING, Bot, Match
from db.people import INVITE_TTL, PeopleRating, Person, PersonInvite
from db.ratings import Rating
from web.db import sessions
from web.queries import Missing, iso

ORDINAL_SIGMAS = 3  # shown and ordered by mu - 3 sigma (as the ladder)


def _rating(r: PeopleRating | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - ORDINAL_SIGMAS * r.sigma,
            "games": r.games, "wins": r.wins}


def person(person_id: int) -> dict[str, Any]:
    """A person's page: who, rating, record (404 naming the id when there is none)."""
    with sessions()() as s:
        row = s.execute(select(Person, Bot).join(Bot, Bot.id == Person.bot_id)
                        .where(Person.id == person_id)).first()
        if row is None:
            raise Missing(f"there is no person with id {person_id}")
        p, bot = row
        rating = s.get(PeopleRating, p.bot_id)
        counts = record(s, p.bot_id)
    return {"person_id": p.id, "name": p.name, "guest": p.guest, "bot_id": p.bot_id,
            "display_name": bot.name, "created_at": iso(p.created_at),
            "suspended_at": iso(bot.suspended_at), "suspended_reason": bot.suspended_reason,
            "rating": _rating(rating), **counts}


def record(s: Any, bot_id: int, against_people: bool = False) -> dict[str, int]:
    """Finished matches of `bot_id` (only those against people: `against_people`): played,
    won, lost, and running ones."""
    other = aliased(Bot)
    mine = or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id)
    query = select(
        func.count(),
        func.sum(case((((Match.bot0_id == bot_id) & (Match.winner == 0))
                       | ((Match.bot1_id == bot_id) & (Match.winner == 1)), 1), else_=0)),
        func.sum(case((Match.state == RUNNING, 1), else_=0)),
        func.sum(case((Match.state == FINISHED, 1), else_=0)),
    ).where(mine)
    if against_people:
        query = query.join(other, or_(
            (Match.bot0_id == bot_id) & (other.id == Match.bot1_id),
            (Match.bot1_id == bot_id) & (other.id == Match.bot0_id))).where(other.kind == PERSON)
    _, won, running, finished = s.execute(query).one()
    won, running, finished = won or 0, running or 0, finished or 0
    return {"played": finished, "won": won, "lost": finished - won, "running": running}


def open_tables(person_id: int) -> list[dict[str, Any]]:
    """The person's running matches, newest first, with the opponent's name."""
    with sessions()() as s:
        bot_id = s.scalar(select(Person.bot_id).where(Person.id == person_id))
        if bot_id is None:
            return []
        rows = s.execute(select(Match.id, Match.bot0_id, Match.created_at,
                                Match.counter0, Match.counter1)
                         .where(Match.state == RUNNING,
                                or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))
                         .order_by(Match.id.desc()).limit(20)).all()
        names = {}
        for r in rows:
            m = s.get(Match, r.id)
            if m is not None:
                names[r.id] = m.bot1.name if m.bot0_id == bot_id else m.bot0.name
    return [{"match_id": r.id, "opponent": names.get(r.id, "?"), "created_at": iso(r.created_at),
             "counters": [r.counter0, r.counter1] if r.bot0_id == bot_id
             else [r.counter1, r.counter0]} for r in rows]


def leaderboard(limit: int = 200) -> list[dict[str, Any]]:
    """Signed-up people with a rating in the people's pool, best (mu - 3 sigma) first."""
    with sessions()() as s:
        rows = s.execute(select(Person, PeopleRating)
                         .join(PeopleRating, PeopleRating.bot_id == Person.bot_id)
                         .where(Person.guest.is_(False))).all()
    board = [{"person_id": p.id, "name": p.name, **(_rating(r) or {})} for p, r in rows]
    board.sort(key=lambda row: (-row["ordinal"], row["name"].lower()))
    for rank, row in enumerate(board[:limit], start=1):
        row["rank"] = rank
    return board[:limit]


def ladder_ratings(bot_ids: list[int], profile: str = "soft") -> dict[int, dict[str, Any]]:
    """The ladder rating in `profile` of each of `bot_ids` that has one (mu - 3 sigma, the
    strength /play orders its opponents by: PeopleService.ListOpponents), with its matches."""
    if not bot_ids:
        return {}
    with sessions()() as s:
        rows = s.scalars(select(Rating).where(Rating.profile == profile,
                                              Rating.bot_id.in_(bot_ids))).all()
    return {r.bot_id: {"mu": r.mu, "sigma": r.sigma, "matches": r.matches,
                       "ordinal": r.mu - ORDINAL_SIGMAS * r.sigma} for r in rows}


def bot_against_people(bot_id: int) -> dict[str, Any] | None:
    """A bot's record against people and its rating in the people's pool (None when it never
    played a person)."""
    with sessions()() as s:
        counts = record(s, bot_id, against_people=True)
        rating = s.get(PeopleRating, bot_id)
    if not counts["played"] and not counts["running"] and rating is None:
        return None
    return {**counts, "rating": _rating(rating),
            "win_rate": counts["won"] / counts["played"] if counts["played"] else None}


def invite(code: str) -> dict[str, Any]:
    """An invite by its code: who made it, who took it, its match, whether it expired."""
    if not code or len(code) > 40:
        raise Missing("there is no such invite")
    with sessions()() as s:
        row = s.execute(select(PersonInvite, Person.name)
                        .join(Person, Person.id == PersonInvite.person_id)
                        .where(PersonInvite.code == code)).first()
    if row is None:
        raise Missing("there is no such invite (a link is good for one game)")
    inv, name = row
    return {"inviter_id": inv.person_id, "inviter": name, "accepter_id": inv.accepted_by,
            "match_id": inv.match_id, "profile": inv.profile, "expired": inv.expired(),
            "minutes": int(INVITE_TTL.total_seconds() // 60),
            "move_s": None if inv.move_ms is None else math.ceil(inv.move_ms / 1000),
            "bank_s": None if inv.bank_ms is None else math.ceil(inv.bank_ms / 1000)}
