"""Hosted versions on the bot's page (issue 46, web/hosted.py), against the real service and the
web app (tests/web/signinkit.py), the service hosting bots (`hosting="podman"`: nothing is
built here, the workers do that: tests/hosting):

- a signed-up person shows the bot's token once ("I wrote this bot") and then sees its hosted
  versions and their logs; a wrong token, another bot's token, a guest and a POST without its
  CSRF token write nothing;
- another signed-up person and an anonymous visitor see nothing of them (no section, the logs
  page a 404 without the logs' text), and cannot stop them;
- a log holding markup is shown as text (escaped);
- the upload form uploads a .py file or a .zip (state building in the database); a bad upload
  shows the service's own message, one past the size cap says so, and neither writes anything;
- stop and resume go through the service (its refusal shown);
- at the service: the web's token with a person's session acts only on bots the person wrote,
  only while the session is live, and only with the web's token.
"""

from __future__ import annotations

import io
import zipfile

import grpc
import pytest
from bummerl.v1 import hosting_pb2, hosting_pb2_grpc
from signinkit import signin_site
from sqlalchemy import func, select
from tablekit import WEB_TOKEN, settings

from db import hosted
from db.authors import BotAuthor
from db.hosted import HostedVersion
from services.ops import bots

PASSWORD = "correct horse"
BOT = b"from client import Bot\n\nclass MyBot(Bot):\n    version = '1.0'\n"
HOSTILE = "<script>alert('pwned')</script>"


@pytest.fixture
def site(tmp_path, monkeypatch):
    config = settings(hosting="podman", hosted_per_bot=3)
    with signin_site(tmp_path, monkeypatch, {"LOGIN_LIMIT": "1000 per minute"},
                     config=config) as s:
        bot, token = bots.register_bot("mybot", sessions=s.sessions)
        other, other_token = bots.register_bot("otherbot", sessions=s.sessions)
        s.bot_id, s.token, s.other_token = bot.id, token, other_token  # type: ignore[attr-defined]
        yield s


def author(site, name="anna"):
    """A signed-up person who claimed mybot."""
    browser = site.browser()
    browser.signup(name, PASSWORD)
    browser.get(f"/bots/{site.bot_id}")
    answer = browser.post(f"/bots/{site.bot_id}/claim", {"bot_token": site.token})
    assert answer.status_code == 302, answer.text
    return browser


def add_version(site, version="1.0", **columns):
    """A hosted version as the workers leave it (a failed build, its logs)."""
    row = HostedVersion(bot_id=site.bot_id, version=version, kind=hosted.FILES,
                        entry="mybot.py:MyBot", state=hosted.FAILED, restarts=2,
                        reason=f"build failed {HOSTILE}", build_log=f"BUILD-LINE {HOSTILE}",
                        run_log="RUN-LINE the container's output", last_error="LAST-ERROR boom",
                        **columns)
    with site.sessions() as s:
        s.add(row)
        s.commit()
        return row.id


def count(site, model) -> int:
    with site.sessions() as s:
        return s.scalar(select(func.count()).select_from(model))


def test_an_author_sees_the_versions_and_their_logs_escaped(site):
    anna = site.browser()
    anna.signup("anna", PASSWORD)
    page = anna.get(f"/bots/{site.bot_id}").text
    assert 'id="claim-form"' in page and "Hosted versions" not in page
    answer = anna.post(f"/bots/{site.bot_id}/claim", {"bot_token": site.token})
    assert answer.status_code == 302 and answer.location.endswith(f"/bots/{site.bot_id}#hosted")
    assert count(site, BotAuthor) == 1
    version_id = add_version(site)
    page = anna.get(f"/bots/{site.bot_id}").text
    assert "Hosted versions" in page and 'id="upload-form"' in page
    assert f'id="hosted-{version_id}"' in page and "failed" in page and "LAST-ERROR boom" in page
    assert HOSTILE not in page and "&lt;script&gt;" in page
    logs = anna.get(f"/bots/{site.bot_id}/hosted/{version_id}")
    assert logs.status_code == 200 and logs.mimetype == "text/html"
    assert logs.headers["Cache-Control"] == "private, no-store"
    assert "BUILD-LINE" in logs.text and "RUN-LINE" in logs.text and "LAST-ERROR" in logs.text
    assert HOSTILE not in logs.text and "&lt;script&gt;alert(&#39;pwned&#39;)" in logs.text
    # claiming again changes nothing
    assert anna.post(f"/bots/{site.bot_id}/claim", {"bot_token": site.token}).status_code == 302
    assert count(site, BotAuthor) == 1


def test_nobody_else_sees_them_nor_stops_them(site):
    author(site)
    version_id = add_version(site, "2.0")
    with site.sessions() as s:
        s.get(HostedVersion, version_id).state = hosted.LIVE
        s.commit()
    bob = site.browser("127.0.0.2")
    bob.signup("bob", PASSWORD)
    anonymous = site.browser("127.0.0.3")
    guest = site.browser("127.0.0.4")
    guest.guest("gus")
    for who in (bob, anonymous, guest):
        page = who.get(f"/bots/{site.bot_id}")
        assert page.status_code == 200
        assert "Hosted versions" not in page.text and "LAST-ERROR" not in page.text
        assert f"hosted-{version_id}" not in page.text
        logs = who.get(f"/bots/{site.bot_id}/hosted/{version_id}")
        assert logs.status_code == 404
        assert "BUILD-LINE" not in logs.text and "RUN-LINE" not in logs.text
        assert who.post(f"/bots/{site.bot_id}/hosted/{version_id}/stop").status_code == 404
    assert 'id="claim-form"' in bob.get(f"/bots/{site.bot_id}").text  # bob may claim
    assert 'id="claim-form"' not in anonymous.get(f"/bots/{site.bot_id}").text
    assert 'id="claim-form"' not in guest.get(f"/bots/{site.bot_id}").text
    with site.sessions() as s:
        assert s.get(HostedVersion, version_id).state == hosted.LIVE


def test_a_wrong_token_a_guest_and_no_csrf_claim_nothing(site):
    bob = site.browser()
    bob.signup("bob", PASSWORD)
    bob.get(f"/bots/{site.bot_id}")
    wrong = bob.post(f"/bots/{site.bot_id}/claim", {"bot_token": "not-a-token"})
    assert wrong.status_code == 401 and "unknown token" in wrong.text
    other = bob.post(f"/bots/{site.bot_id}/claim", {"bot_token": site.other_token})
    assert other.status_code == 403 and "this token is not mybot" in other.text
    plain = bob.client.post(f"/bots/{site.bot_id}/claim", data={"bot_token": site.token})
    assert plain.status_code == 400 and "CSRF" in plain.text
    guest = site.browser("127.0.0.2")
    guest.guest("gus")
    guest.get(f"/bots/{site.bot_id}")
    refused = guest.post(f"/bots/{site.bot_id}/claim", {"bot_token": site.token})
    assert refused.status_code == 409 and "a guest cannot" in refused.text
    nobody = site.browser("127.0.0.3")
    nobody.get("/login")
    assert nobody.post(f"/bots/{site.bot_id}/claim",
                       {"bot_token": site.token}).status_code == 401
    assert count(site, BotAuthor) == 0


def upload(browser, site, filename, data, **fields):
    form = {"archive": (io.BytesIO(data), filename), "entry": "MyBot", "version": "1.0",
            **fields}
    return browser.post(f"/bots/{site.bot_id}/hosted", form)


def test_the_upload_form_uploads_and_shows_the_service_refusals(site):
    anna = author(site)
    answer = upload(anna, site, "mybot.py", BOT)
    assert answer.status_code == 302, answer.text
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("pkg/mybot.py", BOT)
    answer = upload(anna, site, "bot.zip", zipped.getvalue(), entry="pkg/mybot.py:MyBot",
                    version="1.1", requirements=(io.BytesIO(b"numpy==2.1.0\n"), "req.txt"))
    assert answer.status_code == 302, answer.text
    with site.sessions() as s:
        rows = {r.version: r for r in s.scalars(select(HostedVersion))}
    assert rows["1.0"].state == hosted.BUILDING and rows["1.0"].entry == "mybot.py:MyBot"
    assert rows["1.1"].state == hosted.BUILDING and rows["1.1"].requirements == "numpy==2.1.0\n"
    # refused by the service, its message shown, nothing written
    missing = upload(anna, site, "mybot.py", BOT, entry="other.py:MyBot", version="2.0")
    assert missing.status_code == 400
    assert "the entry point&#39;s file &#39;other.py&#39; is not in the upload" in missing.text
    again = upload(anna, site, "mybot.py", BOT)
    assert again.status_code == 409 and "already uploaded version" in again.text
    loose = upload(anna, site, "mybot.py", BOT, version="2.1",
                   requirements=(io.BytesIO(b"numpy>=1\n"), "req.txt"))
    assert loose.status_code == 400 and "is not a pinned" in loose.text
    kind = upload(anna, site, "mybot.exe", BOT, version="2.2")
    assert kind.status_code == 400 and "a .py file, a .tar.gz" in kind.text
    large = upload(anna, site, "mybot.py", b"#" * 900_001, version="2.3")
    assert large.status_code == 413 and "at most 900000 bytes" in large.text
    huge = upload(anna, site, "mybot.py", b"#" * 2_000_000, version="2.4")
    assert huge.status_code == 413 and "at most 900000 bytes" in huge.text
    plain = anna.client.post(f"/bots/{site.bot_id}/hosted", data={
        "archive": (io.BytesIO(BOT), "mybot.py"), "entry": "MyBot", "version": "3.0"})
    assert plain.status_code == 400 and "CSRF" in plain.text
    assert count(site, HostedVersion) == 2
    # another person cannot upload for it
    bob = site.browser("127.0.0.2")
    bob.signup("bob", PASSWORD)
    bob.get(f"/bots/{site.bot_id}")
    assert upload(bob, site, "mybot.py", BOT, version="4.0").status_code == 404
    assert count(site, HostedVersion) == 2


def test_the_image_form_uploads_an_image_and_shows_a_bad_reference(site):
    anna = author(site)
    page = anna.get(f"/bots/{site.bot_id}")
    assert 'id="image-form"' in page.text
    done = anna.post(f"/bots/{site.bot_id}/hosted",
                     {"image": "registry.example/mybot-ts:1.0", "version": "1.0"})
    assert done.status_code == 302, done.text
    with site.sessions() as s:
        row = s.scalars(select(HostedVersion)).one()
    assert row.image_ref == "registry.example/mybot-ts:1.0" and row.state == hosted.BUILDING
    bad = anna.post(f"/bots/{site.bot_id}/hosted", {"image": "Not An Image!", "version": "1.1"})
    assert bad.status_code == 400 and "image:" in bad.text
    assert count(site, HostedVersion) == 1


def test_stop_and_resume_go_through_the_service(site):
    anna = author(site)
    assert upload(anna, site, "mybot.py", BOT).status_code == 302
    with site.sessions() as s:
        version_id = s.scalar(select(HostedVersion.id))
    anna.get(f"/bots/{site.bot_id}")
    assert anna.post(f"/bots/{site.bot_id}/hosted/{version_id}/stop").status_code == 302
    with site.sessions() as s:
        row = s.get(HostedVersion, version_id)
        assert row.state == hosted.STOPPED and row.reason == "stopped by its author"
    refused = anna.post(f"/bots/{site.bot_id}/hosted/{version_id}/resume")
    assert refused.status_code == 409 and "never passed its validation" in refused.text


def test_the_service_takes_a_person_only_for_bots_they_wrote(site):
    anna = author(site)
    channel = grpc.insecure_channel(site.service)
    stub = hosting_pb2_grpc.HostingServiceStub(channel)
    sid = sid_of(site, anna)

    def list_as(bearer, person, bot_name):
        return stub.ListVersions(hosting_pb2.ListVersionsRequest(bot_name=bot_name), metadata=(
            ("authorization", f"Bearer {bearer}"), ("bummerl-session", person)))

    add_version(site)
    assert [v.version for v in list_as(WEB_TOKEN, sid, "mybot").versions] == ["1.0"]
    for bearer, person, bot_name, code in [
            (WEB_TOKEN, sid, "otherbot", grpc.StatusCode.PERMISSION_DENIED),
            (WEB_TOKEN, sid, "", grpc.StatusCode.INVALID_ARGUMENT),
            (site.token, sid, "mybot", grpc.StatusCode.PERMISSION_DENIED),  # not the web's
            (WEB_TOKEN, "no-such-session", "mybot", grpc.StatusCode.UNAUTHENTICATED)]:
        with pytest.raises(grpc.RpcError) as e:
            list_as(bearer, person, bot_name)
        assert e.value.code() == code, (bearer, person, bot_name)
    anna.post("/logout")
    with pytest.raises(grpc.RpcError) as e:
        list_as(WEB_TOKEN, sid, "mybot")
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    channel.close()


def sid_of(site, browser) -> str:
    """The person's session token, which the browser's signed cookie holds."""
    serializer = site.app.session_interface.get_signing_serializer(site.app)
    return str(serializer.loads(browser.cookie())["sid"])
