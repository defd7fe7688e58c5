"""Signing in on a public site (issue 44), against the real service and the web app
(tests/web/signinkit.py):

- after log-in, sign-up and guest the web redirects only to a path of this site: every form
  that a browser would read as another host (a tab, newline or CR that browsers drop, a
  backslash they read as a slash, `///host`, a scheme, their %-encoded forms) goes to /play;
"""

from __future__ import annotations

import pytest
from signinkit import signin_site

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
