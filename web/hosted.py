"""A bot's hosted versions on its page, for its authors only (issue 46, docs/hosted-web.md).

- "I wrote this bot" (`POST /bots/<id>/claim`): a signed-up person shows the bot's token once;
  the service (HostingService.ClaimBot) checks it and records them as an author
  (db.authors). Throttled per address like a log-in.
- The bot's page shows its authors a "Hosted versions" section (state, reason, restarts, last
  error, updated, validation match), an upload form and stop/resume buttons;
  `/bots/<id>/hosted/<version id>` a version's build and run logs (HTML-escaped: the author's
  output is shown as text, never as markup). Anyone else gets nothing of it: the section is
  not there and the logs page is a 404, as for a page that does not exist.
- Every action goes to HostingService with the web's token and the person's session (the
  service checks again that the person is an author); the web reads versions and logs from the
  database and writes nothing. The web has no operators' sign-in: operators use `bummerl bot
  versions|logs|stop|resume --bot NAME --token $BUMMERL_OPERATOR_TOKEN`.
- An upload is a `.py` file, a `.tar.gz`/`.tgz` or a `.zip` (made into a tar.gz here), at most
  `ARCHIVE_BYTES` (the service's cap on an archive): past it, a 413 that says so.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import PurePosixPath
from typing import Any

from flask import Blueprint, abort, g, redirect, render_template, request, session, url_for
from sqlalchemy import select
from sqlalchemy.orm import defer

from db.authors import is_author
from db.hosted import HostedVersion
from db.models import REMOTE, Bot
from web.accounts import current
from web.db import sessions
from web.errors import error_response
from web.params import ident
from web.queries import iso
from web.security import attempt
from web.service_client import Refused, client

bp = Blueprint("hosted", __name__)

ARCHIVE_BYTES = 900 * 1000  # hosting.archive.MAX_COMPRESSED: the most the service takes
REQUIREMENTS_BYTES = 10_000  # FIELD_LIMITS of UploadVersionRequest.requirements
BODY_BYTES = ARCHIVE_BYTES + REQUIREMENTS_BYTES + 16 * 1024  # the form's other fields
ZIP_MEMBERS = 500  # hosting.archive.MAX_MEMBERS
ZIP_UNPACKED = 20 * 1000 * 1000  # hosting.archive.MAX_UNPACKED
COLUMNS = (HostedVersion.id, HostedVersion.version, HostedVersion.kind, HostedVersion.entry,
           HostedVersion.image_ref, HostedVersion.state, HostedVersion.reason,
           HostedVersion.restarts, HostedVersion.last_error, HostedVersion.validation_match_id,
           HostedVersion.created_at, HostedVersion.updated_at)


class BadUpload(ValueError):
    """What is wrong with an uploaded file (before anything is sent)."""


def authored(bot_id: int) -> bool:
    """Whether the browser's person is an author of bot `bot_id`."""
    me = current()
    if me is None or me["guest"]:
        return False
    with sessions()() as s:
        return is_author(s, int(me["person_id"]), bot_id)


def _row(row: Any) -> dict[str, Any]:
    out = dict(row._mapping)
    out["created_at"], out["updated_at"] = iso(out["created_at"]), iso(out["updated_at"])
    return out


def section(bot: dict[str, Any]) -> dict[str, Any]:
    """What the bot's page shows of hosting to this browser: `author` (then its `versions`,
    newest first) and `can_claim` (a signed-up person who is not an author, of a remote
    bot)."""
    me = current()
    if bot["kind"] != REMOTE or me is None:
        return {"author": False, "can_claim": False, "versions": []}
    if not authored(bot["id"]):
        return {"author": False, "can_claim": not me["guest"], "versions": []}
    with sessions()() as s:
        rows = s.execute(select(*COLUMNS).where(HostedVersion.bot_id == bot["id"])
                         .order_by(HostedVersion.id.desc()).limit(200)).all()
    return {"author": True, "can_claim": False, "versions": [_row(r) for r in rows]}


def _bot(bot_id: str) -> Bot:
    """The remote bot of the path whose author the browser's person is; a 404 otherwise (as
    for a page that does not exist: nobody else learns what it holds)."""
    number = ident(bot_id, "bot id")
    with sessions()() as s:
        bot = s.get(Bot, number)
        if bot is None or bot.kind != REMOTE:
            abort(404)
        s.expunge(bot)
    if not authored(bot.id):
        abort(404)
    return bot


def _version(bot: Bot, version_id: str) -> HostedVersion:
    with sessions()() as s:
        row = s.get(HostedVersion, ident(version_id, "version id"),
                    options=[defer(HostedVersion.source)])  # the files: not shown
        if row is None or row.bot_id != bot.id:
            abort(404)
        s.expunge(row)
        return row


def _act(method: str, message: Any) -> Any:
    """HostingService's `method` for the browser's person (a 401 page without one)."""
    if current() is None:
        raise Refused(401, "UNAUTHENTICATED", "log in first")
    return client().call(method, message, person_session=str(session.get("sid", "")))


def _refused(e: Refused, title: str) -> Any:
    return error_response(e.status, title, e.message)


def _back(bot_id: int) -> Any:
    return redirect(url_for("bots.show", bot_id=bot_id) + "#hosted")


@bp.post("/bots/<bot_id>/claim")
def claim(bot_id: str) -> Any:
    from bummerl.v1 import hosting_pb2

    me = current()
    if me is None:
        return error_response(401, "Log in first", "log in to say you wrote a bot")
    attempt("claim")
    with sessions()() as s:
        bot = s.get(Bot, ident(bot_id, "bot id"))
        if bot is None:
            abort(404)
        name, number = bot.name, bot.id
    try:
        _act("ClaimBot", hosting_pb2.ClaimBotRequest(
            bot_name=name, bot_token=request.form.get("bot_token", "").strip()[:100]))
    except Refused as e:
        return _refused(e, "Not your bot")
    return _back(number)


@bp.get("/bots/<bot_id>/hosted/<version_id>")
def logs(bot_id: str, version_id: str) -> Any:
    bot = _bot(bot_id)
    row = _version(bot, version_id)
    page = render_template("hosted_logs.html", bot=bot, version=row,
                           updated_at=iso(row.updated_at))
    return page, 200, {"Cache-Control": "private, no-store"}


def archive_of(filename: str, data: bytes) -> bytes:
    """The uploaded file as the gzip-compressed tar the service takes."""
    name = PurePosixPath(filename.replace("\\", "/")).name
    if name.endswith((".tar.gz", ".tgz")):
        return data
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        if name.endswith(".py"):
            _add(tar, name, data)
        elif name.endswith(".zip"):
            _unzip(tar, data)
        else:
            raise BadUpload(f"file {name!r}: a .py file, a .tar.gz (.tgz) or a .zip")
    return out.getvalue()


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _unzip(tar: tarfile.TarFile, data: bytes) -> None:
    """The zip's files into `tar` (the service checks their names), within the service's
    limits on members and unpacked bytes."""
    unpacked = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zipped:
            members = [m for m in zipped.infolist() if not m.is_dir()]
            if len(members) > ZIP_MEMBERS:
                raise BadUpload(f"the zip holds {len(members)} files, at most {ZIP_MEMBERS}")
            for member in members:
                with zipped.open(member) as f:
                    content = f.read(ZIP_UNPACKED - unpacked + 1)
                unpacked += len(content)
                if unpacked > ZIP_UNPACKED:
                    raise BadUpload(f"the zip holds more than {ZIP_UNPACKED} bytes unpacked")
                _add(tar, member.filename, content)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as e:
        raise BadUpload(f"not a zip archive ({e})") from None


TOO_LARGE = (f"the upload is larger than this site takes: the bot's files at most "
             f"{ARCHIVE_BYTES} bytes (compressed), the requirements at most "
             f"{REQUIREMENTS_BYTES}; nothing was uploaded")


@bp.before_app_request
def upload_cap() -> None:
    """The upload form's own cap on the request's body (the site takes 64 KiB), set before
    anything reads the form (the CSRF check does, first); past it a 413 that says so."""
    if request.endpoint == "hosted.upload":
        request.max_content_length = BODY_BYTES
        g.too_large = TOO_LARGE


@bp.post("/bots/<bot_id>/hosted")
def upload(bot_id: str) -> Any:
    from bummerl.v1 import hosting_pb2

    bot = _bot(bot_id)
    version = request.form.get("version", "").strip()[:100]
    image = request.form.get("image", "").strip()
    if image:  # an OCI image of the author's (the service checks the reference)
        try:
            _act("UploadVersion", hosting_pb2.UploadVersionRequest(
                version=version, image=image[:300], bot_name=bot.name))
        except Refused as e:
            return _refused(e, "Upload refused")
        return _back(bot.id)
    file = request.files.get("archive")
    wanted = request.files.get("requirements")
    data = file.read(ARCHIVE_BYTES + 1) if file else b""
    requirements = wanted.read(REQUIREMENTS_BYTES + 1) if wanted else b""
    if len(data) > ARCHIVE_BYTES or len(requirements) > REQUIREMENTS_BYTES:
        return error_response(413, "Upload too large", TOO_LARGE)
    if not file or not data:
        return error_response(400, "Upload refused", "archive: choose the bot's file")
    entry = request.form.get("entry", "").strip()
    filename = file.filename or ""
    if filename.endswith(".py") and ":" not in entry and entry:  # the class in that file
        entry = f"{PurePosixPath(filename.replace(chr(92), '/')).name}:{entry}"
    try:
        archive = archive_of(filename, data)
        text = requirements.decode("utf-8")
    except BadUpload as e:
        return error_response(400, "Upload refused", str(e))
    except UnicodeDecodeError:
        return error_response(400, "Upload refused", "requirements: not UTF-8 text")
    try:
        _act("UploadVersion", hosting_pb2.UploadVersionRequest(
            version=version, entry=entry[:200],
            archive=archive, requirements=text, bot_name=bot.name))
    except Refused as e:
        return _refused(e, "Upload refused")
    return _back(bot.id)


def _change(bot_id: str, version_id: str, method: str) -> Any:
    from bummerl.v1 import hosting_pb2

    bot = _bot(bot_id)
    row = _version(bot, version_id)
    make = {"StopVersion": hosting_pb2.StopVersionRequest,
            "ResumeVersion": hosting_pb2.ResumeVersionRequest}[method]
    try:
        _act(method, make(version=row.version, bot_name=bot.name))
    except Refused as e:
        return _refused(e, "Refused")
    return _back(bot.id)


@bp.post("/bots/<bot_id>/hosted/<version_id>/stop")
def stop(bot_id: str, version_id: str) -> Any:
    return _change(bot_id, version_id, "StopVersion")


@bp.post("/bots/<bot_id>/hosted/<version_id>/resume")
def resume(bot_id: str, version_id: str) -> Any:
    return _change(bot_id, version_id, "ResumeVersion")
