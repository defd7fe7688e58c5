"""The Content-Security-Policy in Debian's Chromium (marker `browser`): a guest's pages (play,
a friend's link waiting, a table, exercises, the account; log-in and sign-up) run with no
violation in the browser's console, while a script the policy forbids is refused there."""

from __future__ import annotations

import pytest
from tablekit import people_site, wait_for
from test_people_browser import join_as_guest, start_game
from test_web_browser import browser  # noqa: F401

pytestmark = pytest.mark.browser


def violations(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser")
            if "Content Security Policy" in e["message"]]


def test_the_pages_break_no_rule_of_the_policy(browser, tmp_path, monkeypatch):  # noqa: F811
    with people_site(tmp_path, monkeypatch) as site:
        join_as_guest(browser, site, "cspy")
        browser.find_element("id", "make-invite").click()
        wait_for(lambda: browser.find_elements("id", "invite-link"), 15, "the link")
        browser.find_element("id", "invite-link").click()  # (friend.js selects it)
        assert browser.execute_script(
            "var e = document.getElementById('invite-link');"
            "return e.selectionEnd - e.selectionStart;") == len(
                browser.find_element("id", "invite-link").get_attribute("value"))
        browser.get(f"{site.web}/play")
        match_id = start_game(browser, "house-random")
        wait_for(lambda: browser.find_elements("css selector", "#hand > *"), 15, "the hand")
        for path in ("/exercises", "/account", "/login", "/signup", f"/table/{match_id}"):
            browser.get(site.web + path)
            wait_for(lambda: browser.execute_script("return document.readyState") == "complete",
                     15, path)
        assert violations(browser) == []
        # the check can fail: an inline script the policy forbids is refused and logged
        browser.execute_script("var s = document.createElement('script');"
                               "s.textContent = 'window.inlineRan = 1';"
                               "document.body.appendChild(s);")
        assert browser.execute_script("return window.inlineRan") is None
        assert wait_for(lambda: violations(browser), 5, "the refusal in the console")
