"""People at the table in a real browser: Debian's headless Chromium driven by Selenium, against
a whole site (tests/web/tablekit.py: the gRPC service, a worker process for the house seats,
the web under waitress as the service's client).

- a guest plays a whole Bummerl against house-random by clicking, to the end; the DOM never
  shows a card the seat may not know; illegal cards are visibly not playable; a claim button is
  lit exactly when the claim is good;
- a reload mid-hand, and another tab, resume the table;
- a person plays a friend through the link;
- the phone layout (390×844): the hand in reach, no sideways scrolling;
- a claim button lit only when the claim is good (a position reached through the web);
- an illegal card cannot be played: its button is disabled, and a forged POST of it from the
  page is refused by the service with the rule named;
- sharp rules: a legal claim is offered, never lit ("count yourself"); a casual game resigned
  by clicking.

Screenshots (desktop 1366×900, phone 390×844) go to $BUMMERL_ARTIFACTS, else to a temporary
folder of the test run (never into the checkout).
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest
from selenium.webdriver.support.ui import Select
from tablekit import people_site, wait_for
from test_web_browser import CHROMEDRIVER, CHROMIUM, LAPTOP, PHONE, browser  # noqa: F401
from test_web_people import seat_hidden
from web_safety import shown_cards

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("BUMMERL_ARTIFACTS") or tmp_path_factory.mktemp("people-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {folder}")
    return folder


def shot(driver, folder: Path, name: str, size: tuple[int, int]) -> Path:
    driver.set_window_size(*size)
    time.sleep(0.4)
    path = folder / f"{name}-{size[0]}x{size[1]}.png"
    driver.save_screenshot(str(path))
    return path


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The site as `bummerl up` runs it: the tables' live streams from the socket tier."""
    with people_site(tmp_path, monkeypatch, sockets={}) as s:
        yield s


@pytest.fixture
def feed_site(tmp_path, monkeypatch):
    """The site as `bummerl web` alone serves it: the tables' live streams from the web's own
    feed (web.tablefeed)."""
    with people_site(tmp_path, monkeypatch) as s:
        yield s


def state_of(driver) -> dict:
    return driver.execute_script("return window.bummerlTable && window.bummerlTable.state();")


def join_as_guest(driver, site, name: str) -> None:
    driver.get(f"{site.web}/play")
    driver.find_element("id", "guest-name").send_keys(name)
    driver.find_element("css selector", "#guest-form button[type=submit]").click()
    wait_for(lambda: driver.find_elements("id", "play-form"), 15, "the play page")


def start_game(driver, opponent: str) -> int:
    driver.find_element("css selector", f'button.play-bot[data-bot="{opponent}"]').click()
    wait_for(lambda: driver.find_elements("id", "table"), 15, "the table page")
    return int(driver.find_element("id", "table").get_attribute("data-match"))


def my_turn_or_over(driver, within: float = 40) -> dict:
    def ready():
        s = state_of(driver)
        if not s:
            return None
        if s["state"] != "running":
            return s
        if s["to_act"] == s["seat"] and driver.find_elements(
                "css selector", "#hand button.playable:not([disabled]), "
                                ".pactions button:not([disabled])"):
            return s
        return None
    return wait_for(ready, within, "the person's turn")


def check_claim_button(driver, s: dict, seen: dict) -> None:
    """A claim button is offered only when a claim is legal, and lit only when good."""
    buttons = driver.find_elements("css selector", 'button[data-action="claim"]')
    assert bool(buttons) == ("claim" in s["legal"]), s["legal"]
    if buttons:
        lit = "lit" in buttons[0].get_attribute("class").split()
        assert lit == s["claim_good"] == (s["points"] >= 66), (s["points"], s["claim_good"])
        seen["lit" if lit else "unlit"] += 1


def check_cards(driver, site, s: dict) -> None:
    """The DOM shows no card the seat may not know; the unplayable cards are disabled."""
    html = driver.find_element("id", "table").get_attribute("outerHTML")
    leaked = shown_cards(html) & seat_hidden(site, s)
    assert not leaked, f"the page at seq {s['seq']} shows {leaked}"
    for button in driver.find_elements("css selector", "#hand button"):
        card = button.get_attribute("data-card")
        legal = f"play {card}" in s["legal"]
        assert button.is_enabled() == legal, (card, s["legal"])
        assert ("unplayable" in button.get_attribute("class")) != legal


def click_something(driver, s: dict, rng: random.Random) -> None:
    lit = driver.find_elements("css selector", 'button[data-action="claim"].lit')
    if lit:
        lit[0].click()
        return
    cards = driver.find_elements("css selector", "#hand button.playable:not([disabled])")
    others = [b for b in driver.find_elements("css selector", ".pactions button:not([disabled])")
              if b.get_attribute("data-action") != "claim"]
    choice = rng.choice(others) if others and rng.random() < 0.25 else rng.choice(cards or others)
    choice.click()


def play_a_bummerl(driver, site, rng: random.Random, seen: dict, artifacts=None) -> dict:
    """Click through a whole Bummerl at the table, every turn checked (cards, claim button);
    with `artifacts`, screenshots of the table in the middle of a hand. Its last state."""
    shots = 0
    for _ in range(400):
        s = my_turn_or_over(driver)
        check_cards(driver, site, s)
        if s["state"] != "running":
            break
        check_claim_button(driver, s, seen)
        if artifacts is not None and shots == 0 and s["tricks"]:
            shot(driver, artifacts, "table-mid-hand", LAPTOP)
            shot(driver, artifacts, "table-mid-hand", PHONE)
            driver.set_window_size(*LAPTOP)
            shots = 1
        before = s["seq"]
        click_something(driver, s, rng)
        wait_for(lambda b=before: (state_of(driver) or {}).get("seq", b) != b, 20,
                 "the action to be taken")
    return state_of(driver)


def test_a_guest_plays_a_whole_bummerl_by_clicking(browser, site, artifacts):  # noqa: F811
    join_as_guest(browser, site, "anna")
    match_id = start_game(browser, "house-random")
    browser.execute_script("window.__notReloaded = true;")
    # the page follows its table at the socket tier (as under `bummerl up`)
    wait_for(lambda: site.sockets_health()["streams"] == 1, 10, "the table's stream")
    rng = random.Random(7)
    seen = {"lit": 0, "unlit": 0}
    play_a_bummerl(browser, site, rng, seen, artifacts)
    s = state_of(browser)
    assert s["state"] == "finished", s["state"]
    assert browser.execute_script("return window.__notReloaded === true;")  # all live
    status = browser.find_element("id", "status").text
    assert "won the Bummerl" in status
    assert browser.find_element("css selector", "#fairness .seed").text == s["seed"]
    assert "bummerl replay" in browser.find_element("css selector", ".replay-command").text
    assert len(browser.find_elements("css selector", ".handresults li")) == len(s["hands"])
    shot(browser, artifacts, "table-over", LAPTOP)
    shot(browser, artifacts, "table-over", PHONE)
    with site.sessions() as session:
        from db.models import Match

        assert session.get(Match, match_id).state == "finished"
    # A claim offered that was not good is shown unlit. The deals are the server's, so a
    # Bummerl may end before the guest ever leads with under 66 (random closes lose hands
    # fast): then more Bummerls, until one offers such a claim.
    for _ in range(4):
        if seen["unlit"]:
            break
        browser.get(f"{site.web}/play")
        start_game(browser, "house-random")
        assert play_a_bummerl(browser, site, rng, seen)["state"] == "finished"
    assert seen["unlit"] >= 1, seen


@pytest.mark.parametrize("which", ["site", "feed_site"])
def test_a_reload_and_another_tab_resume_the_table(browser, which, request):  # noqa: F811
    site = request.getfixturevalue(which)
    join_as_guest(browser, site, "rita")
    match_id = start_game(browser, "house-random")
    rng = random.Random(3)
    # the keyboard: a playable card's number key plays it
    s = my_turn_or_over(browser)
    card = browser.find_elements("css selector", "#hand button.playable:not([disabled])")[0]
    key, played = card.get_attribute("data-key"), card.get_attribute("data-card")
    browser.find_element("tag name", "body").send_keys(key)
    wait_for(lambda: state_of(browser)["seq"] != s["seq"], 20, "the key's action")
    assert played not in state_of(browser)["hand"]
    for _ in range(3):
        s = my_turn_or_over(browser)
        before = s["seq"]
        click_something(browser, s, rng)
        wait_for(lambda b=before: state_of(browser)["seq"] != b, 20, "the action")
    s = my_turn_or_over(browser)
    browser.refresh()
    again = wait_for(lambda: state_of(browser), 15, "the table after a reload")
    assert (again["seq"], again["hand"], again["tricks"]) == (s["seq"], s["hand"], s["tricks"])
    shown = [b.get_attribute("data-card") for b in
             browser.find_elements("css selector", "#hand button")]
    assert shown == s["hand"]
    browser.switch_to.new_window("tab")
    browser.get(f"{site.web}/table/{match_id}")
    other = wait_for(lambda: state_of(browser), 15, "the table in another tab")
    assert other["seq"] == s["seq"] and other["hand"] == s["hand"]
    # an action in this tab shows in the first one (live)
    click_something(browser, other, rng)
    wait_for(lambda: state_of(browser)["seq"] != s["seq"], 20, "the action")
    done = state_of(browser)["seq"]
    browser.switch_to.window(browser.window_handles[0])
    wait_for(lambda: state_of(browser)["seq"] >= done, 20, "the first tab to follow")


def test_a_person_plays_a_friend_through_the_link(browser, site):  # noqa: F811
    join_as_guest(browser, site, "fritz")
    browser.find_element("id", "make-invite").click()
    link = wait_for(lambda: browser.find_elements("id", "invite-link"), 15, "the link")[0]
    url = link.get_attribute("value")
    assert "/play/friend/" in url
    friend = site.person()
    friend.guest("franz")
    status, body, _ = friend.get(url.replace(site.web, ""))
    assert status == 200 and "Take the seat" in body
    status, where = friend.post_form(url.replace(site.web, ""), {})
    assert status == 200 and "/table/" in where, (status, where)
    match_id = int(where.rsplit("/", 1)[1])
    # the inviter's page moves to the table by itself
    wait_for(lambda: f"/table/{match_id}" in browser.current_url, 15, "the inviter's table")
    s = wait_for(lambda: state_of(browser), 15, "the table")
    assert sorted(n.split("~")[0] for n in s["names"]) == ["@franz", "@fritz"]
    # a third person who opens the link finds it taken
    late = site.person()
    late.guest("lena")
    status, body, _ = late.get(url.replace(site.web, ""))
    assert "taken already" in body
    # both play: the browser clicks, the friend acts as its page would
    rng = random.Random(5)
    friend.get(f"/table/{match_id}")
    for _ in range(6):
        theirs = friend.table(match_id)
        if theirs["to_act"] == theirs["seat"]:
            friend.act(match_id, rng.choice(theirs["legal"]), theirs["seq"])
            wait_for(lambda t=theirs: state_of(browser)["seq"] > t["seq"], 15,
                     "the friend's move on the browser's table")
        else:
            s = my_turn_or_over(browser)
            click_something(browser, s, rng)
            wait_for(lambda b=s["seq"]: friend.table(match_id)["seq"] > b, 15, "the move")
    status = browser.find_element("id", "status").text
    assert "on the clock" in status


def test_the_phone_layout_keeps_the_hand_in_reach(browser, site, artifacts):  # noqa: F811
    browser.set_window_size(*PHONE)
    join_as_guest(browser, site, "phil")
    # the play page: the opponents and their buttons fit the phone's width
    width = browser.execute_script("return window.innerWidth;")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    button = browser.find_element("css selector", 'button.play-bot[data-bot="house-random"]')
    r = browser.execute_script("return arguments[0].getBoundingClientRect().toJSON();", button)
    assert r["left"] >= 0 and r["right"] <= width, r
    shot(browser, artifacts, "play-phone", PHONE)
    start_game(browser, "house-random")
    my_turn_or_over(browser)
    viewport = browser.execute_script("return [window.innerWidth, window.innerHeight];")
    assert browser.execute_script(
        "return document.documentElement.scrollWidth") <= viewport[0]  # no sideways scroll
    cards = browser.find_elements("css selector", "#hand button")
    assert len(cards) == 5
    for card in cards:
        r = browser.execute_script("return arguments[0].getBoundingClientRect().toJSON();", card)
        assert r["left"] >= 0 and r["right"] <= viewport[0], r
        assert r["bottom"] <= viewport[1] and r["top"] >= viewport[1] * 0.55, r  # lower half
        assert r["width"] >= 44 and r["height"] >= 44, r  # a thumb's target
    # the state above the hand is readable without scrolling: the trump card and the score
    trump = browser.find_element("css selector", ".trumpcard")
    assert trump.is_displayed() and trump.text.replace("\n", "")[:-1] in (
        "A", "10", "K", "Q", "J")
    assert "game points still needed" in browser.find_element("id", "scoreline").text
    shot(browser, artifacts, "table-phone", PHONE)


def test_a_claim_is_lit_only_when_good(browser, site, artifacts):  # noqa: F811
    """Play through the web (as the page does) until a claim is legal and good, and until one
    is legal and not good; the browser shows each: lit, then not."""
    person = site.person()
    person.guest("clara")
    rng = random.Random(11)
    found: dict[bool, tuple[int, int]] = {}
    for _ in range(10):  # (the deals are random: a good claim comes up in most matches)
        match_id = person.start("house-random")
        for _ in range(300):
            s = wait_for(lambda m=match_id: (lambda t: t if t["state"] != "running"
                                             or t["to_act"] == t["seat"] else None)(
                person.table(m)), 30, "the person's turn")
            if s["state"] != "running":
                break
            if "claim" in s["legal"] and s["claim_good"] not in found:
                found[s["claim_good"]] = (match_id, s["seq"])  # the table waits there
                break
            plays = [a for a in s["legal"] if a.startswith("play")]
            strong = sorted(plays, key=lambda a: "AT".find(a[5]) if a[5] in "AT" else 9)
            person.act(match_id, strong[0] if rng.random() < 0.7 else rng.choice(s["legal"]),
                       s["seq"])
        if len(found) == 2:
            break
    assert len(found) == 2, f"no {'good' if True not in found else 'bad'} claim came up"
    # the browser takes the person's session (its cookie) and looks at each position
    browser.get(site.web + "/play")
    for cookie in person.jar:
        browser.add_cookie({"name": cookie.name, "value": cookie.value, "path": "/"})
    for good, (match_id, seq) in sorted(found.items()):
        browser.get(f"{site.web}/table/{match_id}")
        s = wait_for(lambda: state_of(browser), 15, "the table")
        assert s["seq"] == seq and "claim" in s["legal"]  # it waited for the person
        button = browser.find_element("css selector", 'button[data-action="claim"]')
        assert ("lit" in button.get_attribute("class").split()) == good
        assert s["points"] >= 66 if good else s["points"] < 66
        if good:
            shot(browser, artifacts, "table-claim-lit", LAPTOP)


def test_an_illegal_card_cannot_be_played_nor_forged(browser, site):  # noqa: F811
    join_as_guest(browser, site, "ivan")
    match_id = start_game(browser, "house-random")
    s = my_turn_or_over(browser)
    # not this seat's turn or not legal: disabled buttons; click one anyway: nothing is sent
    illegal = [b for b in browser.find_elements("css selector", "#hand button")
               if f"play {b.get_attribute('data-card')}" not in s["legal"]]
    for b in illegal:
        assert not b.is_enabled()
    mine = set(s["hand"])
    not_mine = next(r + u for r in "ATKQJ" for u in "CDHS"
                    if r + u not in mine and r + u not in (s["trump_card"], s["lead_card"]))
    answer = browser.execute_async_script(
        """const done = arguments[arguments.length - 1];
        const root = document.getElementById('table');
        fetch(root.dataset.actUrl, {method: 'POST', credentials: 'same-origin',
              headers: {'Content-Type': 'application/json', 'X-CSRFToken': root.dataset.csrf},
              body: JSON.stringify({action: 'play ' + arguments[0], seq: arguments[1]})})
          .then(r => r.json().then(d => done({status: r.status, body: d})));""",
        not_mine, s["seq"])
    assert answer["status"] in (400, 409), answer
    rule = answer["body"].get("rule") or answer["body"]["error"]
    assert rule.startswith("R") or " R" in answer["body"]["error"], answer
    # and without the CSRF token, even a legal action is refused
    answer = browser.execute_async_script(
        """const done = arguments[arguments.length - 1];
        const root = document.getElementById('table');
        fetch(root.dataset.actUrl, {method: 'POST', credentials: 'same-origin',
              headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({action: arguments[0], seq: arguments[1]})})
          .then(r => r.json().then(d => done({status: r.status, body: d})));""",
        s["legal"][0], s["seq"])
    assert answer["status"] == 400 and "CSRF" in answer["body"]["error"], answer
    browser.refresh()
    assert wait_for(lambda: state_of(browser), 15, "the table")["seq"] == s["seq"]
    assert json.dumps(match_id)


def test_a_person_plays_a_rated_match_against_a_remote_kit_bot(browser, site, artifacts):  # noqa: F811
    """A remote bot run with the kit's `people="rated"` (`bummerl bot run --people rated`) is
    offered on the play page; a signed-up person plays it rated, by clicking, to the end; the
    person's page, the leaderboard and the bot's page then show the game."""
    import threading

    from client import Runner
    from examples.random_bot import RandomBot
    from services.ops import bots

    bot, token = bots.register_bot("kitbot", sessions=site.sessions)
    runner = Runner(RandomBot(9), site.service, token, max_matches=1, people="rated")
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        browser.get(f"{site.web}/signup")
        browser.find_element("id", "signup-name").send_keys("rosa")
        browser.find_element("id", "signup-password").send_keys("a-long-password")
        browser.find_element("id", "signup-password2").send_keys("a-long-password")
        browser.find_element("css selector", "#signup-form button[type=submit]").click()
        wait_for(lambda: browser.find_elements("id", "play-form"), 15, "the play page")

        def offered():
            browser.get(f"{site.web}/play")
            return browser.find_elements("css selector", 'button.play-bot[data-bot="kitbot"]')
        button = wait_for(offered, 30, "the connected kit bot on the play page")[0]
        assert button.get_attribute("data-accepts") == "rated"
        shot(browser, artifacts, "play-page", PHONE)
        shot(browser, artifacts, "play-page", LAPTOP)
        button = browser.find_element("css selector", 'button.play-bot[data-bot="kitbot"]')
        browser.find_element("id", "rated").click()
        button.click()
        wait_for(lambda: browser.find_elements("id", "table"), 15, "the table page")
        rng = random.Random(2)
        for _ in range(400):
            # the kit bot answers at once: its answer shows at once (pushed), never after the
            # page's quiet reload (the reply to the person's own action, if it arrives after
            # the pushed answer, must not draw the older table over it)
            s = my_turn_or_over(browser, within=8)
            if s["state"] != "running":
                break
            assert s["rated"] and s["opponent_connected"]
            before = s["seq"]
            click_something(browser, s, rng)
            wait_for(lambda b=before: (state_of(browser) or {}).get("seq", b) != b, 20,
                     "the action to be taken")
        s = state_of(browser)
        assert s["state"] == "finished" and s["rated"] and not s["can_resign"]
        shot(browser, artifacts, "table-rated-over", LAPTOP)
        from db.people import Person

        with site.sessions() as session:
            person_id = session.query(Person.id).filter(Person.name == "rosa").scalar()

        def rated():
            browser.get(f"{site.web}/people/{person_id}")
            return "not rated yet" not in browser.find_element("css selector", "table.info").text
        wait_for(rated, 30, "the person's rating")
        assert "1 finished" in browser.find_element("css selector", "table.info").text
        browser.get(f"{site.web}/people")
        assert "rosa" in browser.find_element("css selector", "table.people").text
        browser.get(f"{site.web}/bots/{bot.id}")
        assert "1 finished game with people" in browser.find_element("id", "against-people").text
    finally:
        runner.stop()
        thread.join(10)


def test_a_remote_bot_that_drops_is_on_its_clock_and_the_page_says_so(browser, site):  # noqa: F811
    """The kit bot (`bummerl bot run ... --people casual`, a process of its own) is killed
    mid-match: the table tells the person that it is not connected, that it is on its clock,
    and when it forfeits if it does not come back."""
    import signal
    import subprocess
    import sys

    from services.ops import bots

    _, token = bots.register_bot("dropper", sessions=site.sessions)
    root = Path(__file__).resolve().parents[2]
    kit = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "bot", "run", "examples.random_bot:RandomBot",
         "--server", site.service, "--token", token, "--people", "casual"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        join_as_guest(browser, site, "dora")

        def offered():
            browser.get(f"{site.web}/play")
            return browser.find_elements("css selector", 'button.play-bot[data-bot="dropper"]')
        wait_for(offered, 60, "the kit bot on the play page")[0].click()
        wait_for(lambda: browser.find_elements("id", "table"), 15, "the table page")
        s = my_turn_or_over(browser)
        kit.send_signal(signal.SIGKILL)
        kit.wait(10)
        rng = random.Random(1)
        for _ in range(10):  # act until the dead bot is to act
            s = state_of(browser)
            if s["to_act"] != s["seat"]:
                break
            before = s["seq"]
            click_something(browser, s, rng)
            wait_for(lambda b=before: state_of(browser)["seq"] != b, 20, "the action")

        seen = {}

        def told():
            s = state_of(browser)
            text = browser.find_element("id", "status").text
            seen.update(to_act=s["to_act"], seat=s["seat"], connected=s["opponent_connected"],
                        text=text, state=s["state"])
            return s["to_act"] != s["seat"] and not s["opponent_connected"] and text
        try:
            text = wait_for(told, 40, "the page to say the bot is gone")
        except AssertionError:
            raise AssertionError(f"the page shows {seen}") from None
        assert "not connected" in text and "forfeits" in text and "on the clock" in text, text
    finally:
        if kit.poll() is None:
            kit.kill()
            kit.wait(10)


def test_sharp_rules_say_count_yourself_and_a_casual_game_is_resigned_by_clicking(
        browser, site, artifacts):  # noqa: F811
    """Sharp rules: a legal claim is offered but never lit (the person counts, docs/people.md);
    then the person resigns the casual game by clicking, confirms, and the page shows who won
    and why; the service's record says resigned."""
    join_as_guest(browser, site, "sven")
    Select(browser.find_element("id", "profile")).select_by_value("sharp")
    match_id = start_game(browser, "house-random")
    rng = random.Random(8)
    s = my_turn_or_over(browser)
    assert s["profile"] == "sharp" and not s["claim_hint"]
    for _ in range(40):  # play (never claiming) until a claim is legal
        if s["state"] != "running" or "claim" in s["legal"]:
            break
        before = s["seq"]
        click_something(browser, s, rng)
        wait_for(lambda b=before: state_of(browser)["seq"] != b, 20, "the action")
        s = my_turn_or_over(browser)
    assert s["state"] == "running" and "claim" in s["legal"], s
    claim = browser.find_element("css selector", 'button[data-action="claim"]')
    assert "count yourself" in claim.text and "lit" not in claim.get_attribute("class").split()
    resign = browser.find_element("css selector", "#resign-row button")
    assert resign.text == "Resign this casual game"
    resign.click()
    alert = browser.switch_to.alert
    assert "Resign?" in alert.text and "house-random wins the match" in alert.text
    alert.accept()
    over = wait_for(lambda: (lambda t: t if t["state"] != "running" else None)(state_of(browser)),
                    20, "the resigned game to end")
    assert over["result"]["reason"] == "resigned" and over["result"]["winner"] != over["seat"]
    status = browser.find_element("id", "status").text
    assert status.startswith("house-random won the Bummerl") and "resigned" in status, status
    assert not browser.find_elements("css selector", "#resign-row button")
    shot(browser, artifacts, "table-resigned", LAPTOP)
    with site.sessions() as db:
        from db.models import Match

        assert db.get(Match, match_id).end_reason == "resigned"
