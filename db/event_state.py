"""A tournament as read from its tables (`db.events`, `db.pairs`): its field, its pairs as the
standings see them, its byes, and the standings and crosstable made from them
(`events.standings`). Read by the events scheduler (`workers.events`: a Swiss round is paired
from it) and the TournamentService (`services.ops.tournaments`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.events import Tournament, TournamentBye, TournamentEntry
from db.models import Bot
from db.pairs import OWNER_TOURNAMENT, DuplicatePair
from events.standings import PairScore, Row, standings


@dataclass
class EventState:
    """One tournament with everything about it, detached from its session."""

    tournament: Tournament
    entries: list[TournamentEntry]  # in position order
    pairs: list[DuplicatePair]  # in (round, board) order
    byes: list[TournamentBye]  # in round order
    names: dict[int, str]  # bot id → name, for every bot of the field

    @property
    def field(self) -> list[int]:
        """The bot ids of the field, in the order entered (withdrawn ones included)."""
        return [e.bot_id for e in self.entries]

    @property
    def active(self) -> list[int]:
        """The bots not withdrawn, in the order entered."""
        return [e.bot_id for e in self.entries if e.withdrawn_at is None]

    @property
    def withdrawn(self) -> list[int]:
        return [e.bot_id for e in self.entries if e.withdrawn_at is not None]

    def scores(self) -> list[PairScore]:
        return [score_of(p) for p in self.pairs]

    def bye_counts(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for bye in self.byes:
            counts[bye.bot_id] = counts.get(bye.bot_id, 0) + 1
        return counts

    def standings(self) -> list[Row]:
        return standings(self.field, self.scores(), self.tournament.format,
                         self.bye_counts(), self.withdrawn)

    def round_pairs(self, round_: int) -> list[DuplicatePair]:
        return [p for p in self.pairs if p.round == round_]


def score_of(pair: DuplicatePair) -> PairScore:
    return PairScore(pair.round, pair.board, pair.bot_a_id, pair.bot_b_id, pair.state,
                     pair.points_a, pair.points_b, pair.game_points_a, pair.game_points_b,
                     pair.forfeit)


def pairs_of(s: Session, tournament_id: int) -> list[DuplicatePair]:
    return list(s.scalars(select(DuplicatePair).where(
        DuplicatePair.owner == OWNER_TOURNAMENT, DuplicatePair.owner_id == tournament_id)
        .order_by(DuplicatePair.round, DuplicatePair.board)))


def load(s: Session, tournament_id: int) -> EventState | None:
    """Tournament `tournament_id` and its entries, pairs and byes (detached), or None."""
    tournament = s.get(Tournament, tournament_id)
    if tournament is None:
        return None
    entries = list(s.scalars(select(TournamentEntry)
                             .where(TournamentEntry.tournament_id == tournament_id)
                             .order_by(TournamentEntry.position)))
    byes = list(s.scalars(select(TournamentBye)
                          .where(TournamentBye.tournament_id == tournament_id)
                          .order_by(TournamentBye.round)))
    pairs = pairs_of(s, tournament_id)
    names = {bot_id: name for bot_id, name in s.execute(select(Bot.id, Bot.name).where(
        Bot.id.in_([e.bot_id for e in entries])))}
    s.expunge_all()
    return EventState(tournament, entries, pairs, byes, names)


def list_tournaments(s: Session, states: Sequence[str] = (), limit: int = 100
                     ) -> list[Tournament]:
    """The newest tournaments first (in `states` if given), at most `limit`."""
    query = select(Tournament).order_by(Tournament.id.desc()).limit(limit)
    if states:
        query = query.where(Tournament.state.in_(list(states)))
    rows = list(s.scalars(query))
    s.expunge_all()
    return rows
