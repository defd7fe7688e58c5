"""Hints, reviews and exercises through the web (web/coach.py) on a whole site (tests/web/
tablekit.py): HTTP clients doing what the pages do. A hint at a casual table lists the legal
actions' values; at a rated table it is refused with the rule named; another person gets a 403;
the review asks the service and shows the stored analysis; an exercise's page holds the seat's
observation and not its answer; its clicks are checked by the service, a right one counted once;
a POST without CSRF changes nothing."""

from __future__ import annotations

import json
import re

import pytest
from exercisekit import with_exercises
from sqlalchemy import func, select
from tablekit import Refused, people_site, wait_for

from analysis.position import hint
from db.analyses import Analysis
from db.exercises import Exercise, ExerciseSolve
from services.core import analysts
from workers.analysis import analyse_match


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setattr(analysts, "position", [hint])  # what workers.hooks:install registers
    with people_site(tmp_path, monkeypatch) as s:
        yield s


def my_turn(person, match_id: int) -> dict:
    return wait_for(lambda: (lambda t: t if t["on_clock"] in (None, t["seat"]) else None)(
        person.table(match_id)), 120, "the person's turn")


def test_a_hint_at_a_casual_table_and_none_at_a_rated_one(site):
    ann, bob = site.person(), site.person()
    ann.signup("ann", "correct horse")
    bob.guest("bob")
    casual = ann.start("house-random")
    status, page, _ = ann.get(f"/table/{casual}")
    assert status == 200 and 'id="hint-button"' in page
    t = my_turn(ann, casual)
    status, body, _ = ann.get(f"/api/table/{casual}/hint")
    found = json.loads(body)
    assert status == 200, body
    assert found["seq"] == t["seq"] and found["best"] in t["legal"]
    assert [a["action"] for a in found["actions"]] == t["legal"]
    assert all((a["se"] is None) == a["exact"] for a in found["actions"])
    status, body, _ = bob.get(f"/api/table/{casual}/hint")
    assert status == 403, body
    rated = ann.start("house-random", rated=True)
    status, page, _ = ann.get(f"/table/{rated}")
    assert 'id="hint-button"' not in page and "No hints in a rated game" in page
    my_turn(ann, rated)
    status, body, _ = ann.get(f"/api/table/{rated}/hint")
    assert status == 409 and "casual games only" in json.loads(body)["error"], body


def test_the_review_of_a_finished_game(site):
    gus = site.person()
    gus.guest("gus")
    match_id = gus.start("house-random")
    t = my_turn(gus, match_id)
    status, page, _ = gus.get(f"/review/{match_id}")
    assert status == 200 and "once the match is over" in page
    for _ in range(60):  # the first hand played out and a decision of the second: two hands
        if t["on_clock"] != t["seat"] or t["hand_number"] > 1 and t["tricks"]:
            break
        gus.act(match_id, next(a for a in t["legal"] if a != "claim"), t["seq"])
        t = my_turn(gus, match_id)
    assert t["hand_number"] > 1, t
    if t["state"] == "running":  # (the Bummerl may have ended already)
        gus.post_json(f"/api/table/{match_id}/resign", {})
    status, page, _ = gus.get(f"/review/{match_id}")
    assert 'id="review-form"' in page
    status, where = gus.post_form(f"/review/{match_id}", {}, csrf=False)
    assert status == 400  # no CSRF token: refused, nothing asked
    with site.sessions() as s:
        assert s.get(Analysis, match_id) is None
    status, where = gus.post_form(f"/review/{match_id}", {})
    assert status == 200 and where.endswith(f"/review/{match_id}")
    with site.sessions() as s:
        assert s.get(Analysis, match_id).state == "requested"  # the workers' batch queue's
    status, page, _ = gus.get(f"/review/{match_id}")
    assert 'id="review-pending"' in page
    assert analyse_match(match_id, site.sessions) == "done"  # what the batch worker does
    status, page, _ = gus.get(f"/review/{match_id}")
    assert 'id="review-total"' in page and "exact loss" in page and "better" in page
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)  # one per hand
    other = site.person()
    other.guest("other")
    assert other.get(f"/review/{match_id}")[0] == 403


def test_an_exercise_is_solved_through_the_web_and_counted_once(site):
    assert with_exercises(site.sessions) >= 1
    gus = site.person()
    gus.guest("gus")
    status, page, _ = gus.get("/exercises")
    assert status == 200 and "You solved <b>0</b>" in page
    first = int(re.search(r'href="/exercises/(\d+)"', page).group(1))
    with site.sessions() as s:
        row = s.get(Exercise, first)
        answer, wrong = row.answer, next(iter(json.loads(row.losses)))
    status, page, _ = gus.get(f"/exercises/{first}")
    state = json.loads(re.search(r'id="exercise-state">(.*?)</script>', page, re.S).group(1))
    assert answer in state["legal"] and "answer" not in state and "losses" not in state
    with pytest.raises(Refused) as caught:
        gus.post_json(f"/api/exercises/{first}/solve", {"action": answer}, csrf=False)
    assert caught.value.status == 400
    miss = gus.post_json(f"/api/exercises/{first}/solve", {"action": wrong})
    assert not miss["correct"] and miss["answer"] is None and miss["loss"] > 0
    hit = gus.post_json(f"/api/exercises/{first}/solve", {"action": answer})
    assert hit["correct"] and hit["first_solve"] and hit["solved"] == 1
    again = gus.post_json(f"/api/exercises/{first}/solve", {"action": answer})
    assert again["correct"] and not again["first_solve"] and again["solved"] == 1
    with site.sessions() as s:
        assert s.scalar(select(func.count()).select_from(ExerciseSolve)) == 1
    assert "You solved <b>1</b>" in gus.get("/exercises")[1]
