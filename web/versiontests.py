"""Version tests: the list (/tests) and one test's page (/tests/<id>), both live: the LLR
between its bounds, the score and the Elo difference with their 95 % intervals, the pairs and
their trinomial counts, each side's time per move, and the test's matches (`db.versiontests`,
read from the database only)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template
from sqlalchemy import select

from db.settings import settings
from db.versiontests import H0, H1, OPEN, VersionTest, list_tests, summarize
from web import live
from web.db import sessions
from web.filters import bound, plural, signed
from web.params import ident
from web.queries import Missing

bp = Blueprint("versiontests", __name__)
SHOWN = 100


def decision(t: Any) -> str | None:
    """What the SPRT decided, in words that fit the estimate beside it (shown after the
    state's badge, H1 or H0): which hypothesis it accepted over the other (H1: the Elo
    difference is at least elo1; H0: at most elo0) and on which bound, not a measured
    difference (that is the estimate and its interval). None unless the test ended H1 or H0."""
    v = t.test
    if v.state not in (H1, H0) or v.elo0 is None or v.elo1 is None:
        return None
    at_least, at_most = f"at least {bound(v.elo1)} (elo1)", f"at most {bound(v.elo0)} (elo0)"
    favoured, other = (at_least, at_most) if v.state == H1 else (at_most, at_least)
    limit = t.llr_upper if v.state == H1 else t.llr_lower
    reached = "≥" if v.state == H1 else "≤"
    return (f"accepted after {plural(t.outcomes.pairs, 'pair')}: the pairs favour an "
            f"Elo difference of {favoured} over one of {other} (LLR {signed(v.llr, 2)} "
            f"{reached} {signed(limit, 2)}, α {v.alpha:g}, β {v.beta:g}). This is the SPRT's "
            f"decision, not a measurement: the estimate is {signed(t.elo)} Elo, 95% "
            f"[{signed(t.elo_ci[0])}, {signed(t.elo_ci[1])}].")


def _summaries() -> list[Any]:
    with sessions()() as s:
        return [summarize(s, t, settings().heartbeat_s, details=False)
                for t in list_tests(s, limit=SHOWN)]


def _summary(test_id: int) -> Any:
    with sessions()() as s:
        test = s.scalar(select(VersionTest).where(VersionTest.id == test_id))
        if test is None:
            raise Missing(f"no version test #{test_id}")
        return summarize(s, test, settings().heartbeat_s)


@bp.get("/tests")
def index() -> str:
    tests = _summaries()
    return render_template("tests.html", tests=tests,
                           live=any(t.test.state in OPEN for t in tests))


@bp.get("/events/tests")
def events() -> Any:
    """The live list of version tests."""
    def render() -> dict[str, Any]:
        return {"html": {"live-tests": render_template("_tests_live.html",
                                                       tests=_summaries())}, "final": False}

    return live.stream("tests", render)


@bp.get("/tests/<test_id>")
def show(test_id: str) -> str:
    t = _summary(ident(test_id, "test id"))
    return render_template("test.html", t=t, decision=decision(t), live=t.test.state in OPEN)


@bp.get("/events/tests/<test_id>")
def show_events(test_id: str) -> Any:
    """The live numbers and matches of one version test."""
    number = ident(test_id, "test id")
    _summary(number)  # 404 before the stream starts

    def render() -> dict[str, Any]:
        t = _summary(number)
        return {"html": {"live-test": render_template("_test_live.html", t=t,
                                                      decision=decision(t))},
                "final": t.test.state not in OPEN}

    return live.stream(f"test:{number}", render)
