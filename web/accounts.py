"""Who plays: a guest (a name, at once, casual games only), sign up (name + password), log in
(throttled: web.security), log out, log out everywhere, change the password (/account). Each
goes through the engine service (PeopleService: it hashes and checks passwords, and issues and
revokes sessions); the cookie then holds the person's id and name and the session's token
(`sid`), nothing else.

A cookie counts only while its session is live: `current()` reads the session's row
(db.people.live_session) on every request, so once the service revoked it (log out: that
session; log out everywhere or a password change: all of the person's), every copy of the
cookie is a visitor's again.
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)

from db.people import live_session
from web.db import sessions
from web.security import attempt, local_path, login_allowed, login_failed, login_succeeded
from web.service_client import Refused, client
from web.tableview import person_json

bp = Blueprint("accounts", __name__)


def current() -> dict[str, Any] | None:
    """The session's person (`person_id`, `name`, `guest`, `display_name`), or None: also when
    the cookie's session was revoked or expired (then the cookie is cleared)."""
    if "bummerl_me" in g:
        return g.bummerl_me  # type: ignore[no-any-return]
    me = None
    if "person_id" in session:
        with sessions()() as s:
            live = live_session(s, str(session.get("sid", "")))
        if live is not None and live == session["person_id"]:
            me = {"person_id": int(session["person_id"]), "name": session.get("name", ""),
                  "guest": bool(session.get("guest")),
                  "display_name": session.get("display_name", "")}
        else:
            session.clear()
    g.bummerl_me = me
    return me


def person_id() -> int:
    """The session's person id, or a 401 that says how to get one."""
    who = current()
    if who is None:
        raise Refused(401, "UNAUTHENTICATED", "sign up, log in or play as a guest first")
    return int(who["person_id"])


def _start(person: Any, token: str) -> None:
    """A fresh cookie for `person`'s new session `token` (never reuse one: no session
    fixation)."""
    session.clear()
    session.permanent = True
    p = person_json(person)
    session.update(person_id=p["person_id"], name=p["name"], guest=p["guest"],
                   display_name=p["display_name"], sid=token)
    g.pop("bummerl_me", None)


def _next() -> str:
    """Where to go after signing in: `next` if it is a path of this site, else /play."""
    return local_path(request.values.get("next", "")) or url_for("play.index")


def _form(template: str, error: str | None, status: int = 200) -> Any:
    return render_template(template, error=error, name=request.form.get("name", ""),
                           next=request.values.get("next", "")), status


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    if request.method == "GET":
        return _form("login.html", None)
    attempt("login")
    from bummerl.v1 import people_pb2

    name = request.form.get("name", "").strip()
    login_allowed(name)
    try:
        answer = client().call("Login", people_pb2.LoginRequest(
            name=name, password=request.form.get("password", "")))
    except Refused as e:
        if e.code == "UNAUTHENTICATED":
            login_failed(name)
        return _form("login.html", e.message, e.status)
    login_succeeded(name)
    _start(answer.person, answer.session)
    return redirect(_next())


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> Any:
    if request.method == "GET":
        return _form("signup.html", None)
    attempt("signup")
    from bummerl.v1 import people_pb2

    password = request.form.get("password", "")
    if password != request.form.get("password2", password):
        return _form("signup.html", "the two passwords differ", 400)
    try:
        answer = client().call("RegisterPerson", people_pb2.RegisterPersonRequest(
            name=request.form.get("name", "").strip(), password=password))
    except Refused as e:
        return _form("signup.html", e.message, e.status)
    _start(answer.person, answer.session)
    return redirect(_next())


@bp.post("/guest")
def guest() -> Any:
    attempt("guest")
    from bummerl.v1 import people_pb2

    try:
        answer = client().call("StartGuest", people_pb2.StartGuestRequest(
            name=request.form.get("name", "").strip()))
    except Refused as e:
        return render_template("play_welcome.html", error=e.message,
                               name=request.form.get("name", "")), e.status
    _start(answer.person, answer.session)
    return redirect(_next())


@bp.post("/logout")
def logout() -> Any:
    """End this session at the service (every copy of the cookie), then clear the cookie."""
    from bummerl.v1 import people_pb2

    token = str(session.get("sid", ""))
    if token:  # (refused: the page says why, and the cookie stays until it is ended)
        client().call("Logout", people_pb2.LogoutRequest(session=token))
    session.clear()
    return redirect(url_for("play.index"))


@bp.post("/logout/everywhere")
def logout_everywhere() -> Any:
    """End every session of the person (every browser), this one included."""
    from bummerl.v1 import people_pb2

    client().call("LogoutEverywhere", people_pb2.LogoutEverywhereRequest(person_id=person_id()))
    session.clear()
    return redirect(url_for("play.index"))


@bp.route("/account", methods=["GET", "POST"])
def account() -> Any:
    """The person's account: change the password (every other session ends), log out
    everywhere."""
    from bummerl.v1 import people_pb2

    me = current()
    if me is None:
        return redirect(url_for("accounts.login", next=request.path))
    if request.method == "GET":
        return render_template("account.html", error=None, done=False)
    attempt("login")
    new = request.form.get("new_password", "")
    if new != request.form.get("new_password2", new):
        return render_template("account.html", error="the two new passwords differ",
                               done=False), 400
    try:
        answer = client().call("ChangePassword", people_pb2.ChangePasswordRequest(
            person_id=me["person_id"], old_password=request.form.get("old_password", ""),
            new_password=new))
    except Refused as e:
        return render_template("account.html", error=e.message, done=False), e.status
    session["sid"] = answer.session
    g.pop("bummerl_me", None)
    return render_template("account.html", error=None, done=True)


def install_context(app: Any) -> None:
    @app.context_processor
    def person() -> dict[str, Any]:
        return {"me": current()}

