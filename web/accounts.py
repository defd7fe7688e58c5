"""Who plays: a guest (a name, at once, casual games only), sign up (name + password), log in
(throttled: web.security), log out, log out everywhere, change the password (/account). Each
goes through the engine service (PeopleService: it hashes and checks passwords, and issues and
revokes sessions); the cookie then holds the person's id and name and the session's token
(`sid`), nothing else.

A cookie counts only while its session is live: `current()` reads the session's row
(db.people.live_session), so once the service revoked it (log out: that session; log out
everywhere or a password change: all of the person's), every copy of the cookie is a visitor's
again. A live answer is kept for `SESSION_CHECK_S` seconds (default 2), so that a table's many
requests do not each read the database: a session this process ended counts at once (it drops
its own answers), one another web process ended within those seconds.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from flask import (
    Blueprint,
    current_app,
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


class LiveSessions:
    """The sessions found live lately: token → (person id, until when it is taken as live)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.known: dict[str, tuple[int, float]] = {}
        self.lock = threading.Lock()

    def person(self, token: str) -> int | None:
        """The person whose live session `token` is, from the database at most every
        `seconds`; None for a session that is not live."""
        now = time.monotonic()
        found = self.known.get(token)
        if found is not None and found[1] > now:
            return found[0]
        with sessions()() as s:
            person = live_session(s, token)
        with self.lock:
            if person is None:
                self.known.pop(token, None)
            else:
                if len(self.known) > 50_000:  # a bound: the oldest answers go first
                    self.known = {t: v for t, v in self.known.items() if v[1] > now}
                self.known[token] = (person, now + self.seconds)
        return person

    def forget(self, token: str | None = None, person: int | None = None) -> None:
        """Drop the answers of `token`, or of every session of `person` (this process ended
        them)."""
        with self.lock:
            if token is not None:
                self.known.pop(token, None)
            if person is not None:
                self.known = {t: v for t, v in self.known.items() if v[0] != person}


def live() -> LiveSessions:
    """This app's LiveSessions (made on first use, with its SESSION_CHECK_S)."""
    found: LiveSessions | None = current_app.extensions.get("bummerl.live_sessions")
    if found is None:
        found = LiveSessions(float(current_app.config.get("SESSION_CHECK_S", 2.0)))
        current_app.extensions["bummerl.live_sessions"] = found
    return found


def current() -> dict[str, Any] | None:
    """The session's person (`person_id`, `name`, `guest`, `display_name`), or None: also when
    the cookie's session was revoked or expired (then the cookie is cleared)."""
    if "bummerl_me" in g:
        return g.bummerl_me  # type: ignore[no-any-return]
    me = None
    if "person_id" in session:
        token = str(session.get("sid", ""))
        person = live().person(token) if token else None
        if person is not None and person == session["person_id"]:
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
        live().forget(token=token)
    session.clear()
    return redirect(url_for("play.index"))


@bp.post("/logout/everywhere")
def logout_everywhere() -> Any:
    """End every session of the person (every browser), this one included."""
    from bummerl.v1 import people_pb2

    me = person_id()
    client().call("LogoutEverywhere", people_pb2.LogoutEverywhereRequest(person_id=me))
    live().forget(person=me)
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
    live().forget(person=me["person_id"])
    session["sid"] = answer.session
    g.pop("bummerl_me", None)
    return render_template("account.html", error=None, done=True)


def install_context(app: Any) -> None:
    @app.context_processor
    def person() -> dict[str, Any]:
        return {"me": current()}

