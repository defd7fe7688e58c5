"""HostingService over the real service (gRPC, SQLite and PostgreSQL): an upload is checked
(INVALID_ARGUMENT naming what is wrong, nothing written), stored as `building` and handed to the
workers after its commit; quotas; who sees and acts on which versions; stop and resume; and a
hosted container's token: it plays as its bot with the version forced to its own, and manages
nothing. (Building and running are the workers': tests/hosting.)"""

from __future__ import annotations

import io
import tarfile
from dataclasses import replace

import grpc
import pytest
from bummerl.v1 import bot_pb2, hosting_pb2, hosting_pb2_grpc
from servicekit import CONFIG, OPERATOR, auth, fresh_database, running_service
from serviceprocs import PlayStream
from sqlalchemy import func, select

from db import hosted
from db.hosted import HostedVersion
from db.models import Bot
from services.core import hooks
from workers.testing import wait_until

HOSTING = replace(CONFIG, hosting="podman", hosted_per_bot=2, hosted_cpu=0.5,
                  hosted_cpu_total=1.5, hosted_memory_total_mb=4096)
BOT = b"from client import Bot\n\nclass MyBot(Bot):\n    version = '1.0'\n"


def archive(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, HOSTING) as svc:
        yield svc


@pytest.fixture
def uploads():
    """The version ids the service handed to the workers (hooks.on_hosted_upload)."""
    seen: list[int] = []
    hooks.on_hosted_upload.append(seen.append)
    yield seen
    hooks.on_hosted_upload.remove(seen.append)


def stub(service) -> hosting_pb2_grpc.HostingServiceStub:
    return hosting_pb2_grpc.HostingServiceStub(service.channel)


def upload(service, token: str, version: str = "1.0", **fields):
    fields.setdefault("entry", "mybot.py:MyBot")
    fields.setdefault("archive", archive({"mybot.py": BOT}))
    if "image" in fields:
        fields.pop("entry"), fields.pop("archive")
    return stub(service).UploadVersion(hosting_pb2.UploadVersionRequest(
        version=version, **fields), metadata=auth(token), timeout=10)


def refused(call, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.RpcError) as e:
        call()
    assert e.value.code() == code, e.value.details()
    return str(e.value.details())


def count(service) -> int:
    with service.sessions() as s:
        return s.scalar(select(func.count()).select_from(HostedVersion)) or 0


def test_an_upload_is_stored_building_and_handed_to_the_workers(service, uploads):
    _, token = service.register("mybot")
    reply = upload(service, token, "1.0", requirements="# pinned\nnumpy==2.1.0\n")
    v = reply.version
    assert (v.bot_name, v.version, v.state, v.entry) == (
        "mybot", "1.0", hosting_pb2.HOSTED_STATE_BUILDING, "mybot.py:MyBot")
    with service.sessions() as s:
        row = s.scalar(select(HostedVersion))
        assert row.requirements == "numpy==2.1.0\n" and row.kind == hosted.FILES
        assert row.source and row.token_hash is None
    assert uploads == [row.id]
    image = upload(service, token, "2.0", image="ghcr.io/me/mybot:2.0").version
    assert image.image == "ghcr.io/me/mybot:2.0" and image.entry == ""
    listed = stub(service).ListVersions(hosting_pb2.ListVersionsRequest(), metadata=auth(token))
    assert [v.version for v in listed.versions] == ["2.0", "1.0"]


@pytest.mark.parametrize("fields, named", [
    ({"version": ""}, "version"),
    ({"version": "two words"}, "version"),
    ({"version": "x" * 101}, "version"),
    ({"entry": "mybot.py"}, "entry"),
    ({"entry": "../mybot.py:MyBot"}, "entry"),
    ({"entry": "other.py:MyBot"}, "other.py"),
    ({"archive": b"not a tar"}, "archive"),
    ({"archive": archive({"/etc/x.py": b"", "mybot.py": BOT})}, "/etc/x.py"),
    ({"archive": archive({"../up.py": b"", "mybot.py": BOT})}, "../up.py"),
    ({"requirements": "numpy>=2"}, "requirements line 1"),
    ({"requirements": "--index-url http://evil/\nnumpy==2"}, "requirements line 1"),
    ({"requirements": "git+https://x/y.git"}, "requirements line 1"),
    ({"image": "Not An Image"}, "image"),
    ({"image": "ghcr.io/Me/mybot:2.0"}, "is not an image reference"),  # upper case in the path
    ({"image": "ghcr.io/me/mybot:"}, "is not an image reference"),
    ({"image": "ghcr.io/me//mybot"}, "is not an image reference"),
    ({"image": "ghcr.io/me/mybot@sha256:xyz"}, "is not an image reference"),
    ({"image": "-v/x:1"}, "is not an image reference"),
    ({"image": "ok/image:1", "requirements": "a==1"}, "image"),
])
def test_bad_uploads_name_what_is_wrong_and_write_nothing(service, uploads, fields, named):
    _, token = service.register("mybot")
    fields = dict(fields)  # (shared by the database's parameters)
    version = fields.pop("version", "1.0")
    if "image" in fields and "requirements" in fields:
        request = hosting_pb2.UploadVersionRequest(version=version, entry="mybot.py:MyBot",
                                                   archive=archive({"mybot.py": BOT}),
                                                   **fields)
        message = refused(lambda: stub(service).UploadVersion(request, metadata=auth(token)),
                          grpc.StatusCode.INVALID_ARGUMENT)
    else:
        message = refused(lambda: upload(service, token, version, **fields),
                          grpc.StatusCode.INVALID_ARGUMENT)
    assert named in message
    assert count(service) == 0 and uploads == []


def test_a_symlink_in_the_archive_is_refused(service):
    _, token = service.register("mybot")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        link = tarfile.TarInfo("secrets")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(link)
        info = tarfile.TarInfo("mybot.py")
        info.size = len(BOT)
        tar.addfile(info, io.BytesIO(BOT))
    message = refused(lambda: upload(service, token, archive=out.getvalue()),
                      grpc.StatusCode.INVALID_ARGUMENT)
    assert "secrets" in message and "link" in message and count(service) == 0


def test_the_same_version_twice_and_the_quotas(service):
    _, token = service.register("mybot")
    upload(service, token, "1.0")
    assert "1.0" in refused(lambda: upload(service, token, "1.0"),
                            grpc.StatusCode.ALREADY_EXISTS)
    upload(service, token, "1.1")
    message = refused(lambda: upload(service, token, "1.2"), grpc.StatusCode.RESOURCE_EXHAUSTED)
    assert "BUMMERL_HOSTED_PER_BOT=2" in message
    stub(service).StopVersion(hosting_pb2.StopVersionRequest(version="1.0"), metadata=auth(token))
    upload(service, token, "1.2")  # a stopped version leaves room
    _, other = service.register("other")
    # the site's CPU: 1.5 cores at 0.5 each hold 3 versions, and 2 are active
    upload(service, other, "a")
    assert "quotas" in refused(lambda: upload(service, other, "b"),
                               grpc.StatusCode.RESOURCE_EXHAUSTED)
    assert count(service) == 4


def test_a_site_that_hosts_nothing_says_what_to_install(tmp_path, request):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database, CONFIG) as svc:
        _, token = svc.register("mybot")
        message = refused(lambda: upload(svc, token), grpc.StatusCode.FAILED_PRECONDITION)
        assert "podman" in message and "\n" not in message and count(svc) == 0


def test_a_site_on_kubernetes_takes_images_and_refuses_files_saying_why(tmp_path, request):
    """BUMMERL_HOSTING=kubernetes (k8s/base/configmap.yaml): an image is stored building and
    handed to the workers (who run it on the cluster: tests/k8s/test_hosted_kube.py); files
    are refused in one line naming what is missing, before anything is written."""
    from services.ops.hosting import NO_CLUSTER_BUILD

    seen: list[int] = []
    hooks.on_hosted_upload.append(seen.append)
    try:
        with fresh_database("sqlite", request, tmp_path) as database, \
                running_service(database, replace(HOSTING, hosting="kubernetes")) as svc:
            _, token = svc.register("mybot")
            message = refused(lambda: upload(svc, token, "1.0",
                                             requirements="numpy==2.1.0\n"),
                              grpc.StatusCode.FAILED_PRECONDITION)
            assert message == NO_CLUSTER_BUILD and "\n" not in message
            assert "podman" in message and "--image" in message
            assert count(svc) == 0 and seen == []
            v = upload(svc, token, "2.0", image="registry.example:5000/me/mybot:2.0").version
            assert (v.state, v.image, v.entry) == (hosting_pb2.HOSTED_STATE_BUILDING,
                                                   "registry.example:5000/me/mybot:2.0", "")
            digest = "ghcr.io/me/mybot@sha256:" + "0" * 64
            assert upload(svc, token, "2.1", image=digest).version.image == digest
            assert "is not an image reference" in refused(
                lambda: upload(svc, token, "2.2", image="ghcr.io/me/MyBot:2"),
                grpc.StatusCode.INVALID_ARGUMENT)
            assert count(svc) == 2 and len(seen) == 2
    finally:
        hooks.on_hosted_upload.remove(seen.append)


def test_each_author_sees_and_acts_on_their_own_versions_the_operator_on_all(service):
    _, mine = service.register("mybot")
    _, theirs = service.register("other")
    upload(service, mine, "1.0")
    upload(service, theirs, "9.0")
    listed = stub(service).ListVersions(hosting_pb2.ListVersionsRequest(), metadata=auth(mine))
    assert [v.bot_name for v in listed.versions] == ["mybot"]
    assert "mybot" in refused(lambda: stub(service).ListVersions(
        hosting_pb2.ListVersionsRequest(bot_name="mybot"), metadata=auth(theirs)),
        grpc.StatusCode.PERMISSION_DENIED)
    refused(lambda: stub(service).GetVersionLogs(hosting_pb2.GetVersionLogsRequest(
        version="1.0"), metadata=auth(theirs)), grpc.StatusCode.NOT_FOUND)  # theirs has none
    refused(lambda: stub(service).StopVersion(hosting_pb2.StopVersionRequest(
        version="1.0", bot_name="mybot"), metadata=auth(theirs)),
        grpc.StatusCode.PERMISSION_DENIED)
    refused(lambda: stub(service).ListVersions(hosting_pb2.ListVersionsRequest()),
            grpc.StatusCode.UNAUTHENTICATED)
    every = stub(service).ListVersions(hosting_pb2.ListVersionsRequest(),
                                       metadata=auth(OPERATOR))
    assert sorted(v.bot_name for v in every.versions) == ["mybot", "other"]
    stopped = stub(service).StopVersion(hosting_pb2.StopVersionRequest(
        version="9.0", bot_name="other", reason="too slow"), metadata=auth(OPERATOR)).version
    assert stopped.state == hosting_pb2.HOSTED_STATE_STOPPED
    assert stopped.reason == "stopped by the operator: too slow"
    assert "names the bot" in refused(lambda: upload(service, OPERATOR, "x"),
                                      grpc.StatusCode.INVALID_ARGUMENT)


def go_live(service, version: str) -> str:
    """What a passed validation leaves (the workers' part): live, an image, a token."""
    with service.sessions() as s:
        row = s.scalar(select(HostedVersion).where(HostedVersion.version == version))
        hosted.set_state(row, hosted.LIVE)
        row.image, row.validation_match_id = "localhost/x:1", 1
        token = hosted.mint_token(row)
        s.commit()
    return token


def test_a_containers_token_plays_as_its_bot_with_its_version_and_manages_nothing(service):
    bot_id, token = service.register("mybot")
    upload(service, token, "2.0")
    container = go_live(service, "2.0")
    stream = PlayStream(service.channel, container)
    stream.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="t", version="9.9")))
    stream.next("welcome")

    def recorded() -> bool:
        with service.sessions() as s:
            return s.get(Bot, bot_id).version == "2.0"
    wait_until(recorded, 10)
    stream.close()
    assert "token" in refused(lambda: upload(service, container, "3.0"),
                              grpc.StatusCode.PERMISSION_DENIED)
    # stopped: the container's token no longer opens anything
    stub(service).StopVersion(hosting_pb2.StopVersionRequest(version="2.0"), metadata=auth(token))
    stream = PlayStream(service.channel, container)
    stream.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="t")))
    with pytest.raises(grpc.RpcError) as e:
        stream.next("welcome")
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    stream.close()


def test_resume_needs_a_validated_version(service):
    _, token = service.register("mybot")
    upload(service, token, "1.0")
    stub(service).StopVersion(hosting_pb2.StopVersionRequest(version="1.0"), metadata=auth(token))
    assert "validation" in refused(lambda: stub(service).ResumeVersion(
        hosting_pb2.ResumeVersionRequest(version="1.0"), metadata=auth(token)),
        grpc.StatusCode.FAILED_PRECONDITION)
    upload(service, token, "2.0")
    go_live(service, "2.0")
    stub(service).StopVersion(hosting_pb2.StopVersionRequest(version="2.0"), metadata=auth(token))
    back = stub(service).ResumeVersion(hosting_pb2.ResumeVersionRequest(version="2.0"),
                                       metadata=auth(token)).version
    assert back.state == hosting_pb2.HOSTED_STATE_LIVE and back.restarts == 0
