"""Read-only data of the events (tournaments) for the dashboard: the list, and one
tournament with its field, standings (`events.standings`, with their tie-breaks), crosstable,
rounds with their pairings and byes, and progress. Plain dicts, as `web.queries`.

Only public information: a pair's seed is shown only once it is decided (it decides the
decks of both its matches).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from db.base import aware, utcnow
from db.events import T_RUNNING, Tournament, TournamentBye, TournamentEntry
from db.models import RUNNING, Bot, Match
from db.pairs import FINAL, OWNER_TOURNAMENT, PLAYING, DuplicatePair
from events import formats
from events.scoring import FORFEIT_BOTH
from events.standings import PairScore, crosstable, standings
from web.queries import Missing, iso

LISTED = 100  # the latest tournaments the list shows

# A crosstable cell's outcome, from its row bot's side.
WIN, SPLIT, LOSS, FORFEIT, PENDING, VOID = "win", "split", "loss", "forfeit", "pending", "void"


def total_pairs(format: str, field: list[int], rounds: int, paired: dict[int, int],
                active: int) -> int:
    """How many pairs the event plays in all: a scheduled format's whole schedule; a Swiss
    event the pairs of its rounds paired so far (`paired`: pairs per round) plus half its
    `active` (not withdrawn) bots for each round still to pair."""
    if format in formats.SCHEDULED:
        try:
            return len(formats.schedule(format, field))
        except ValueError:  # a field the format refuses (it cannot have been created)
            return sum(paired.values())
    later = max(0, rounds - len(paired))
    return sum(paired.values()) + later * (active // 2)


def progress(started: datetime, state: str, pairs_decided: int, legs_ended: int,
             pairs_due: int, finished: datetime | None, now: datetime) -> dict[str, Any]:
    """Matches done and due (two per pair; a decided pair counts both of its matches, whether
    played, forfeited or void), and while the event runs an ETA from its pace so far (time
    since it started per match done)."""
    done = 2 * pairs_decided + legs_ended
    due = 2 * pairs_due
    out: dict[str, Any] = {"matches_done": done, "matches_due": due,
                           "pairs_decided": pairs_decided, "pairs_due": pairs_due,
                           "share": done / due if due else 0.0, "pace_s": None, "eta": None}
    elapsed = ((finished or now) - started).total_seconds()
    if done:
        out["pace_s"] = elapsed / done
        if state == T_RUNNING and due > done:
            out["eta"] = iso(now + timedelta(seconds=out["pace_s"] * (due - done)))
    return out


def _summary(t: Tournament) -> dict[str, Any]:
    return {"id": t.id, "name": t.name, "format": t.format, "state": t.state,
            "rounds": t.rounds, "paired_rounds": t.paired_rounds, "profile": t.profile,
            "move_ms": t.move_ms, "bank_ms": t.bank_ms, "rated": t.rated,
            "concurrency": t.concurrency, "grace_s": t.grace_s,
            "created_at": iso(t.created_at), "finished_at": iso(t.finished_at),
            "cancelled_reason": t.cancelled_reason}


def list_tournaments(sessions: sessionmaker[Session], limit: int = LISTED
                     ) -> list[dict[str, Any]]:
    """The latest tournaments, running ones first, each with its progress."""
    now = utcnow()
    with sessions() as s:
        rows = list(s.scalars(select(Tournament).order_by(
            (Tournament.state != T_RUNNING), Tournament.id.desc()).limit(limit)))
        ids = [t.id for t in rows]
        entries: dict[int, list[TournamentEntry]] = {}
        for e in s.scalars(select(TournamentEntry).where(TournamentEntry.tournament_id.in_(ids))
                           .order_by(TournamentEntry.position)):
            entries.setdefault(e.tournament_id, []).append(e)
        per_round: dict[int, dict[int, int]] = {}
        decided: Counter[int] = Counter()
        for owner_id, round_, state, n in s.execute(
                select(DuplicatePair.owner_id, DuplicatePair.round, DuplicatePair.state,
                       func.count())
                .where(DuplicatePair.owner == OWNER_TOURNAMENT,
                       DuplicatePair.owner_id.in_(ids))
                .group_by(DuplicatePair.owner_id, DuplicatePair.round, DuplicatePair.state)):
            rounds = per_round.setdefault(owner_id, {})
            rounds[round_ or 0] = rounds.get(round_ or 0, 0) + n
            if state in FINAL:
                decided[owner_id] += n
        legs = dict(s.execute(
            select(DuplicatePair.owner_id, func.count(Match.id))
            .join(Match, Match.pair_id == DuplicatePair.id)
            .where(DuplicatePair.owner == OWNER_TOURNAMENT, DuplicatePair.owner_id.in_(ids),
                   DuplicatePair.state == PLAYING, Match.state != RUNNING)
            .group_by(DuplicatePair.owner_id)).all())
    out = []
    for t in rows:
        field = [e.bot_id for e in entries.get(t.id, [])]
        active = sum(e.withdrawn_at is None for e in entries.get(t.id, []))
        due = total_pairs(t.format, field, t.rounds, per_round.get(t.id, {}), active)
        item = _summary(t)
        item["bots"] = len(field)
        item["progress"] = progress(aware(t.created_at), t.state, decided[t.id],
                                    legs.get(t.id, 0), due, aware(t.finished_at), now)
        out.append(item)
    return out


def _outcome(p: PairScore, bot: int) -> str:
    """The outcome of pair `p` for `bot`: win / split / loss, forfeit (either bot forfeited:
    the cell says who), pending (not decided yet), void."""
    if p.state == "void":
        return VOID
    if not p.decided:
        return PENDING
    if p.forfeit is not None:
        return FORFEIT
    points = p.of(bot)[0]
    return WIN if points == 2 else SPLIT if points == 1 else LOSS


def tournament_detail(sessions: sessionmaker[Session], tournament_id: int) -> dict[str, Any]:
    """A tournament with its field, standings, crosstable, rounds and progress."""
    now = utcnow()
    with sessions() as s:
        t = s.get(Tournament, tournament_id)
        if t is None:
            raise Missing(f"no tournament with id {tournament_id} (see the list at "
                          "/tournaments)")
        out = _summary(t)
        entries = list(s.scalars(select(TournamentEntry).where(
            TournamentEntry.tournament_id == tournament_id).order_by(TournamentEntry.position)))
        pairs = list(s.scalars(select(DuplicatePair).where(
            DuplicatePair.owner == OWNER_TOURNAMENT, DuplicatePair.owner_id == tournament_id)
            .order_by(DuplicatePair.round, DuplicatePair.board)))
        byes = list(s.scalars(select(TournamentBye).where(
            TournamentBye.tournament_id == tournament_id).order_by(TournamentBye.round)))
        bot_ids = {e.bot_id for e in entries} | {p.bot_a_id for p in pairs} | \
            {p.bot_b_id for p in pairs}
        bots = {b.id: b for b in s.scalars(select(Bot).where(Bot.id.in_(bot_ids)))}
        leg_states = dict(s.execute(select(Match.id, Match.state).where(
            Match.pair_id.in_([p.id for p in pairs]))).all()) if pairs else {}

    def bot(bot_id: int) -> dict[str, Any]:
        b = bots.get(bot_id)
        return {"bot_id": bot_id, "name": b.name if b else f"bot {bot_id}"}

    field = [e.bot_id for e in entries]
    withdrawn = [e.bot_id for e in entries if e.withdrawn_at is not None]
    out["field"] = [{**bot(e.bot_id), "position": e.position,
                     "withdrawn_at": iso(e.withdrawn_at),
                     "withdrawn_reason": e.withdrawn_reason} for e in entries]
    scores = {p.id: PairScore(p.round, p.board, p.bot_a_id, p.bot_b_id, p.state, p.points_a,
                              p.points_b, p.game_points_a, p.game_points_b, p.forfeit)
              for p in pairs}
    bye_count = Counter(b.bot_id for b in byes)
    table = standings(field, scores.values(), t.format, bye_count, withdrawn)
    tiebreak = "Buchholz" if t.format == formats.SWISS else "Sonneborn-Berger"
    out["tiebreak"] = tiebreak
    out["standings"] = [{**bot(r.bot), "rank": r.rank, "seed": r.seed, "points": r.points,
                         "difference": r.difference, "scored": r.scored,
                         "conceded": r.conceded, "tiebreak": r.tiebreak,
                         "buchholz": r.buchholz, "sonneborn_berger": r.sonneborn_berger,
                         "pairs": r.pairs, "won": r.won, "split": r.split, "lost": r.lost,
                         "forfeits": r.forfeits, "byes": r.byes, "withdrawn": r.withdrawn}
                        for r in table]

    def pair_view(p: DuplicatePair) -> dict[str, Any]:
        decided = p.state in FINAL
        return {"id": p.id, "round": p.round, "board": p.board, "a": bot(p.bot_a_id),
                "b": bot(p.bot_b_id), "state": p.state, "points_a": p.points_a,
                "points_b": p.points_b, "game_points_a": p.game_points_a,
                "game_points_b": p.game_points_b, "forfeit": p.forfeit, "detail": p.detail,
                "matches": [p.match_a_id, p.match_b_id],
                "match_states": [leg_states.get(m) if m else None
                                 for m in (p.match_a_id, p.match_b_id)],
                "due_at": iso(p.due_at), "grace_until": iso(p.grace_until),
                "started_at": iso(p.started_at), "finished_at": iso(p.finished_at),
                "seed": p.seed if decided else None}

    views = {p.id: pair_view(p) for p in pairs}
    order = [r.bot for r in table]
    cells = crosstable(order, scores.values())
    by_score = {id(score): pid for pid, score in scores.items()}
    rows = []
    for x in order:
        row_cells = []
        for y in order:
            if x == y:
                row_cells.append({"opponent": y, "self": True, "pairs": []})
                continue
            met = []
            for score in cells.get((x, y), []):
                view = views[by_score[id(score)]]
                points, other, scored, conceded = score.of(x)
                met.append({"pair_id": view["id"], "round": score.round,
                            "outcome": _outcome(score, x), "state": score.state,
                            "points": points if score.decided else None,
                            "opponent_points": other if score.decided else None,
                            "scored": scored if score.decided else None,
                            "conceded": conceded if score.decided else None,
                            "forfeited_by_me": score.decided and score.forfeited_by(x),
                            "forfeit_both": score.forfeit == FORFEIT_BOTH,
                            "matches": view["matches"], "detail": view["detail"]})
            row_cells.append({"opponent": y, "self": False, "pairs": met})
        rows.append({**bot(x), "cells": row_cells})
    out["crosstable"] = {"order": [bot(b) for b in order], "rows": rows}
    rounds: dict[int, dict[str, Any]] = {}
    for p in pairs:
        number = p.round or 0
        rounds.setdefault(number, {"round": number, "pairs": [], "byes": []})
        rounds[number]["pairs"].append(views[p.id])
    for b in byes:
        rounds.setdefault(b.round, {"round": b.round, "pairs": [], "byes": []})
        rounds[b.round]["byes"].append(bot(b.bot_id))
    out["rounds_played"] = [rounds[r] for r in sorted(rounds)]
    paired = Counter(p.round or 0 for p in pairs)
    due = total_pairs(t.format, field, t.rounds, dict(paired), len(field) - len(withdrawn))
    decided_n = sum(p.state in FINAL for p in pairs)
    legs = sum(1 for p in pairs if p.state == PLAYING
               for m in (p.match_a_id, p.match_b_id)
               if m is not None and leg_states.get(m) not in (None, RUNNING))
    out["progress"] = progress(aware(t.created_at), t.state, decided_n, legs, due,
                               aware(t.finished_at), now)
    out["running_matches"] = sum(state == RUNNING for state in leg_states.values())
    return out

