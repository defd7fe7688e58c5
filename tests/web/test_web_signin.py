"""Signing in on a public site (issue 44), against the real service and the web app
(tests/web/signinkit.py):

- after log-in, sign-up and guest the web redirects only to a path of this site: every form
  that a browser would read as another host (a tab, newline or CR that browsers drop, a
  backslash they read as a slash, `///host`, a scheme, their %-encoded forms) goes to /play;
- sessions are the service's and revocable: a cookie copied before log-out is refused on a
  page, the table's API and an act; log out everywhere and a password change end every other
  session; the new session after a password change works;
- failed log-ins back off per name and address and per address, never locking a name: 20 wrong
  passwords from one address leave the owner free to log in from another at once, and the
  first address is told when to try again (429, Retry-After);
- a trusted proxy's X-Forwarded-Proto/-For count only when `TRUSTED_PROXIES` says so;
- every 429 carries Retry-After (the web's own limits and the service's RESOURCE_EXHAUSTED);
- every answer carries a Content-Security-Policy, and the pages hold no inline script, event
  handler or style that it would block.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from signinkit import signin_site

from db.people import PersonSession

PASSWORD = "correct horse"


@pytest.fixture
def site(tmp_path, monkeypatch):
    with signin_site(tmp_path, monkeypatch, {"LOGIN_LIMIT": "1000 per minute",
                                             "GUEST_LIMIT": "1000 per minute"}) as s:
        yield s


# each `next` as the form posts it (decoded): none of them is a path of this site
FOREIGN = [
    "/\t/example.org/phish",
    "/\n/example.org/phish",
    "/\r/example.org/phish",
    "\t//example.org/phish",
    " /example.org",
    "/\\example.org/phish",
    "\\\\example.org/phish",
    "//example.org/phish",
    "///example.org/phish",
    "https://example.org/phish",
    "https:example.org",
    "javascript:alert(1)",
    "example.org/phish",
    "/\x00/example.org",
    "/\u3000/example.org",
]


def test_only_paths_of_this_site_are_redirected_to(site):
    anna = site.browser()
    anna.signup("anna", PASSWORD)
    for target in FOREIGN:
        answer = anna.login("anna", PASSWORD, next=target)
        assert (answer.status_code, answer.headers["Location"]) == (302, "/play"), target
        answer = site.browser().guest("gus", next=target)
        assert (answer.status_code, answer.headers["Location"]) == (302, "/play"), target
    bob = site.browser()
    bob.get("/signup")
    answer = bob.post("/signup", {"name": "bob", "password": PASSWORD, "password2": PASSWORD,
                                  "next": "/\t/example.org/phish"})
    assert (answer.status_code, answer.headers["Location"]) == (302, "/play")
    # the query string's %-encoded forms, as the attack sends them
    for query in ("%2F%09%2Fexample.org%2Fphish", "/%09/example.org/phish",
                  "/%0A/example.org", "/%0D/example.org", "/%5Cexample.org", "%2F%2Fexample.org",
                  "/%5C/example.org", "https%3A%2F%2Fexample.org"):
        anna.get(f"/login?next={query}")
        answer = anna.client.post(f"/login?next={query}", data={
            "name": "anna", "password": PASSWORD, "csrf_token": anna.csrf})
        assert (answer.status_code, answer.headers["Location"]) == (302, "/play"), query
    # a path of this site is kept, a %-encoded slash in it stays a path
    for target in ("/table/12", "/people/3?x=1#top", "/%2F%2Fexample.org"):
        answer = anna.login("anna", PASSWORD, next=target)
        assert (answer.status_code, answer.headers["Location"]) == (302, target), target


def start_game(browser) -> int:
    browser.get("/play")
    answer = browser.post("/play", {"opponent": "house-random", "time": "rapid",
                                    "profile": "soft"})
    assert answer.status_code == 302, answer.text
    match_id = int(answer.headers["Location"].rsplit("/", 1)[1])
    assert browser.get(f"/table/{match_id}").status_code == 200  # (its CSRF token)
    return match_id


def copy_of(site, browser):
    """Another browser sending a copy of `browser`'s cookie (and CSRF token) every time."""
    thief = site.browser(address="10.6.6.6")
    thief.pinned = browser.cookie()
    thief.csrf = browser.csrf
    return thief


def acts(browser, match_id: int) -> int:
    """The status of an act (any act: 401 means the cookie is not taken as a person's)."""
    state = browser.get(f"/api/table/{match_id}").get_json() or {}
    action = (state.get("legal") or ["play AS"])[0]
    return browser.post_json(f"/api/table/{match_id}/act",
                             {"action": action, "seq": state.get("seq", 0)}).status_code


def test_a_cookie_copied_before_log_out_is_refused_everywhere(site):
    anna = site.browser()
    anna.signup("anna", PASSWORD)
    match_id = start_game(anna)
    thief = copy_of(site, anna)
    assert thief.get(f"/api/table/{match_id}").status_code == 200
    assert acts(thief, match_id) != 401
    token = anna.client.get_cookie("bummerl_session")
    with site.sessions() as s:  # the database keeps the session's hash only
        rows = s.query(PersonSession).all()
    assert len(rows) == 1 and all(len(r.token_sha256) == 64 for r in rows)
    assert anna.post("/logout").status_code == 302
    assert token is not None
    assert thief.get(f"/api/table/{match_id}").status_code == 401
    assert thief.get(f"/table/{match_id}").status_code == 401
    assert acts(thief, match_id) == 401
    assert 'id="guest-form"' in thief.get("/play").text  # a visitor's page
    with site.sessions() as s:
        assert s.query(PersonSession).one().revoked_at is not None
    # signing in again makes a new session that works
    assert anna.login("anna", PASSWORD).status_code == 302
    assert anna.get(f"/api/table/{match_id}").status_code == 200


def test_log_out_everywhere_and_a_password_change_end_every_other_session(site):
    home, work, phone = site.browser(), site.browser(), site.browser()
    home.signup("bea", PASSWORD)
    match_id = start_game(home)
    for browser in (work, phone):
        assert browser.login("bea", PASSWORD).status_code == 302
        assert browser.get(f"/api/table/{match_id}").status_code == 200
    copied = copy_of(site, home)
    phone.get("/account")
    assert phone.post("/logout/everywhere").status_code == 302
    for browser in (home, work, phone, copied):
        assert browser.get(f"/api/table/{match_id}").status_code == 401
    for browser in (home, work):
        assert browser.login("bea", PASSWORD).status_code == 302
    assert home.get("/account").status_code == 200  # (a CSRF token of the new session)
    copied = copy_of(site, home)
    answer = home.post("/account", {"old_password": "not it at all", "new_password": "new horse",
                                    "new_password2": "new horse"})
    assert answer.status_code == 401 and work.get(f"/api/table/{match_id}").status_code == 200
    work.get("/account")
    work.pinned = work.cookie()  # (it keeps sending its cookie, whatever the web answers)
    answer = home.post("/account", {"old_password": PASSWORD, "new_password": "battery staple",
                                    "new_password2": "battery staple"})
    assert answer.status_code == 200 and 'id="password-changed"' in answer.text
    for browser in (work, copied):
        assert browser.get(f"/api/table/{match_id}").status_code == 401
        assert acts(browser, match_id) == 401
    work.pinned = ""
    assert home.get(f"/api/table/{match_id}").status_code == 200  # the new session works
    assert acts(home, match_id) != 401
    assert work.login("bea", PASSWORD).status_code == 401
    assert work.login("bea", "battery staple").status_code == 302
    assert site.browser().get("/account").headers["Location"].startswith("/login")


def test_wrong_passwords_from_one_address_lock_no_one_out(tmp_path, monkeypatch):
    with signin_site(tmp_path, monkeypatch) as site:
        site.browser(address="10.0.0.9").signup("carl", PASSWORD)
        attacker = site.browser(address="10.0.0.1")
        statuses = []
        for _ in range(20):
            answer = attacker.login("carl", "wrong password")
            statuses.append(answer.status_code)
            if answer.status_code == 429:
                assert int(answer.headers["Retry-After"]) >= 1
        assert statuses[:4] == [401] * 4 and statuses[4] == 429, statuses
        assert set(statuses) == {401, 429}
        owner = site.browser(address="10.0.0.2")
        started = time.monotonic()
        answer = owner.login("carl", PASSWORD)
        assert answer.status_code == 302 and time.monotonic() - started < 5
        # the attacker's address waits, even with the right password, and is told how long
        answer = attacker.login("carl", PASSWORD)
        assert answer.status_code == 429 and int(answer.headers["Retry-After"]) >= 1
        assert "try again in" in answer.text


@pytest.mark.parametrize("where", ["memory", pytest.param("redis", marks=pytest.mark.redis)])
def test_the_waits_grow_and_a_success_clears_them(tmp_path, monkeypatch, request, where):
    """In this process's memory, and in Redis (RATELIMIT_STORAGE_URI: shared by web replicas)."""
    config = {}
    if where == "redis":
        config["RATELIMIT_STORAGE_URI"] = request.getfixturevalue("redis_url")
    with signin_site(tmp_path, monkeypatch, config) as site:
        site.browser(address="10.0.1.9").signup("dora", PASSWORD)
        me = site.browser(address="10.0.1.1")
        assert [me.login("dora", "wrong password").status_code for _ in range(4)] == [401] * 4
        answer = me.login("dora", "wrong password")  # the 4th failure asked for 1 s
        assert (answer.status_code, answer.headers["Retry-After"]) == (429, "1")
        time.sleep(1.1)
        assert me.login("dora", "wrong password").status_code == 401
        answer = me.login("dora", PASSWORD)  # the 5th failure asked for 2 s
        assert (answer.status_code, answer.headers["Retry-After"]) == (429, "2")
        time.sleep(2.1)
        assert me.login("dora", PASSWORD).status_code == 302
        assert me.login("dora", "wrong password").status_code == 401  # a fresh count


def test_failures_from_one_address_over_many_names_back_off_too(tmp_path, monkeypatch):
    with signin_site(tmp_path, monkeypatch, {"LOGIN_LIMIT": "1000 per minute",
                                             "LOGIN_FREE_ADDRESS_FAILURES": 5}) as site:
        sprayer = site.browser(address="10.0.2.1")
        assert [sprayer.login(f"name{i}", "wrong password").status_code
                for i in range(6)] == [401] * 6
        answer = sprayer.login("name99", "wrong password")
        assert answer.status_code == 429 and answer.headers["Retry-After"] == "1"
        assert site.browser(address="10.0.2.2").login("name99", "x").status_code == 401


def test_the_proxy_headers_count_only_behind_a_trusted_proxy(tmp_path, monkeypatch):
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "bummerl.example",
                 "Referer": "https://bummerl.example/play"}  # (CSRF checks it under TLS)
    with signin_site(tmp_path, monkeypatch, {"TRUSTED_PROXIES": 1}) as site:
        guest = site.browser(address="10.1.0.1", **forwarded)
        answer = guest.guest("gus")
        assert "Secure" in answer.headers["Set-Cookie"], answer.headers["Set-Cookie"]
        site.browser().signup("erin", PASSWORD)
        # the address the limits count is X-Forwarded-For's: one client waits, another not
        one = site.browser(address="10.1.0.1", **{"X-Forwarded-For": "198.51.100.1"})
        assert [one.login("erin", "wrong password").status_code for _ in range(5)] == \
            [401] * 4 + [429]
        other = site.browser(address="10.1.0.1", **{"X-Forwarded-For": "198.51.100.2"})
        assert other.login("erin", PASSWORD).status_code == 302
    monkeypatch.delenv("BUMMERL_WEB_TRUSTED_PROXIES", raising=False)
    with signin_site(tmp_path / "plain", monkeypatch) as site:
        guest = site.browser(address="10.1.0.1", **forwarded)
        answer = guest.guest("gus")
        assert "Secure" not in answer.headers["Set-Cookie"]
        site.browser().signup("erin", PASSWORD)
        statuses = []
        for i in range(6):  # a new X-Forwarded-For each time does not dodge the backoff
            spoofer = site.browser(address="10.1.0.1",
                                   **{"X-Forwarded-For": f"198.51.100.{i + 10}"})
            statuses.append(spoofer.login("erin", "wrong password").status_code)
        assert statuses[:4] == [401] * 4 and 429 in statuses[4:], statuses


def test_the_trusted_proxies_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BUMMERL_WEB_TRUSTED_PROXIES", "1")
    with signin_site(tmp_path, monkeypatch) as site:
        answer = site.browser(**{"X-Forwarded-Proto": "https",
                                 "Referer": "https://localhost/play"}).guest("gus")
        assert "Secure" in answer.headers["Set-Cookie"]


def test_every_429_carries_retry_after(tmp_path, monkeypatch):
    from services.core import analysts

    with signin_site(tmp_path, monkeypatch, {"GUEST_LIMIT": "2 per minute"},
                     house_turns=True) as site:
        visitor = site.browser(address="10.2.0.1")
        assert [visitor.guest(f"g{i}").status_code for i in range(2)] == [302, 302]
        answer = visitor.guest("g3")
        assert answer.status_code == 429 and int(answer.headers["Retry-After"]) >= 1
        # the service's RESOURCE_EXHAUSTED (every hint slot busy) is a 429 with its wait
        person = site.browser(address="10.2.0.2")
        person.signup("fay", PASSWORD)
        match_id = start_game(person)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the house bot's lead, if it has it
            state = person.get(f"/api/table/{match_id}").get_json()
            if state["to_act"] == state["seat"]:
                break
            time.sleep(0.05)
        monkeypatch.setattr(analysts, "position", [lambda obs: {"values": []}])
        monkeypatch.setattr(analysts, "_slots", threading.BoundedSemaphore(1))
        analysts._slots.acquire()  # a hint being worked out: the only slot is taken
        answer = person.get(f"/api/table/{match_id}/hint")
        assert answer.status_code == 429, answer.text
        assert answer.headers["Retry-After"] == "2"
        assert answer.get_json()["code"] == "RESOURCE_EXHAUSTED"


def test_every_answer_carries_a_content_security_policy(site):
    visitor = site.browser()
    visitor.signup("gil", PASSWORD)
    for path in ("/play", "/login", "/account", "/api/standings", "/healthz", "/nowhere",
                 "/api/table/1"):
        answer = visitor.get(path)
        policy = answer.headers.get("Content-Security-Policy", "")
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert "'unsafe-inline'" not in policy
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["Referrer-Policy"] == "same-origin"


WEB = Path(__file__).resolve().parents[2] / "web"
TEMPLATES = WEB / "templates"


def test_no_template_holds_what_the_policy_blocks():
    """No inline script (a JSON data block is no script), event handler or style attribute or
    element, nor a javascript: URL, in any template."""
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        scripts = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", text)
        assert not scripts, (template.name, scripts)
        assert not re.search(r"\son[a-z]+\s*=", text), template.name
        assert not re.search(r"\sstyle\s*=|<style", text), template.name
        assert "javascript:" not in text, template.name
    for source in [*WEB.glob("*.py"), *WEB.glob("static/*.js")]:  # markup made in code
        text = source.read_text()
        assert not re.search(r"""<style|\sstyle=["']|\son[a-z]+=["']""", text), source.name


def test_a_session_is_read_once_a_few_seconds_and_one_ended_elsewhere_ends_within_them(
        tmp_path, monkeypatch):
    """A table's many requests read the session's row once per SESSION_CHECK_S (the 500-table
    load run queued on those reads), and a session that another web process ended (its row
    revoked: this one did not drop its answer) is refused once those seconds are past."""
    import web.accounts

    reads = []
    real = web.accounts.live_session

    def counted(s, token):  # type: ignore[no-untyped-def]
        reads.append(token)
        return real(s, token)

    monkeypatch.setattr(web.accounts, "live_session", counted)
    with signin_site(tmp_path, monkeypatch, {"SESSION_CHECK_S": 0.5}) as site:
        cara = site.browser()
        cara.signup("cara", PASSWORD)
        match_id = start_game(cara)
        reads.clear()
        for _ in range(5):
            assert cara.get(f"/api/table/{match_id}").status_code == 200
        assert len(reads) <= 1, reads
        with site.sessions.begin() as s:  # ended by another process of the site
            s.query(PersonSession).update({"revoked_at": datetime.now(UTC)})
        time.sleep(0.6)
        assert cara.get(f"/api/table/{match_id}").status_code == 401
