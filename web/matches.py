"""Matches: the list (running first, filtered, paginated), one match with its hands and its
action log as a transcript; JSON twins under /api/."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, render_template, request, url_for

from web import analyses, live, queries
from web.db import sessions
from web.params import ident, int_arg, page_arg, text_arg
from web.security import sockets_url

bp = Blueprint("matches", __name__)


def _page() -> dict[str, Any]:
    where = queries.MatchFilter(state=text_arg("state"), bot_id=int_arg("bot", what="bot id"),
                                profile=text_arg("profile"), origin=text_arg("origin"))
    page = page_arg()
    per_page = current_app.config["PAGE_SIZE"]
    result = queries.list_matches(sessions(), where, page, per_page,
                                  before=int_arg("before", what="match id"))
    result["filter"] = {"state": where.state, "bot": where.bot_id, "profile": where.profile,
                        "origin": where.origin}
    return result


@bp.get("/matches")
def index() -> str:
    result = _page()
    bot = queries.bot_exists(sessions(), result["filter"]["bot"]).name \
        if result["filter"]["bot"] is not None else None
    args = {k: v for k, v in request.args.items() if k not in ("page", "before") and v}
    live = result["filter"]["state"] != "finished" and result["before"] is None
    return render_template("matches.html", live=live, bot_name=bot, args=args,
                           states=queries.STATES, profiles=queries.PROFILES,
                           origins=queries.ORIGINS, **result)


@bp.get("/events/matches")
def index_events() -> Any:
    """The live part of the matches list (same query arguments as /matches)."""
    def render() -> dict[str, Any]:
        result = _page()
        args = {k: v for k, v in request.args.items() if k not in ("page", "before") and v}
        return {"html": {"live-matches": render_template("_matches_live.html", args=args,
                                                         **result)}, "final": False}

    render()  # a bad filter is a 400/404 here, not a broken stream
    return live.stream(request.full_path, render)


@bp.get("/matches/<match_id>")
def show(match_id: str) -> str:
    match = queries.match_detail(sessions(), ident(match_id, "match id"))
    return render_template("match.html", match=match, events_urls=events_urls(match["id"]))


def events_urls(number: int) -> tuple[str, str | None]:
    """Where the page's live part comes from, and where from if that refuses: the socket
    tier's spectators' stream (web.sockets.spectate) then this web's own (`events`) when the
    web has a tier, else only this web's own."""
    own = url_for("matches.events", match_id=number)
    base = sockets_url(current_app)
    return (own, None) if base is None else (f"{base}/sockets/match/{number}", own)


def live_parts(match: dict[str, Any]) -> dict[str, Any]:
    """The live part of a match page (`match`: queries.match_detail), as its streams send it:
    the same templates as the page, so an update is what a reload shows."""
    return {"html": {"live-match": render_template("_match_live.html", match=match),
                     "live-facts": render_template("_match_facts.html", match=match)},
            "final": match["state"] != "running"}


@bp.get("/events/matches/<match_id>")
def events(match_id: str) -> Any:
    """The live part of a match page: its facts (the ended and detail rows appear when it
    ends), its table, refusals, hands and log."""
    number = ident(match_id, "match id")
    queries.match_detail(sessions(), number)  # 404 before the stream starts

    def render() -> dict[str, Any]:
        return live_parts(queries.match_detail(sessions(), number))

    return live.stream(f"match:{number}", render)


@bp.get("/matches/<match_id>/hands/<number>")
def replay(match_id: str, number: str) -> str:
    """A finished hand step by step, both hands visible (`#step-N` links to a step). Hands are
    numbered from 0, as in the API and the kit's log (`HandEnded.hand_number`)."""
    data = queries.hand_replay(sessions(), ident(match_id, "match id"),
                               ident(number, "hand number", low=0))
    data["analysis"] = analyses.of_hand(sessions(), data["match"]["id"], data["hand"]["number"],
                                        [seat["name"] for seat in data["match"]["seats"]])
    return render_template("replay.html", data=data)


@bp.get("/api/matches/<match_id>/hands/<number>")
def api_replay(match_id: str, number: str) -> Any:
    """A finished hand's deal and steps (404 while the hand is in play)."""
    return jsonify(queries.hand_replay(sessions(), ident(match_id, "match id"),
                                       ident(number, "hand number", low=0)))


@bp.get("/api/matches")
def api_index() -> Any:
    """`?state=running|finished&bot=ID&profile=soft&origin=ladder&page=N`: one page, running first;
    `before=ID` (a page's `next_before`): the matches over older than match ID."""
    return jsonify(_page())


@bp.get("/api/matches/<match_id>")
def api_show(match_id: str) -> Any:
    return jsonify(queries.match_detail(sessions(), ident(match_id, "match id")))
