"""The gRPC AdminService: a thin adapter from bummerl.v1 admin requests to `services.ops.admin`,
each call checked against the operator token first."""

from __future__ import annotations

import grpc
from bummerl import wire
from bummerl.v1 import admin_pb2, admin_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

from db.settings import Settings
from services.api.servicers import token_of, unary
from services.live import convert
from services.ops import admin, bots

ADMIN_SERVICE = admin_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name


def status_to_pb(status: admin.BotStatus) -> admin_pb2.BotStatus:
    bot = status.bot
    return admin_pb2.BotStatus(
        bot=convert.bot_to_pb(bot),
        suspended=status.suspended,
        suspended_reason=bot.suspended_reason or "",
        suspended_at=wire.timestamp(bot.suspended_at),
        last_seen_at=wire.timestamp(bot.last_seen_at),
        connected_since=wire.timestamp(bot.connected_since) if status.connected else None,
        connected=status.connected,
        running_matches=status.running_matches,
    )


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings) -> None:
        self.sessions = sessions
        self.config = config

    def _operator(self, context: grpc.ServicerContext, what: str) -> None:
        bots.require_operator(token_of(context), self.config, what)

    @unary
    def ListBots(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "ListBots")
        rows = admin.list_bots(suspended_only=request.suspended_only, sessions=self.sessions,
                               config=self.config)
        return admin_pb2.ListBotsResponse(bots=[status_to_pb(s) for s in rows])

    @unary
    def SuspendBot(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "SuspendBot")
        status = admin.suspend_bot(request.bot_id, request.reason, sessions=self.sessions,
                                   config=self.config)
        return admin_pb2.SuspendBotResponse(bot=status_to_pb(status))

    @unary
    def ReinstateBot(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "ReinstateBot")
        status = admin.reinstate_bot(request.bot_id, sessions=self.sessions, config=self.config)
        return admin_pb2.ReinstateBotResponse(bot=status_to_pb(status))

    @unary
    def RotateBotToken(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "RotateBotToken")
        status, token = admin.rotate_token(request.bot_id, sessions=self.sessions,
                                           config=self.config)
        return admin_pb2.RotateBotTokenResponse(bot=status_to_pb(status), token=token)

    @unary
    def AbortMatch(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "AbortMatch")
        m = admin.abort_match(request.match_id, request.reason, sessions=self.sessions)
        return admin_pb2.AbortMatchResponse(match=convert.match_to_pb(m))

    @unary
    def AnalyseMatch(self, request, context):  # type: ignore[no-untyped-def]
        self._operator(context, "AnalyseMatch")
        state = admin.request_analysis(request.match_id, sessions=self.sessions)
        return admin_pb2.AnalyseMatchResponse(state=state)


def add_to_server(server: grpc.Server | grpc.aio.Server, sessions: sessionmaker[Session] | None,
                  config: Settings) -> str:
    """Register the AdminService on `server`; returns its full name (for reflection/health)."""
    admin_pb2_grpc.add_AdminServiceServicer_to_server(AdminServicer(sessions, config), server)
    return ADMIN_SERVICE
