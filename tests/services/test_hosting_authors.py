"""HostingService for a person acting through the web (issue 46; the web's side:
tests/web/test_web_hosted.py), over the real service on SQLite and PostgreSQL: ClaimBot makes a
signed-up person a bot's author by the bot's token (a wrong token, another bot's, a hosted
container's, a guest or a call without the web's token write nothing; claiming twice changes
nothing); then the web's token with that person's live session acts on that bot only, until
the session is revoked."""

from __future__ import annotations

from dataclasses import replace

import grpc
import pytest
from bummerl.v1 import hosting_pb2, hosting_pb2_grpc
from servicekit import CONFIG, fresh_database, running_service
from sqlalchemy import func, select

from db import hosted
from db.authors import BotAuthor
from db.hosted import HostedVersion
from db.settings import sha256
from services.ops import people, people_sessions

WEB = "web-secret-for-hosting-authors"
CONFIG_WEB = replace(CONFIG, hosting="podman", web_token_sha256=sha256(WEB))


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, CONFIG_WEB) as svc:
        yield svc


def person(service, name: str, guest: bool = False) -> str:
    """A new person's session token."""
    view = (people.start_guest(name, sessions=service.sessions) if guest else
            people.register_person(name, "correct horse", sessions=service.sessions))
    return people_sessions.open_session(view.person.id, sessions=service.sessions)


def call(service, method: str, request, session: str, bearer: str = WEB):
    stub = hosting_pb2_grpc.HostingServiceStub(service.channel)
    return getattr(stub, method)(request, timeout=10, metadata=(
        ("authorization", f"Bearer {bearer}"), ("bummerl-session", session)))


def refused(code: grpc.StatusCode, *args) -> str:
    with pytest.raises(grpc.RpcError) as e:
        call(*args)
    assert e.value.code() == code, e.value.details()
    return str(e.value.details())


def authors(service) -> int:
    with service.sessions() as s:
        return s.scalar(select(func.count()).select_from(BotAuthor)) or 0


def test_a_person_claims_a_bot_by_its_token_and_then_manages_it(service):
    bot_id, token = service.register("mybot")
    _, other = service.register("otherbot")
    anna = person(service, "anna")
    claim = hosting_pb2.ClaimBotRequest
    assert "unknown token" in refused(grpc.StatusCode.UNAUTHENTICATED, service, "ClaimBot",
                                      claim(bot_name="mybot", bot_token="nope"), anna)
    assert "not mybot's" in refused(grpc.StatusCode.PERMISSION_DENIED, service, "ClaimBot",
                                    claim(bot_name="mybot", bot_token=other), anna)
    refused(grpc.StatusCode.PERMISSION_DENIED, service, "ClaimBot",
            claim(bot_name="mybot", bot_token=token), anna, token)  # not the web's token
    refused(grpc.StatusCode.FAILED_PRECONDITION, service, "ClaimBot",
            claim(bot_name="mybot", bot_token=token), person(service, "gus", guest=True))
    with service.sessions() as s:  # a hosted container's token proves nothing
        row = HostedVersion(bot_id=bot_id, version="0.9", kind=hosted.FILES, entry="m.py:B",
                            state=hosted.LIVE, restarts=0)
        container = hosted.mint_token(row)
        s.add(row)
        s.commit()
    refused(grpc.StatusCode.PERMISSION_DENIED, service, "ClaimBot",
            claim(bot_name="mybot", bot_token=container), anna)
    assert authors(service) == 0
    first = call(service, "ClaimBot", claim(bot_name="MyBot", bot_token=token), anna)
    assert (first.bot_id, first.bot_name, first.already) == (bot_id, "mybot", False)
    assert call(service, "ClaimBot", claim(bot_name="mybot", bot_token=token), anna).already
    assert authors(service) == 1
    listed = call(service, "ListVersions", hosting_pb2.ListVersionsRequest(bot_name="mybot"),
                  anna)
    assert [v.version for v in listed.versions] == ["0.9"]
    stopped = call(service, "StopVersion", hosting_pb2.StopVersionRequest(
        bot_name="mybot", version="0.9"), anna).version
    assert stopped.state == hosting_pb2.HOSTED_STATE_STOPPED
    assert stopped.reason == "stopped by its author"
    refused(grpc.StatusCode.PERMISSION_DENIED, service, "ListVersions",
            hosting_pb2.ListVersionsRequest(bot_name="otherbot"), anna)
    refused(grpc.StatusCode.PERMISSION_DENIED, service, "ListVersions",
            hosting_pb2.ListVersionsRequest(bot_name="mybot"), person(service, "bob"))
    people_sessions.logout(anna, sessions=service.sessions)
    refused(grpc.StatusCode.UNAUTHENTICATED, service, "ListVersions",
            hosting_pb2.ListVersionsRequest(bot_name="mybot"), anna)
