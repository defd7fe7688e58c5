"""A match page in a real browser (Debian's headless Chromium, Selenium) following a person's
game from the socket tier's spectators' stream (web.sockets.spectate), on a whole site
(tablekit.people_site): the page changes without a reload, never shows a card in hand, and
ends "over"; when the tier refuses the stream the page follows the web's own instead."""

from __future__ import annotations

import random
import re

import pytest
from tablekit import Person, people_site, wait_for
from test_web_browser import CHROMEDRIVER, CHROMIUM, browser  # noqa: F401
from test_web_sockets import play
from test_web_spectators import hidden_after

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def live_html(driver) -> str:  # type: ignore[no-untyped-def]
    """The page's live part now, read in one go (a live update replaces its elements)."""
    found: str = driver.execute_script(
        "return document.getElementById('live-match').innerHTML;")
    return found


def dom_seq(driver) -> int:  # type: ignore[no-untyped-def]
    return seq_of(live_html(driver))


def seq_of(html: str) -> int:
    found = re.search(r'class="scoreline" data-seq="(\d+)"', html)
    assert found, "the page's live part has no scoreline"
    return int(found.group(1))


def test_a_match_page_follows_a_game_from_the_socket_tier(browser, tmp_path,  # noqa: F811
                                                          monkeypatch):
    with people_site(tmp_path, monkeypatch, min_think_ms=0, sockets={}) as site:
        ann = Person(site.web)
        ann.guest("ann")
        match_id = ann.start("house-random")
        browser.get(f"{site.web}/matches/{match_id}")
        browser.execute_script("window.__notReloaded = true;")
        wait_for(lambda: site.sockets_health()["spectators"] == 1, 10, "the page's stream")
        assert "live" in browser.find_element("id", "live-badge").text
        rng = random.Random(5)
        for _ in range(12):
            table = play(ann, match_id, rng, 1)
            if table["state"] != "running":
                break
            wait_for(lambda t=table: dom_seq(browser) >= t["seq"], 10, "the change on the page")
            html = live_html(browser)
            seq = seq_of(html)
            leaked = (set(re.findall(r'data-card="(..)"', html))
                      & hidden_after(site.sessions, match_id, seq))
            assert not leaked, f"the page at seq {seq} shows hidden cards {leaked}"
        table = play(ann, match_id, rng, 300)
        assert table["state"] == "finished"
        wait_for(lambda: "over" in browser.find_element("id", "live-badge").text, 20,
                 "the page to say the match is over")
        assert dom_seq(browser) == table["seq"]
        assert browser.execute_script("return window.__notReloaded === true;")


def test_a_page_the_tier_refuses_follows_the_web_s_own_stream(browser, tmp_path,  # noqa: F811
                                                               monkeypatch):
    with people_site(tmp_path, monkeypatch, min_think_ms=0,
                     sockets={"max_matches": 0}) as site:
        bo = Person(site.web)
        bo.guest("bo")
        match_id = bo.start("house-random")
        browser.get(f"{site.web}/matches/{match_id}")
        browser.execute_script("window.__notReloaded = true;")
        wait_for(lambda: browser.find_element("id", "live-badge").text == "● live", 10,
                 "the web's stream")
        assert site.sockets_health()["spectators"] == 0
        table = play(bo, match_id, random.Random(6), 3)
        wait_for(lambda: dom_seq(browser) >= table["seq"], 10, "the change on the page")
        assert browser.execute_script("return window.__notReloaded === true;")
