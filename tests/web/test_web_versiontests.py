"""The version tests' pages (/tests, /tests/<id>) on a fresh SQLite database: the numbers
shown are those of `bots.stats` for the test's counts, each side's time per move comes from the
actions' think_ms, the matches are listed, the live stream sends the test's new numbers; and
in headless Chromium the page changes in place as the test goes on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from test_web_live import next_update
from test_web_pages import add_match

from bots.stats import PairOutcomes, paired_llr, paired_score_ci, sprt_bounds
from db.base import make_session_factory
from db.models import ORIGIN_TEST, REMOTE, RUNNING, ActionLog, Bot
from db.schema import create_all
from db.versiontests import H1, VersionTest
from web import create_app
from web.filters import signed


@pytest.fixture
def sessions(tmp_path):
    factory = make_session_factory(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


@pytest.fixture
def live_app(sessions):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "TESTING": True, "LIVE_POLL_SECONDS": 0.05,
                      "KEEPALIVE_SECONDS": 0.5, "MAX_STREAMS": 4})
    yield app
    app.extensions["bummerl.hub"].close()
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def add_test(sessions, counts=(1, 3, 6), state="running") -> tuple[int, int]:
    """A test of mybot@2.0 against mybot@1.9 with `counts` and two of its matches (one running,
    with moves of both seats); its id and the bot's."""
    with sessions.begin() as s:
        bot = Bot(name="mybot", kind=REMOTE)
        s.add(bot)
        s.flush()
        o = PairOutcomes(*counts)
        test = VersionTest(candidate_bot_id=bot.id, candidate_version="2.0",
                           baseline_bot_id=bot.id, baseline_version="1.9", elo0=0, elo1=50,
                           alpha=0.05, beta=0.05, profile="soft", move_ms=1000, bank_ms=2000,
                           concurrency=1, state=state, lost_both=counts[0], split=counts[1],
                           won_both=counts[2], forfeited=0, voided=0,
                           llr=paired_llr(o, 0, 50), seed=1, started_by="bot mybot",
                           created_at=datetime.now(UTC))
        s.add(test)
        s.flush()
        test_id, bot_id = test.id, bot.id
    done = add_match(sessions, bot_id, bot_id, origin=ORIGIN_TEST, event_id=test_id,
                     pair_id=1, pair_leg=0, version0="2.0", version1="1.9", rated=False)
    live = add_match(sessions, bot_id, bot_id, state=RUNNING, origin=ORIGIN_TEST,
                     event_id=test_id, pair_id=1, pair_leg=1, version0="1.9", version1="2.0",
                     rated=False)
    with sessions.begin() as s:
        # leg 1: the candidate (2.0) is seat 1; it takes 30 ms a move, the baseline 90 ms
        for seq, (seat, ms) in enumerate([(0, 90), (1, 30), (0, 90), (1, 30)]):
            s.add(ActionLog(match_id=live, seq=seq, seat=seat, action="play TH", think_ms=ms))
        s.add(ActionLog(match_id=done, seq=0, seat=0, action="play TH", think_ms=30))
    return test_id, bot_id


def test_the_test_page_shows_its_numbers(live_app, sessions):
    test_id, _ = add_test(sessions)
    client = live_app.test_client()
    listing = client.get("/tests").get_data(as_text=True)
    assert f"/tests/{test_id}" in listing and "mybot@2.0" in listing and "mybot@1.9" in listing
    page = client.get(f"/tests/{test_id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    o = PairOutcomes(1, 3, 6)
    score, low, high = paired_score_ci(o)
    lower, upper = sprt_bounds(0.05, 0.05)
    assert f"LLR {paired_llr(o, 0, 50):+.2f}" in html
    assert f"H0 {signed(lower, 2)}" in html and f"H1 {signed(upper, 2)}" in html
    assert f"{score:.3f} [{low:.3f}, {high:.3f}]" in html
    assert ">10<" in html and "1 / 3 / 6" in html  # pairs, trinomial
    assert "30 ms per move (3 moves)" in html and "90 ms per move (2 moves)" in html
    assert html.count('href="/matches/') == 2 and 'class="badge running"' in html
    assert client.get("/tests/999").status_code == 404
    assert client.get("/tests/abc").status_code == 400


def test_the_live_stream_sends_new_numbers(live_app, sessions):
    test_id, _ = add_test(sessions)
    response = live_app.test_client().get(f"/events/tests/{test_id}", buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    chunks = iter(response.response)
    try:
        first = next_update(chunks)
        assert "1 / 3 / 6" in first["html"]["live-test"] and not first["final"]
        with sessions.begin() as s:
            test = s.get(VersionTest, test_id)
            test.won_both, test.state, test.llr = 7, H1, 3.5
        update = next_update(chunks)
        assert "1 / 3 / 7" in update["html"]["live-test"] and "LLR +3.50" in \
            update["html"]["live-test"]
        assert update["final"]  # the test ended: the page stops listening
    finally:
        response.close()


# --- in a real browser ------------------------------------------------------------------------
@pytest.mark.browser
def test_the_test_page_changes_live_in_chromium(sessions, tmp_path):
    from test_web_browser import LAPTOP, PHONE, _need_browser, serve, shot, wait_for

    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from test_web_browser import CHROMEDRIVER, CHROMIUM

    test_id, _ = add_test(sessions)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={LAPTOP[0]},{LAPTOP[1]}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        with serve(sessions.kw["bind"].url.render_as_string(hide_password=False)) as site:
            driver.get(f"{site}/tests/{test_id}")
            wait_for(lambda: "live" in driver.find_element("id", "live-badge").text, 10,
                     "the stream")
            def read(element_id: str, what: str = "textContent") -> str:
                # in one go: a live update may replace the element between a find and a read
                return str(driver.execute_script(
                    "const e = document.getElementById(arguments[0]);"
                    "return e ? String(e[arguments[1]]).trim() : '';", element_id, what))

            driver.execute_script("document.body.dataset.mark = 'same page'")
            bar = float(read("llr-bar", "value") or 0)
            with sessions.begin() as s:
                test = s.get(VersionTest, test_id)
                test.won_both, test.llr = 9, 2.5
            wait_for(lambda: read("trinomial") == "1 / 3 / 9", 10, "the new counts, in place")
            assert driver.execute_script("return document.body.dataset.mark") == "same page"
            assert float(read("llr-bar", "value") or 0) > bar
            assert "LLR +2.50" in read("llr")
            shot(driver, "version-test", LAPTOP, tmp_path)
            shot(driver, "version-test", PHONE, tmp_path)
    finally:
        driver.quit()
