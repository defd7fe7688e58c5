"""Who plays: a guest (a name, at once, casual games only), sign up (name + password), log in
(rate-limited), log out. Each goes through the engine service (PeopleService: it hashes and
checks passwords); the session then holds the person's id and name, nothing else.
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    redirect,
    render_template,
    request,
    session,
    url_for,
)

from web.security import attempt, local_path
from web.service_client import Refused, client
from web.tableview import person_json

bp = Blueprint("accounts", __name__)


def current() -> dict[str, Any] | None:
    """The session's person (`person_id`, `name`, `guest`, `display_name`), or None."""
    if "person_id" not in session:
        return None
    return {"person_id": int(session["person_id"]), "name": session.get("name", ""),
            "guest": bool(session.get("guest")), "display_name": session.get("display_name", "")}


def person_id() -> int:
    """The session's person id, or a 401 that says how to get one."""
    who = current()
    if who is None:
        raise Refused(401, "UNAUTHENTICATED", "sign up, log in or play as a guest first")
    return int(who["person_id"])


def _start(person: Any) -> None:
    """A fresh session for `person` (never reuse one: no session fixation)."""
    session.clear()
    session.permanent = True
    p = person_json(person)
    session.update(person_id=p["person_id"], name=p["name"], guest=p["guest"],
                   display_name=p["display_name"])


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

    try:
        answer = client().call("Login", people_pb2.LoginRequest(
            name=request.form.get("name", "").strip(), password=request.form.get("password", "")))
    except Refused as e:
        return _form("login.html", e.message, e.status)
    _start(answer.person)
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
    _start(answer.person)
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
    _start(answer.person)
    return redirect(_next())


@bp.post("/logout")
def logout() -> Any:
    session.clear()
    return redirect(url_for("play.index"))


def install_context(app: Any) -> None:
    @app.context_processor
    def person() -> dict[str, Any]:
        return {"me": current()}

