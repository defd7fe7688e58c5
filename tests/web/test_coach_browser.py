"""Hints and exercises in a real browser (Debian's headless Chromium, Selenium) against a whole
site (tests/web/tablekit.py): a guest asks for a hint at a casual table by clicking its button
(the values listed, the best action outlined, no card the seat may not know shown), then solves
an exercise by clicking: a wrong card is told so, the right one is counted, once."""

from __future__ import annotations

import json

import pytest
from exercisekit import with_exercises
from tablekit import people_site, wait_for
from test_people_browser import join_as_guest, my_turn_or_over, start_game, state_of
from test_web_browser import CHROMEDRIVER, CHROMIUM, LAPTOP, PHONE, browser  # noqa: F401
from test_web_people import seat_hidden
from web_safety import shown_cards

from analysis.position import hint
from db.exercises import Exercise
from services.core import analysts

pytestmark = pytest.mark.browser


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setattr(analysts, "position", [hint])  # what workers.hooks:install registers
    with people_site(tmp_path, monkeypatch) as s:
        yield s


def click_action(driver, prefix: str, action: str) -> None:
    where = (f'{prefix}hand button[data-card="{action[5:]}"]' if action.startswith("play ")
             else f'{prefix}actions button[data-action="{action}"]')
    driver.find_element("css selector", where).click()


def test_a_hint_by_clicking_and_an_exercise_solved_by_clicking(browser, site):  # noqa: F811
    assert with_exercises(site.sessions) >= 1
    join_as_guest(browser, site, "hanna")
    start_game(browser, "house-random")
    s = my_turn_or_over(browser)
    assert s["state"] == "running"
    browser.find_element("id", "hint-button").click()
    items = wait_for(lambda: browser.find_elements("css selector", "#hint-box li"), 60,
                     "the hint")
    listed = [li.get_attribute("data-action") for li in items]
    assert sorted(listed) == sorted(s["legal"])
    best = browser.find_element("css selector", "#hint-box li.best").get_attribute("data-action")
    assert best in s["legal"]
    if best.startswith("play ") or best in ("exchange", "close", "claim"):
        assert browser.find_elements("css selector", ".hinted"), "the best action is outlined"
    coach = browser.find_element("id", "coach").get_attribute("outerHTML")
    assert not shown_cards(coach) & seat_hidden(site, state_of(browser))

    browser.get(f"{site.web}/exercises")
    assert "You solved 0" in browser.find_element("id", "solved-count").text
    link = browser.find_element("css selector", "table.exercises a")
    exercise_id = int(link.text)
    with site.sessions() as db:
        row = db.get(Exercise, exercise_id)
        answer, losses = row.answer, json.loads(row.losses)
    link.click()
    wait_for(lambda: browser.find_elements("css selector", "#ex-hand button"), 15,
             "the exercise")
    wrong = next((a for a in losses if a.startswith("play ")), next(iter(losses)))
    click_action(browser, "#ex-", wrong)
    wait_for(lambda: "Not this one" in browser.find_element("id", "ex-verdict").text, 15,
             "the verdict on a wrong answer")
    click_action(browser, "#ex-", answer)
    wait_for(lambda: "Right!" in browser.find_element("id", "ex-verdict").text, 15,
             "the verdict on the right answer")
    assert "You solved 1" in browser.find_element("id", "ex-verdict").text
    assert browser.find_element("id", "ex-values").is_displayed()
    click_action(browser, "#ex-", answer)  # again: still one
    wait_for(lambda: "You solved 1" in browser.find_element("id", "ex-verdict").text, 15,
             "the second verdict")
    browser.set_window_size(*PHONE)
    browser.get(f"{site.web}/exercises")
    assert "You solved 1" in browser.find_element("id", "solved-count").text
    browser.set_window_size(*LAPTOP)
