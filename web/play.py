"""Playing from the browser: the play page (house bots strongest first by their ladder rating,
shown; remote bots that accept
people, profile, time control, casual or rated; play a friend by link), the table page, and the
table's JSON, actions and event stream.

The server is the authority and the page a view (lila's round module): `/api/table/<id>` is the
table as the person's seat sees it (PeopleService.GetTable), `POST /api/table/<id>/act` an
intent the service accepts or refuses (PeopleService.Act, the same path as a bot's
SubmitAction: an illegal card is refused with its rule named), and `/events/table/<id>` says
when the table changed (web.tablefeed). Every call names the session's person; the service
checks that the person holds the seat.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import (
    Blueprint,
    Flask,
    current_app,
    g,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)

from web import tablefeed, tickets
from web.accounts import current, person_id
from web.errors import error_response
from web.params import MAX_ID, ident, json_body, json_int
from web.queries import Invalid
from web.security import sockets_url
from web.service_client import Refused, client
from web.tableview import opponent_json, stamped, table_json

bp = Blueprint("play", __name__)

# Time-control presets: (label, move ms, bank ms). A person thinks longer than a bot.
PRESETS = {
    "blitz": ("Blitz: 10 s a move + 1 min bank", 10_000, 60_000),
    "rapid": ("Rapid: 30 s a move + 3 min bank", 30_000, 180_000),
    "relaxed": ("Relaxed: 2 min a move + 10 min bank", 120_000, 600_000),
}
DEFAULT_PRESET = "rapid"
PROFILE_NUMBERS: dict[str, Any] = {"soft": 1, "sharp": 2}  # bummerl.v1.Profile values


def _profile() -> Any:  # a bummerl.v1.Profile value
    name = request.values.get("profile", "soft")
    if name not in PROFILE_NUMBERS:
        raise Invalid(f"profile must be soft or sharp, not {name[:20]!r}")
    return PROFILE_NUMBERS[name]


def _time_control() -> Any:
    from bummerl.v1 import match_pb2

    name = request.values.get("time", DEFAULT_PRESET)
    if name not in PRESETS:
        raise Invalid(f"time must be one of {', '.join(PRESETS)}, not {name[:20]!r}")
    _, move, bank = PRESETS[name]
    return match_pb2.TimeControl(move_ms=move, bank_ms=bank)


@bp.get("/play")
def index() -> Any:
    from bummerl.v1 import people_pb2

    me = current()
    if me is None:
        return render_template("play_welcome.html", error=None, name="")
    error = None
    opponents: list[dict[str, Any]] = []
    try:
        answer = client().call("ListOpponents", people_pb2.ListOpponentsRequest(
            profile=PROFILE_NUMBERS["soft"]))
        opponents = [opponent_json(o) for o in answer.opponents]
    except Refused as e:
        error = e.message
    from web import people_queries

    # the strength they are listed by (the service's order): their ladder rating, soft rules
    ladder = people_queries.ladder_ratings([o["bot_id"] for o in opponents], "soft")
    for o in opponents:
        o["ladder"] = ladder.get(o["bot_id"])
    tables = people_queries.open_tables(me["person_id"])
    return render_template("play.html", opponents=opponents, presets=PRESETS,
                           default_preset=DEFAULT_PRESET, error=error, tables=tables)


@bp.post("/play")
def start() -> Any:
    from bummerl.v1 import people_pb2

    answer = client().call("StartGame", people_pb2.StartGameRequest(
        person_id=person_id(), opponent=request.form.get("opponent", ""),
        profile=_profile(), time_control=_time_control(),
        rated=request.form.get("rated") in ("1", "on", "yes", "true")))
    return redirect(url_for("play.table", match_id=answer.match.match_id))


@bp.post("/play/friend")
def invite() -> Any:
    from bummerl.v1 import people_pb2

    answer = client().call("CreateInvite", people_pb2.CreateInviteRequest(
        person_id=person_id(), profile=_profile(), time_control=_time_control()))
    return redirect(url_for("play.friend", code=answer.code))


@bp.get("/play/friend/<code>")
def friend(code: str) -> Any:
    """An invite's link: its maker waits here for the friend (the page moves to the table once
    someone took the seat); anyone else may take the seat (the first one gets it)."""
    from web import people_queries

    invite = people_queries.invite(code)
    me = current()
    if invite["match_id"] is not None and me is not None and me["person_id"] in (
            invite["inviter_id"], invite["accepter_id"]):
        return redirect(url_for("play.table", match_id=invite["match_id"]))
    return render_template("friend.html", invite=invite, code=code,
                           mine=me is not None and me["person_id"] == invite["inviter_id"])


@bp.get("/api/invites/<code>")
def api_invite(code: str) -> Any:
    from web import people_queries

    invite = people_queries.invite(code)
    me = current()
    mine = me is not None and me["person_id"] in (invite["inviter_id"], invite["accepter_id"])
    return jsonify({"taken": invite["match_id"] is not None, "expired": invite["expired"],
                    "table": url_for("play.table", match_id=invite["match_id"])
                    if mine and invite["match_id"] is not None else None})


@bp.post("/play/friend/<code>")
def accept(code: str) -> Any:
    from bummerl.v1 import people_pb2

    answer = client().call("AcceptInvite", people_pb2.AcceptInviteRequest(
        person_id=person_id(), code=code))
    return redirect(url_for("play.table", match_id=answer.match.match_id))


@bp.get("/table/<match_id>")
def table(match_id: str) -> Any:
    number = ident(match_id, "match id")
    state = _table(number)  # 401/403/404 before the page
    return render_template("table.html", match_id=number, state=state,
                           live_url=live_url(number))


def live_url(number: int) -> str | None:
    """The table's stream at the socket tier, with this person's ticket (web.tickets); None
    when the web has no socket tier (then its own feed, `events`, tells of changes)."""
    base = sockets_url(current_app)
    if base is None:
        return None
    ticket = tickets.issue(current_app.secret_key, person_id(),  # type: ignore[arg-type]
                           number, str(session.get("sid", "")))
    return f"{base}/sockets/table/{number}?ticket={ticket}"


def _table(number: int) -> dict[str, Any]:
    from bummerl.v1 import people_pb2

    answer = client().call("GetTable", people_pb2.GetTableRequest(person_id=person_id(),
                                                                  match_id=number))
    return stamped(table_json(answer.table))


@bp.get("/api/table/<match_id>")
def api_table(match_id: str) -> Any:
    return jsonify(_table(ident(match_id, "match id")))


@bp.post("/api/table/<match_id>/act")
def act(match_id: str) -> Any:
    """JSON `{"action": "play TH", "seq": N, "request_id": "..."}`: the table after it, or the
    service's refusal (an illegal action names its rule)."""
    from bummerl.v1 import people_pb2

    number = ident(match_id, "match id")
    body = json_body()
    action = body.get("action")
    seq = json_int(body, "seq", 0, MAX_ID)
    if not isinstance(action, str) or not action or len(action) > 20:
        raise Invalid('the body must hold "action": the action\'s text, e.g. "play TH"')
    if seq is None:
        raise Invalid('the body must hold "seq": the seq of the table the action was chosen on')
    request_id = body.get("request_id") or uuid.uuid4().hex
    if not isinstance(request_id, str) or len(request_id) > 64:
        raise Invalid('"request_id" must be a text of at most 64 characters')
    answer = client().call("Act", people_pb2.ActRequest(
        person_id=person_id(), match_id=number, expected_seq=seq, action=action,
        request_id=request_id))
    return jsonify(stamped(table_json(answer.table)))


@bp.post("/api/table/<match_id>/resign")
def resign(match_id: str) -> Any:
    from bummerl.v1 import people_pb2

    answer = client().call("Resign", people_pb2.ResignRequest(
        person_id=person_id(), match_id=ident(match_id, "match id")))
    return jsonify(stamped(table_json(answer.table)))


@bp.get("/events/table/<match_id>")
def events(match_id: str) -> Any:
    number = ident(match_id, "match id")
    _table(number)  # only a seat's person may follow the table
    return tablefeed.stream(number)


def install(app: Flask) -> None:
    tablefeed.install(app)

    @app.errorhandler(Refused)
    def refused(e: Refused) -> Any:
        titles = {400: "Refused", 401: "Sign in first", 403: "Not your seat",
                  404: "Not found", 409: "Refused", 429: "Too many attempts",
                  503: "The engine service does not answer"}
        g.retry_after = e.retry_after  # a 429's Retry-After (web.security)
        answer = error_response(e.status, titles.get(e.status, "Refused"), e.message)
        if request.path.startswith("/api/"):
            body, status = answer
            data = body.get_json()
            data["code"] = e.code
            data["rule"] = e.rule
            return jsonify(data), status
        return answer
