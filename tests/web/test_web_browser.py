"""The dashboard in a real browser: headless Chromium (Debian's chromium + chromium-driver)
driven by Selenium, against the dashboard served by waitress on a fresh SQLite database.

- a live match page changes in place (no reload) while two remote bots play it through the
  real gRPC service (in-process), and its DOM never holds a hidden card of the hand in play;
- a finished hand steps with the keyboard, and a step can be linked to;
- the standings table sorts by a clicked column.

Screenshots (laptop and phone widths) go to $BUMMERL_ARTIFACTS (the suite's default:
bummerl-artifacts/ in the system's temporary folder, tests/leftovers.py), else the test's tmp_path.
Without the browser these tests skip (they fail under BUMMERL_REQUIRE_SERVICES=1: .ci/run
installs chromium and chromium-driver).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from servicekit import Database, running_service
from test_web_pages import add_bots, play, real_match
from web_safety import hidden_cards, in_play_part, seq_of, shown_cards

from client import Bot, Runner
from db.base import make_session_factory
from db.ratings import Rating
from db.schema import create_all
from examples.random_bot import RandomBot
from services.core.matches import create_match

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
LAPTOP, PHONE = (1366, 900), (390, 844)
pytestmark = pytest.mark.browser


SHOTS: list[Path] = []  # the running test's tmp_path (set by `_shots_in_tmp`)


@pytest.fixture(autouse=True)
def _shots_in_tmp(tmp_path):
    """Screenshots go to the test's temporary folder, never into the checkout."""
    SHOTS[:] = [tmp_path]
    yield
    SHOTS.clear()


def artifacts(folder: Path | None = None) -> Path:
    """Where screenshots go: $BUMMERL_ARTIFACTS if set (to keep them), else `folder` or the
    running test's tmp_path."""
    chosen = os.environ.get("BUMMERL_ARTIFACTS") or folder or (SHOTS[0] if SHOTS else None)
    if chosen is None:
        raise AssertionError("no folder for screenshots: pass the test's tmp_path")
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _need_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (bash scripts/setup)")
    if not missing:
        return
    message = (f"no browser for the dashboard's browser tests: missing {', '.join(missing)} "
               "(apt-get install chromium chromium-driver)")
    if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: these tests must run)")
    pytest.skip(message)


@pytest.fixture
def browser():
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="bummerl-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                 f"--window-size={LAPTOP[0]},{LAPTOP[1]}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # (the console: CSP)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def sessions(tmp_path):
    factory = make_session_factory(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


@contextmanager
def serve(url: str) -> Iterator[str]:
    """The dashboard of database `url` served by waitress (as `bummerl web` does) in a
    thread; its base URL."""
    from web.server import shutdown, url_of, waitress_server

    server = waitress_server("127.0.0.1", 0, {"DATABASE_URL": url, "LIVE_POLL_SECONDS": 0.1,
                                              "MAX_STREAMS": 8}, threads=4)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield url_of(server).rstrip("/")
    finally:
        shutdown(server)
        thread.join(5)


@pytest.fixture
def site(sessions):
    with serve(sessions.kw["bind"].url.render_as_string(hide_password=False)) as url:
        yield url


def wait_for(condition, timeout: float, what: str):
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def shot(driver, name: str, size: tuple[int, int], folder: Path | None = None) -> Path:
    """A full-page screenshot at `size`'s width (into `artifacts(folder)`); its path."""
    driver.set_window_size(*size)
    time.sleep(0.3)
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(size[0], min(max(size[1], height), 4000))
    path = artifacts(folder) / f"{name}-{size[0]}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(*size)
    return path


class Slow(Bot):
    """A random bot that thinks a while, so the page can be watched between its moves."""

    def __init__(self, seed: int, pause: float) -> None:
        self.inner, self.pause = RandomBot(seed), pause

    def act(self, observation):  # type: ignore[no-untyped-def]
        time.sleep(self.pause)
        return self.inner.act(observation)


def test_live_match_page_changes_without_reload_and_hides_cards(browser, tmp_path):
    """Two remote bots play through the real gRPC service (in-process) while the page is
    open; the dashboard (waitress, its own process-like app) follows it."""
    database = Database(f"sqlite:///{tmp_path / 'live.sqlite3'}")
    with running_service(database) as service:
        sessions = service.sessions
        a_id, a_token = service.register("anna")
        b_id, b_token = service.register("bert")
        match_id = create_match([a_id, b_id], seed=41, sessions=sessions).id
        with serve(database.url) as site:
            browser.get(f"{site}/matches/{match_id}")
            browser.execute_script("window.__notReloaded = true;")
            wait_for(lambda: "live" in browser.find_element("id", "live-badge").text, 10,
                     "the stream")
            first = seq_of(browser.find_element("id", "live-match").get_attribute("innerHTML"))
            assert first == 0
            runners = [Runner(Slow(seed, 0.3), service.server.address, token, max_matches=1)
                       for seed, token in ((1, a_token), (2, b_token))]
            threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
            for thread in threads:
                thread.start()
            seen = {first}
            try:
                ends = time.monotonic() + 90
                while len(seen) < 10 and time.monotonic() < ends:
                    html = browser.find_element("id", "live-match").get_attribute("innerHTML")
                    seq = seq_of(html)
                    if seq not in seen:
                        seen.add(seq)
                        leaked = (shown_cards(in_play_part(html))
                                  & hidden_cards(sessions, match_id, seq))
                        assert not leaked, f"the DOM at seq {seq} shows hidden cards {leaked}"
                    time.sleep(0.05)
                assert len(seen) >= 10, f"the table changed only {len(seen) - 1} times"
                assert browser.execute_script("return window.__notReloaded === true;")
                clock = browser.find_elements("css selector", ".clock[data-deadline]")
                assert clock and "left" in clock[0].text  # counting down client-side
                assert browser.find_elements("css selector", ".felt .stock")
                shot(browser, "match-live", LAPTOP)
                shot(browser, "match-live", PHONE)
            finally:
                for runner in runners:
                    runner.stop()
                for thread in threads:
                    thread.join(10)


def test_replay_steps_with_the_keyboard(browser, site, sessions):
    from selenium.webdriver.common.keys import Keys

    match_id = real_match(sessions, seed=42)
    play(match_id, sessions)
    browser.get(f"{site}/matches/{match_id}/hands/0")

    def visible() -> str:  # the one step on screen
        shown = [step.get_attribute("id") for step in
                 browser.find_elements("css selector", ".step") if step.is_displayed()]
        assert len(shown) == 1, f"steps on screen: {shown}"
        return shown[0]

    assert visible() == "step-0"
    assert len(browser.find_elements("css selector", "#step-0 .holding .card")) == 10
    body = browser.find_element("tag name", "body")
    for _ in range(3):
        body.send_keys(Keys.ARROW_RIGHT)
    assert visible() == "step-3" and browser.current_url.endswith("#step-3")
    body.send_keys(Keys.ARROW_LEFT)
    assert visible() == "step-2"
    body.send_keys(Keys.END)
    last = visible()
    assert last != "step-2" and "hand over" in browser.find_element("id", last).text
    shot(browser, "replay-end", LAPTOP)
    body.send_keys(Keys.HOME)
    assert visible() == "step-0"
    browser.get(f"{site}/matches/{match_id}/hands/0#step-2")  # a link to one step
    assert visible() == "step-2"
    browser.find_element("css selector", "[data-go=next]").click()
    assert visible() == "step-3"
    shot(browser, "replay", LAPTOP)
    shot(browser, "replay", PHONE)


def test_standings_sort_by_a_clicked_column(browser, site, sessions):
    ids = add_bots(sessions, "carla", "anton", "berta")
    with sessions.begin() as s:
        for bot_id, mu, matches in zip(ids, (30.0, 25.0, 20.0), (5, 50, 20), strict=True):
            s.add(Rating(bot_id=bot_id, profile="soft", mu=mu, sigma=2.0, matches=matches,
                         wins=1))
    browser.get(f"{site}/standings")

    def names() -> list[str]:  # read in one go: a live update may replace the rows
        return browser.execute_script(
            "return Array.from(document.querySelectorAll('table.standings tbody tr'))"
            ".map(r => r.cells[1].querySelector('a').textContent);")

    def click(header: str) -> None:
        browser.execute_script(
            "Array.from(document.querySelectorAll('table.standings th'))"
            ".find(h => h.textContent === arguments[0]).click();", header)

    wait_for(lambda: "live" in browser.find_element("id", "live-badge").text, 10, "the stream")
    assert names() == ["carla", "anton", "berta"]  # by mu - 3 sigma
    click("bot")
    assert names() == ["anton", "berta", "carla"]
    click("bot")
    assert names() == ["carla", "berta", "anton"]
    click("matches")
    assert names() == ["anton", "berta", "carla"]  # most matches first
    with sessions.begin() as s:  # a live update keeps the chosen order
        row = s.get(Rating, (ids[0], "soft"))
        row.matches, row.updated_at = 99, datetime.now(UTC)
    wait_for(lambda: names() == ["carla", "anton", "berta"], 10, "the update, still sorted")
    shot(browser, "standings", LAPTOP)


# --- issue 22: the page stumbles ------------------------------------------------------------
CONTRAST = """
function lum(c) {
  const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(v => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const el = document.querySelector(arguments[0]), style = getComputedStyle(el);
const fg = lum(style.color), bg = lum(style.backgroundColor);
return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
"""


def close_the_stock(match_id: int, sessions) -> None:  # type: ignore[no-untyped-def]
    """Play (through the service) until a seat may close the stock, then close it."""
    import random

    from engine import Action
    from services.core.actions import submit_action
    from services.core.matches import get_match, get_observation

    rng = random.Random(3)
    for _ in range(200):
        m = get_match(match_id, sessions=sessions)
        obs, m = get_observation(match_id, m.to_act, sessions=sessions)
        if Action.from_text("close") in obs.legal_actions and obs.tricks:
            submit_action(match_id, m.to_act, Action.from_text("close"), expected_seq=m.seq,
                          sessions=sessions)
            return
        plays = [a for a in obs.legal_actions if a.kind == "play"]
        submit_action(match_id, m.to_act, rng.choice(plays or list(obs.legal_actions)),
                      expected_seq=m.seq, sessions=sessions)
    raise AssertionError("no seat could close the stock")


def test_the_closed_tag_is_readable_on_the_table(browser, site, sessions):
    """The "closed by … after N tricks" tag was near-white on cream (the felt's tag colour
    over the closed tag's background)."""
    match_id = real_match(sessions, seed=44)
    close_the_stock(match_id, sessions)
    browser.get(f"{site}/matches/{match_id}")
    # (read in one go, in the page: a live update may replace the elements)
    text = browser.execute_script("return document.querySelector('.felt .tag.closed')"
                                  ".textContent;")
    assert "closed by" in text and "after" in text
    ratio = browser.execute_script(CONTRAST, ".felt .tag.closed")
    assert ratio >= 4.5, f"contrast {ratio:.2f}:1 (WCAG AA needs 4.5:1)"
    # and the house bot to act: its clock counts its own move time down, not the match's
    clock = wait_for(lambda: browser.execute_script(
        "const c = document.querySelector('.clock[data-deadline]');"
        "return c && c.textContent.includes('left') ? c.textContent : '';"), 5, "the clock")
    assert "(house move time)" in clock and " of 120.0 s" in clock, clock
    shot(browser, "match-closed", LAPTOP)


def test_the_standings_fit_a_phone(browser, site, sessions):
    """At 390 px the standings scrolled sideways and names broke at the hyphen."""
    ids = add_bots(sessions, "house-champion", "house-random", "house-rdeep", "house-bully",
                   "a-rather-long-bot-name-v2")
    with sessions.begin() as s:
        for i, bot_id in enumerate(ids):
            s.add(Rating(bot_id=bot_id, profile="soft", mu=30.0 - i, sigma=1.5, matches=120 + i,
                         wins=60))
    browser.set_window_size(*PHONE)
    browser.get(f"{site}/standings")
    wait_for(lambda: "live" in browser.find_element("id", "live-badge").text, 10, "the stream")
    page_width = browser.execute_script("return document.documentElement.clientWidth;")
    widths = browser.execute_script(
        "const t = document.querySelector('table.standings');"
        "return [document.documentElement.scrollWidth, t.scrollWidth, t.clientWidth,"
        " t.getBoundingClientRect().right];")
    assert widths[0] <= page_width, f"the page scrolls sideways: {widths} > {page_width}"
    assert widths[1] <= widths[2] and widths[3] <= page_width, widths
    lines = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.standings td.name a'))"
        ".map(a => [a.textContent, a.getClientRects().length,"
        " Math.round(a.getBoundingClientRect().height)]);")
    heights = {height for _, _, height in lines}
    assert len(lines) == 5 and all(rects == 1 for _, rects, _ in lines), lines
    assert max(heights) < 2 * min(heights), f"a name wraps: {lines}"
    shot(browser, "standings", PHONE)


def test_the_info_box_shows_the_end_when_a_match_ends_live(browser, site, sessions):
    """The ended and detail rows appeared only after a reload."""
    match_id = real_match(sessions, seed=45)
    play(match_id, sessions, actions=4)
    browser.get(f"{site}/matches/{match_id}")
    browser.execute_script("window.__notReloaded = true;")
    wait_for(lambda: "live" in browser.find_element("id", "live-badge").text, 10, "the stream")
    facts = browser.find_element("id", "live-facts")
    assert "ended" not in facts.text and "detail" not in facts.text
    play(match_id, sessions)  # to the end
    wait_for(lambda: "ended" in browser.find_element("id", "live-facts").text, 15,
             "the ended row")
    text = browser.find_element("id", "live-facts").text
    assert "detail" in text and "won the match" in text and "seed" in text
    assert browser.execute_script("return window.__notReloaded === true;")
    assert "over" in browser.find_element("id", "live-badge").text


# --- issue 23: tournaments ------------------------------------------------------------------
def test_a_tournament_page_follows_a_pair_finishing_without_reload(browser, site, sessions):
    """A pair of the crosstable ends (its two legs, then its score, written as the service
    and the scheduler write them) while the page is open: its cells turn from playing to
    won / lost, the standings and the progress move, and the page was not reloaded."""
    from tournamentkit import add_pair, finish_pair, tournament

    from db.pairs import PLAYING

    event = tournament(sessions, ["anna", "bert", "cleo"])
    add_pair(sessions, event, 1, 1, "anna", "bert", legs=((0, 2), (1, 3)))  # anna wins both
    pair = add_pair(sessions, event, 2, 1, "cleo", "anna", state=PLAYING)
    cleo, anna = event.bots["cleo"], event.bots["anna"]
    browser.get(f"{site}/tournaments/{event.id}")
    browser.execute_script("window.__notReloaded = true;")
    wait_for(lambda: "live" in browser.find_element("id", "live-badge").text, 10, "the stream")

    def outcome(row: int, column: int) -> str | None:
        return browser.execute_script(
            "var el = document.getElementById(arguments[0]);"
            "return el ? el.dataset.outcome : null;", f"cell-{row}-{column}-{pair}")

    def progress() -> str:  # read in one go: a live update may replace the element
        return str(browser.execute_script(
            "const e = document.getElementById('progress'); return e ? e.innerText : '';"))

    assert (outcome(cleo, anna), outcome(anna, cleo)) == ("pending", "pending")
    assert "2 / 6" in progress()
    shot(browser, "tournament-live", LAPTOP)
    finish_pair(sessions, event, "cleo-anna", ((0, 1), (0, 4)))  # each wins the leg in seat 0
    wait_for(lambda: outcome(cleo, anna) == "split", 10, "the cell's update")
    assert outcome(anna, cleo) == "split"
    assert "4 / 6" in progress()
    assert browser.execute_script("return window.__notReloaded === true;")
    links = browser.find_elements("css selector", f"#cell-{cleo}-{anna}-{pair} a.leg")
    assert [a.get_attribute("href").rsplit("/", 1)[1] for a in links] == [
        str(m) for m in event.legs["cleo-anna"]]
    shot(browser, "tournament-live", PHONE)


# --- issue 29: display slips, at desktop and phone sizes --------------------------------------
DESKTOP = (1280, 800)
SIZES = (DESKTOP, PHONE)

TRUMP = """
const card = document.querySelector('.felt .card.trump');
if (!card) { return null; }
const rank = card.querySelector('.rank'), suit = card.querySelector('.suit');
const turned = [];
for (let el = rank; el; el = el.parentElement) {
  const t = getComputedStyle(el).transform;
  if (t && t !== 'none') { turned.push(el.className + ': ' + t); }
}
const box = r => { const b = r.getBoundingClientRect();
  return [b.left, b.top, b.right, b.bottom, b.width, b.height]; };
return {card: box(card), rank: box(rank), suit: box(suit), text: rank.textContent,
        font: parseFloat(getComputedStyle(rank).fontSize), turned: turned,
        title: card.title};
"""


def test_the_trump_card_lies_crosswise_with_its_rank_upright(browser, site, sessions):
    """The trump card was turned by 90° with its rank: a K read as a sign at every size."""
    from web.filters import RANK_NAMES

    match_id = real_match(sessions, seed=46)  # just dealt: the trump card lies face up
    browser.get(f"{site}/matches/{match_id}")
    for size in SIZES:
        browser.set_window_size(*size)
        trump = wait_for(lambda: browser.execute_script(TRUMP), 5, "the trump card")
        left, top, right, bottom, width, height = trump["card"]
        assert width > height, f"at {size} the trump card does not lie crosswise: {trump}"
        assert not trump["turned"], f"at {size} the rank is turned: {trump['turned']}"
        assert trump["text"] in RANK_NAMES.values() and trump["font"] >= 12, trump
        assert trump["title"].startswith(trump["text"] + " of "), trump  # the card it is
        for part in ("rank", "suit"):  # both inside the card and apart
            x0, y0, x1, y1, _, _ = trump[part]
            assert left <= x0 and x1 <= right + 0.5 and top <= y0 and y1 <= bottom + 0.5, trump
        rank, suit = trump["rank"], trump["suit"]
        assert rank[2] <= suit[0] or rank[3] <= suit[1], f"rank and suit overlap: {trump}"
        if len(trump["text"]) == 1:  # upright: a letter's box is taller than wide
            assert rank[5] > rank[4], f"the rank {trump['text']} is not upright: {trump}"
        shot(browser, "trump", size)


def body_overflow(browser) -> tuple[int, int]:
    return tuple(browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];"))


SCROLLER = """
const el = document.querySelector(arguments[0]);
const hint = el.previousElementSibling;
const shown = hint && hint.classList.contains('scroll-hint') && hint.offsetParent !== null;
return {scroll: el.scrollWidth, client: el.clientWidth, left: el.scrollLeft,
        overflow: getComputedStyle(el).overflowX, hint: shown ? hint.textContent : null,
        classes: el.className, right: el.getBoundingClientRect().right};
"""


def check_wide_table(browser, selector: str) -> None:
    """At phone width: `selector` is wider than its box, scrolls sideways, and says so (a
    line above it, its cut edge faded); scrolled to its end the right edge no longer fades;
    the page itself never scrolls sideways."""
    state = wait_for(lambda: (lambda s: s if s["hint"] else None)(
        browser.execute_script(SCROLLER, selector)), 5, f"the scroll hint of {selector}")
    assert state["scroll"] > state["client"] and state["overflow"] in ("auto", "scroll"), state
    assert "scroll sideways" in state["hint"] and "more-right" in state["classes"], state
    width, page = body_overflow(browser)
    assert width <= page and state["right"] <= page, f"the page scrolls sideways: {state}"
    browser.execute_script("const e = document.querySelector(arguments[0]);"
                           "e.scrollLeft = e.scrollWidth;", selector)
    wait_for(lambda: "more-right" not in browser.execute_script(SCROLLER, selector)["classes"],
             5, "the right edge to stop fading")
    assert "more-left" in browser.execute_script(SCROLLER, selector)["classes"]


def test_wide_tables_scroll_visibly_on_a_phone(browser, site, sessions):
    """At 390 px the hands table and the crosstable were cut off with no hint that they
    scroll; at desktop width they fit, and no hint shows."""
    from tournamentkit import add_pair, finish_pair, tournament

    from db.pairs import PLAYING

    match_id = real_match(sessions, seed=42)
    play(match_id, sessions)
    names = ["anna-the-first", "bert-bot", "cleo-v2", "dora-deep", "emil", "fritz-rdeep"]
    event = tournament(sessions, names)
    add_pair(sessions, event, 1, 1, "anna-the-first", "bert-bot", legs=((0, 2), (1, 3)))
    add_pair(sessions, event, 2, 1, "cleo-v2", "dora-deep", legs=((0, 2), (0, 4)))
    playing = add_pair(sessions, event, 2, 2, "emil", "fritz-rdeep", state=PLAYING)
    pages = ((f"/matches/{match_id}", "table.hands", "match"),
             (f"/tournaments/{event.id}", "table.crosstable", "tournament"))
    for path, selector, name in pages:
        browser.set_window_size(*DESKTOP)
        browser.get(site + path)
        if selector == "table.hands":  # fits a desktop: no hint
            time.sleep(0.3)
            state = browser.execute_script(SCROLLER, selector)
            assert state["scroll"] <= state["client"] and state["hint"] is None, state
        shot(browser, f"wide-{name}", DESKTOP)
        browser.set_window_size(*PHONE)
        check_wide_table(browser, selector)
        browser.execute_script("const e = document.querySelector(arguments[0]);"
                               "e.scrollLeft = 0; e.dispatchEvent(new Event('scroll'));",
                               selector)
        shot(browser, f"wide-{name}", PHONE)
    # a live update replaces the crosstable: the new one says it scrolls too
    browser.execute_script("window.__notReloaded = true;")
    finish_pair(sessions, event, "emil-fritz-rdeep", ((0, 1), (0, 4)))
    wait_for(lambda: browser.execute_script(
        "const e = document.querySelector('[data-pair=\"' + arguments[0] + '\"].cell');"
        "return e && e.dataset.outcome === 'split';", playing), 10, "the live update")
    check_wide_table(browser, "table.crosstable")
    assert browser.execute_script("return window.__notReloaded === true;")


def test_no_page_scrolls_sideways_on_a_phone(browser, site, sessions):
    """The page body fits 390 px on every kind of page (its wide tables scroll inside it)."""
    from test_web_display import add_test

    from db.versiontests import H1

    match_id = real_match(sessions, seed=47)
    play(match_id, sessions)
    test_id = add_test(sessions, (0, 2, 14), H1, name="walkbot")
    browser.set_window_size(*PHONE)
    for path in ("/", "/matches", f"/matches/{match_id}", f"/matches/{match_id}/hands/0",
                 "/tests", "/tournaments", "/health", "/bots/1", f"/tests/{test_id}"):
        browser.get(site + path)
        time.sleep(0.2)
        width, page = body_overflow(browser)
        assert width <= page, f"{path} scrolls sideways at 390 px: {width} > {page}"
    shot(browser, "version-test-decided", PHONE)  # (the last page: the test's)
    shot(browser, "version-test-decided", DESKTOP)
