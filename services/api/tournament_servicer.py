"""The gRPC TournamentService: a thin adapter from bummerl.v1 tournament requests to
`services.ops.tournaments`. Reads are public; every change checks the operator token first."""

from __future__ import annotations

from typing import Any

import grpc
from bummerl import wire
from bummerl.v1 import match_pb2, tournament_pb2, tournament_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.event_state import EventState
from db.events import Tournament
from db.pairs import DuplicatePair
from db.settings import Settings
from events import formats
from events.standings import Row
from services.api.servicers import token_of, unary
from services.core.errors import InvalidArgument
from services.ops import bots, tournaments

TOURNAMENT_SERVICE = tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name

FORMATS = {
    formats.ROUND_ROBIN: tournament_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
    formats.DOUBLE_ROUND_ROBIN: tournament_pb2.TOURNAMENT_FORMAT_DOUBLE_ROUND_ROBIN,
    formats.SWISS: tournament_pb2.TOURNAMENT_FORMAT_SWISS,
    formats.GAUNTLET: tournament_pb2.TOURNAMENT_FORMAT_GAUNTLET,
}
FORMAT_NAMES = {v: k for k, v in FORMATS.items()}
STATES = {"running": tournament_pb2.TOURNAMENT_STATE_RUNNING,
          "finished": tournament_pb2.TOURNAMENT_STATE_FINISHED,
          "cancelled": tournament_pb2.TOURNAMENT_STATE_CANCELLED}
STATE_NAMES = {v: k for k, v in STATES.items()}
PAIR_STATES = {"waiting": tournament_pb2.PAIR_STATE_WAITING,
               "playing": tournament_pb2.PAIR_STATE_PLAYING,
               "done": tournament_pb2.PAIR_STATE_DONE,
               "forfeited": tournament_pb2.PAIR_STATE_FORFEITED,
               "void": tournament_pb2.PAIR_STATE_VOID}
FORFEITS = {"a": tournament_pb2.PAIR_FORFEIT_BOT_A, "b": tournament_pb2.PAIR_FORFEIT_BOT_B,
            "both": tournament_pb2.PAIR_FORFEIT_BOTH}


def tournament_to_pb(t: Tournament, bot_count: int) -> tournament_pb2.Tournament:
    return tournament_pb2.Tournament(
        tournament_id=t.id, name=t.name, format=FORMATS[t.format], state=STATES[t.state],
        rounds=t.rounds, paired_rounds=t.paired_rounds,
        profile=wire.PROFILES[engine.Profile(t.profile)],
        time_control=match_pb2.TimeControl(move_ms=t.move_ms, bank_ms=t.bank_ms),
        rated=t.rated, concurrency=t.concurrency, grace_s=t.grace_s, seed=t.seed,
        created_at=wire.timestamp(t.created_at), finished_at=wire.timestamp(t.finished_at),
        cancelled_reason=t.cancelled_reason or "", bot_count=bot_count)


def pair_to_pb(p: DuplicatePair) -> tournament_pb2.TournamentPair:
    return tournament_pb2.TournamentPair(
        pair_id=p.id, round=p.round or 0, board=p.board, bot_a_id=p.bot_a_id,
        bot_b_id=p.bot_b_id, state=PAIR_STATES[p.state], match_a_id=p.match_a_id or 0,
        match_b_id=p.match_b_id or 0, points_a=p.points_a or 0, points_b=p.points_b or 0,
        game_points_a=p.game_points_a or 0, game_points_b=p.game_points_b or 0,
        forfeit=FORFEITS.get(p.forfeit or "", tournament_pb2.PAIR_FORFEIT_UNSPECIFIED),
        detail=p.detail or "")


def row_to_pb(row: Row, names: dict[int, str]) -> tournament_pb2.StandingRow:
    return tournament_pb2.StandingRow(
        rank=row.rank, bot_id=row.bot, name=names.get(row.bot, ""), points=row.points,
        game_points_scored=row.scored, game_points_conceded=row.conceded,
        tiebreak=float(row.tiebreak), pairs=row.pairs, won=row.won, split=row.split,
        lost=row.lost, forfeits=row.forfeits, byes=row.byes, withdrawn=row.withdrawn)


def parts_of(event: EventState) -> dict[str, Any]:
    """The fields GetTournament and ExportTournament share."""
    return {
        "tournament": tournament_to_pb(event.tournament, len(event.entries)),
        "entries": [tournament_pb2.TournamentEntry(
            bot_id=e.bot_id, name=event.names.get(e.bot_id, ""), position=e.position,
            withdrawn=e.withdrawn_at is not None, withdrawn_reason=e.withdrawn_reason or "")
            for e in event.entries],
        "standings": [row_to_pb(r, event.names) for r in event.standings()],
        "pairs": [pair_to_pb(p) for p in event.pairs],
        "byes": [tournament_pb2.TournamentBye(round=b.round, bot_id=b.bot_id)
                 for b in event.byes],
    }


def new_tournament(request: tournament_pb2.CreateTournamentRequest) -> tournaments.NewTournament:
    if request.format not in FORMAT_NAMES:
        raise InvalidArgument("format is required: one of TOURNAMENT_FORMAT_ROUND_ROBIN, "
                              "_DOUBLE_ROUND_ROBIN, _SWISS, _GAUNTLET", field="format")
    profile = wire.PROFILE_NAMES.get(request.profile, engine.Profile.SOFT).value
    has_time = request.HasField("time_control")
    return tournaments.NewTournament(
        format=FORMAT_NAMES[request.format], bot_ids=list(request.bot_ids),
        bot_names=list(request.bot_names), name=request.name, rounds=request.rounds or None,
        profile=profile, move_ms=request.time_control.move_ms if has_time else 0,
        bank_ms=request.time_control.bank_ms if has_time and request.time_control.bank_ms
        else None, rated=request.rated, concurrency=request.concurrency,
        grace_s=request.grace_s, seed=request.seed)


class TournamentServicer(tournament_pb2_grpc.TournamentServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings) -> None:
        self.sessions = sessions
        self.config = config

    def _operator(self, context: grpc.ServicerContext, what: str) -> None:
        bots.require_operator(token_of(context), self.config, what)

    @unary
    def CreateTournament(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "CreateTournament")
        event = tournaments.create_tournament(new_tournament(request), sessions=self.sessions,
                                              config=self.config)
        parts = parts_of(event)
        return tournament_pb2.CreateTournamentResponse(tournament=parts["tournament"],
                                                       entries=parts["entries"])

    @unary
    def GetTournament(self, request, context):  # type: ignore[no-untyped-def]
        event = tournaments.get_tournament(request.tournament_id, sessions=self.sessions)
        return tournament_pb2.GetTournamentResponse(**parts_of(event))

    @unary
    def ListTournaments(self, request, context):  # type: ignore[no-untyped-def]
        rows = tournaments.list_all(STATE_NAMES.get(request.state), sessions=self.sessions)
        return tournament_pb2.ListTournamentsResponse(
            tournaments=[tournament_to_pb(t, n) for t, n in rows])

    @unary
    def WithdrawBot(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "WithdrawBot")
        event, forfeited = tournaments.withdraw_bot(request.tournament_id, request.bot_id,
                                                    request.reason, sessions=self.sessions)
        return tournament_pb2.WithdrawBotResponse(
            tournament=tournament_to_pb(event.tournament, len(event.entries)),
            forfeited_pair_ids=forfeited)

    @unary
    def CancelTournament(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "CancelTournament")
        event, voided = tournaments.cancel_tournament(request.tournament_id, request.reason,
                                                      sessions=self.sessions)
        return tournament_pb2.CancelTournamentResponse(
            tournament=tournament_to_pb(event.tournament, len(event.entries)),
            voided_pair_ids=voided)

    @unary
    def ExportTournament(self, request, context):  # type: ignore[no-untyped-def]
        event = tournaments.get_tournament(request.tournament_id, sessions=self.sessions)
        cells = [tournament_pb2.CrosstableCell(
            bot_id=c.bot, opponent_id=c.opponent, points=c.points,
            game_points_scored=c.scored, game_points_conceded=c.conceded,
            pair_ids=c.pair_ids, match_ids=c.match_ids)
            for c in tournaments.crosstable_of(event)]
        return tournament_pb2.ExportTournamentResponse(**parts_of(event), crosstable=cells)


def add_to_server(server: grpc.Server | grpc.aio.Server, sessions: sessionmaker[Session] | None,
                  config: Settings) -> str:
    """Register the TournamentService on `server`; its full name (for reflection/health)."""
    tournament_pb2_grpc.add_TournamentServiceServicer_to_server(
        TournamentServicer(sessions, config), server)
    return TOURNAMENT_SERVICE
