"""The gRPC HostingService: a thin adapter from bummerl.v1 hosting requests to
`services.ops.hosting` (who may do what is decided there, from the call's token and, for a
person acting through the web, the `bummerl-session` metadata)."""

from __future__ import annotations

import grpc
from bummerl import wire
from bummerl.v1 import common_pb2, hosting_pb2, hosting_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

from db import hosted
from db.hosted import HostedVersion
from db.models import PEOPLE_CASUAL, PEOPLE_RATED
from db.settings import Settings
from services.api.servicers import token_of, unary
from services.ops import hosting

HOSTING_SERVICE = hosting_pb2.DESCRIPTOR.services_by_name["HostingService"].full_name
STATES = {
    hosted.BUILDING: hosting_pb2.HOSTED_STATE_BUILDING,
    hosted.VALIDATING: hosting_pb2.HOSTED_STATE_VALIDATING,
    hosted.LIVE: hosting_pb2.HOSTED_STATE_LIVE,
    hosted.FAILED: hosting_pb2.HOSTED_STATE_FAILED,
    hosted.PAUSED: hosting_pb2.HOSTED_STATE_PAUSED,
    hosted.STOPPED: hosting_pb2.HOSTED_STATE_STOPPED,
}
# what a version plays of people (db.hosted.HostedVersion.people)
PEOPLE = {common_pb2.ACCEPTS_PEOPLE_CASUAL: PEOPLE_CASUAL,
          common_pb2.ACCEPTS_PEOPLE_RATED: PEOPLE_RATED}
PEOPLE_PB = {name: number for number, name in PEOPLE.items()}


def version_to_pb(row: HostedVersion, bot_name: str) -> hosting_pb2.HostedVersion:
    return hosting_pb2.HostedVersion(
        bot_id=row.bot_id, bot_name=bot_name, version=row.version, state=STATES[row.state],
        reason=row.reason or "", entry=row.entry or "", image=row.image_ref or "",
        restarts=row.restarts or 0, last_error=row.last_error or "",
        validation_match_id=row.validation_match_id or 0,
        created_at=wire.timestamp(row.created_at), updated_at=wire.timestamp(row.updated_at),
        people=PEOPLE_PB.get(row.people or "", common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED))


def person_session_of(context: grpc.ServicerContext) -> str:
    """The person's session token of the call's `bummerl-session` metadata ("" if none)."""
    for key, value in context.invocation_metadata():
        if key == "bummerl-session":
            return (value if isinstance(value, str) else value.decode()).strip()
    return ""


class HostingServicer(hosting_pb2_grpc.HostingServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings) -> None:
        self.sessions = sessions
        self.config = config

    @unary
    def UploadVersion(self, request, context):  # type: ignore[no-untyped-def]
        row, name = hosting.upload(
            token_of(context), version=request.version, entry=request.entry,
            archive=request.archive, requirements=request.requirements, image=request.image,
            bot_name=request.bot_name, people=PEOPLE.get(request.people),
            person_session=person_session_of(context), config=self.config,
            sessions=self.sessions)
        return hosting_pb2.UploadVersionResponse(version=version_to_pb(row, name))

    @unary
    def ListVersions(self, request, context):  # type: ignore[no-untyped-def]
        rows = hosting.list_versions(token_of(context), request.bot_name,
                                     person_session=person_session_of(context),
                                     config=self.config, sessions=self.sessions)
        return hosting_pb2.ListVersionsResponse(
            versions=[version_to_pb(row, name) for row, name in rows])

    @unary
    def GetVersionLogs(self, request, context):  # type: ignore[no-untyped-def]
        row, name = hosting.get(token_of(context), request.version, request.bot_name,
                                person_session=person_session_of(context),
                                config=self.config, sessions=self.sessions)
        return hosting_pb2.GetVersionLogsResponse(
            version=version_to_pb(row, name), build_log=row.build_log or "",
            run_log=row.run_log or "")

    @unary
    def StopVersion(self, request, context):  # type: ignore[no-untyped-def]
        row, name = hosting.stop(token_of(context), request.version, request.bot_name,
                                 request.reason, person_session=person_session_of(context),
                                 config=self.config, sessions=self.sessions)
        return hosting_pb2.StopVersionResponse(version=version_to_pb(row, name))

    @unary
    def ResumeVersion(self, request, context):  # type: ignore[no-untyped-def]
        row, name = hosting.resume(token_of(context), request.version, request.bot_name,
                                   person_session=person_session_of(context),
                                   config=self.config, sessions=self.sessions)
        return hosting_pb2.ResumeVersionResponse(version=version_to_pb(row, name))

    @unary
    def ClaimBot(self, request, context):  # type: ignore[no-untyped-def]
        bot, already = hosting.claim(token_of(context), person_session_of(context),
                                     request.bot_name, request.bot_token, config=self.config,
                                     sessions=self.sessions)
        return hosting_pb2.ClaimBotResponse(bot_id=bot.id, bot_name=bot.name, already=already)


def add_to_server(server: grpc.Server | grpc.aio.Server, sessions: sessionmaker[Session] | None,
                  config: Settings) -> str:
    """Register the HostingService on `server`; its full name (for reflection/health)."""
    hosting_pb2_grpc.add_HostingServiceServicer_to_server(HostingServicer(sessions, config),
                                                          server)
    return HOSTING_SERVICE
