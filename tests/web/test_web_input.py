"""The web's input as a public site takes it (issue 44): every id and integer of a path, query
string or JSON body checked to its range (a 404 for an id that cannot exist, a 400 naming the
field, never a 500), ASCII digits only, a body cap (413) and a JSON depth limit (400); analyses
asked only by a person who played in the match, a few at a time; the running-games limit counts
games from invites, invites are limited and expire. Against the real engine service (gRPC, in
this process; no house moves: the tables stay as they are) and the web app."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from peoplekit import PEOPLE_CONFIG, WEB_TOKEN, house_bot
from servicekit import fresh_database, running_service
from sqlalchemy import func, select, update

from db.analyses import Analysis
from db.models import ActionLog, Match
from db.people import INVITE_TTL, PersonInvite
from services.core import hooks
from services.ops import people
from web import create_app

HUGE = "99999999999999999999999"
INT64_PAST = str(2**63)


@pytest.fixture
def service(tmp_path, request, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])  # house seats never move: tables stay put
    monkeypatch.setattr(hooks, "on_match_end", [])
    monkeypatch.setattr(hooks, "on_analysis_requested", [])
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database, PEOPLE_CONFIG) as svc:
        house_bot(svc.sessions)
        yield svc


@pytest.fixture
def app(service):
    app = create_app({"DATABASE_URL": service.database.url, "TESTING": True,
                      "SERVICE_ADDRESS": service.server.address, "WEB_TOKEN": WEB_TOKEN,
                      "ANALYSE_LIMIT": "2 per minute", "GUEST_LIMIT": "100 per minute"})
    yield app
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def csrf(client) -> dict[str, str]:
    page = client.get("/login").get_data(as_text=True)
    return {"X-CSRFToken": re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)}


def guest(app, name: str):
    """A browser of a new guest `name`, with its CSRF header as `client.csrf`."""
    client = app.test_client()
    client.csrf = csrf(client)
    answer = client.post("/guest", data={"name": name}, headers=client.csrf)
    assert answer.status_code == 302, answer.get_data(as_text=True)
    client.csrf = csrf(client)  # a new session: a new token
    return client


def start(client) -> int:
    answer = client.post("/play", data={"opponent": "house-random"}, headers=client.csrf)
    assert answer.status_code == 302, answer.get_data(as_text=True)
    return int(answer.headers["Location"].rsplit("/", 1)[1])


def actions_logged(service) -> int:
    with service.sessions() as s:
        return s.scalar(select(func.count()).select_from(ActionLog)) or 0


def test_ids_past_int64_are_404_and_never_500(app, service):
    ann = guest(app, "ann")
    match_id = start(ann)
    before = ann.get(f"/api/table/{match_id}").get_json()
    gets = [f"/api/table/{HUGE}", f"/table/{HUGE}", f"/api/table/{HUGE}/hint",
            f"/review/{HUGE}", f"/events/table/{HUGE}", f"/people/{HUGE}",
            f"/api/people/{HUGE}", f"/people/{HUGE}/games", f"/exercises/{HUGE}",
            f"/matches/{HUGE}", f"/api/matches/{HUGE}", f"/matches/1/hands/{HUGE}",
            f"/api/matches/{match_id}/hands/{HUGE}", f"/matches/{HUGE}/hands/0",
            f"/api/matches/{HUGE}/analysis", f"/matches/{match_id}/seats/{HUGE}",
            f"/api/matches/{HUGE}/seats/0", f"/bots/{HUGE}", f"/api/bots/{HUGE}",
            f"/tournaments/{HUGE}", f"/simulations/{HUGE}", f"/tests/{HUGE}",
            f"/api/table/{INT64_PAST}", "/api/table/0", "/api/table/-3", "/people/0"]
    for path in gets:
        answer = ann.get(path)
        assert answer.status_code == 404, (path, answer.status_code, answer.get_data()[:300])
    posts = [f"/api/table/{HUGE}/act", f"/api/table/{HUGE}/resign", f"/review/{HUGE}",
             f"/matches/{HUGE}/analyse", f"/api/exercises/{HUGE}/solve"]
    for path in posts:
        answer = ann.post(path, json={"action": "play TH", "seq": 0}, headers=ann.csrf)
        assert answer.status_code == 404, (path, answer.status_code, answer.get_data()[:300])
    said = ann.get(f"/api/table/{HUGE}").get_json()["error"]
    assert "match id" in said and "9223372036854775807" in said
    assert ann.get(f"/api/table/{match_id}").get_json()["seq"] == before["seq"]
    assert actions_logged(service) == 0


def test_full_width_digits_are_no_id(app, service):
    ann = guest(app, "ann")
    match_id = start(ann)
    wide = "".join(chr(0xFF10 + int(d)) for d in str(match_id))  # "１２" for 12
    for path in (f"/api/table/{wide}", f"/table/{wide}", f"/people/{wide}",
                 f"/matches/{wide}"):
        answer = ann.get(path)
        assert answer.status_code == 400, (path, answer.status_code)
        assert "must be a whole number" in answer.get_data(as_text=True)
    answer = ann.post(f"/api/table/{wide}/resign", json={}, headers=ann.csrf)
    assert answer.status_code == 400
    assert ann.get(f"/api/table/{match_id}").get_json()["state"] == "running"


@pytest.mark.parametrize("query", [f"bot={HUGE}", f"before={HUGE}", f"page={HUGE}",
                                   "page=%EF%BC%92", f"bot=-{HUGE}"])
def test_query_integers_are_checked_to_their_range(app, query):
    client = app.test_client()
    answer = client.get(f"/api/matches?{query}")
    assert answer.status_code == 400, answer.get_data(as_text=True)
    name = query.split("=")[0]
    said = answer.get_json()["error"]
    assert {"bot": "bot id", "before": "match id", "page": "page number"}[name] in said


def test_an_act_with_a_seq_past_int64_or_a_bad_body_is_a_400(app, service):
    ann = guest(app, "ann")
    match_id = start(ann)
    state = ann.get(f"/api/table/{match_id}").get_json()
    act = f"/api/table/{match_id}/act"
    move = state["legal"][0] if state["legal"] else "play TH"
    for body, says in [({"action": move, "seq": 2**63}, '"seq" must be from 0'),
                       ({"action": move, "seq": -1}, '"seq" must be from 0'),
                       ({"action": move, "seq": 1.5}, '"seq" must be a whole number'),
                       ({"action": move, "seq": True}, '"seq" must be a whole number'),
                       ([1, 2], "must be a JSON object")]:
        answer = ann.post(act, json=body, headers=ann.csrf)
        assert answer.status_code == 400, (body, answer.get_data(as_text=True))
        assert says in answer.get_json()["error"]
    answer = ann.post(act, data="{not json", content_type="application/json",
                      headers=ann.csrf)
    assert answer.status_code == 400 and "JSON object" in answer.get_json()["error"]
    assert actions_logged(service) == 0
    assert ann.get(f"/api/table/{match_id}").get_json()["seq"] == state["seq"]


def test_deep_json_is_a_400_and_a_big_body_a_413(app, service):
    ann = guest(app, "ann")
    match_id = start(ann)
    act = f"/api/table/{match_id}/act"
    deep = '{"action": "play TH", "seq": 0, "x": ' + "[" * 40 + "]" * 40 + "}"
    answer = ann.post(act, data=deep, content_type="application/json", headers=ann.csrf)
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert "deeper than 32" in answer.get_json()["error"]
    # nested 5,000 deep, within the size cap: no recursion error either
    answer = ann.post(act, data="[" * 5000, content_type="application/json", headers=ann.csrf)
    assert answer.status_code == 400 and "deeper than 32" in answer.get_json()["error"]
    # brackets inside strings are text, not nesting
    text = '{"action": "' + "[" * 15 + '", "seq": 0}'
    answer = ann.post(act, data=text, content_type="application/json", headers=ann.csrf)
    assert answer.status_code == 400 and "action" in answer.get_json()["error"]
    for body in ("[" * 100_000, '{"action": "play TH", "seq": 0, "pad": "' + "x" * 12_000_000
                 + '"}'):
        answer = ann.post(act, data=body, content_type="application/json", headers=ann.csrf)
        assert answer.status_code == 413, answer.status_code
        assert "at most 65536 bytes" in answer.get_json()["error"]
    big_form = ann.post("/play", data={"opponent": "house-random", "pad": "x" * 100_000},
                        headers=ann.csrf)
    assert big_form.status_code == 413
    assert "at most 65536 bytes" in big_form.get_data(as_text=True)
    assert actions_logged(service) == 0
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 1  # no game started


def finished_game(app, service, client) -> int:
    match_id = start(client)
    answer = client.post(f"/api/table/{match_id}/resign", json={}, headers=client.csrf)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return match_id


def test_only_a_seat_of_the_match_orders_its_analysis_a_few_at_a_time(app, service):
    ann, bob = guest(app, "ann"), guest(app, "bob")
    match_id = finished_game(app, service, ann)
    other = finished_game(app, service, ann)
    json_ = {"Accept": "application/json"}
    anonymous = app.test_client()
    answer = anonymous.post(f"/matches/{match_id}/analyse", headers={**csrf(anonymous),
                                                                     **json_})
    assert answer.status_code == 401, answer.get_data(as_text=True)
    assert "played in this match" in answer.get_data(as_text=True)
    answer = bob.post(f"/matches/{match_id}/analyse", headers={**bob.csrf, **json_})
    assert answer.status_code == 403, answer.get_data(as_text=True)
    with service.sessions() as s:
        assert s.scalars(select(Analysis)).all() == []
    answer = ann.post(f"/matches/{match_id}/analyse", headers=ann.csrf,
                      data={"next": "/\t/example.org/phish"})  # back to this site only
    assert answer.status_code == 303, answer.get_data(as_text=True)
    assert answer.headers["Location"] == f"/matches/{match_id}"
    assert ann.get(f"/api/matches/{match_id}/analysis").get_json()["state"] == "requested"
    answer = ann.post(f"/review/{other}", headers=ann.csrf)  # the review counts too
    assert answer.status_code == 302, answer.get_data(as_text=True)
    answer = ann.post(f"/matches/{other}/analyse", headers={**ann.csrf, **json_})
    assert answer.status_code == 429 and 1 <= int(answer.headers["Retry-After"]) <= 61
    assert "too many analyses" in answer.get_data(as_text=True)
    with service.sessions() as s:
        assert sorted(r.match_id for r in s.scalars(select(Analysis))) == [match_id, other]


def test_invites_count_in_the_running_games_limit(app, service):
    ann, bob = guest(app, "ann"), guest(app, "bob")
    for _ in range(people.MAX_OPEN_TABLES):
        start(ann)
    answer = ann.post("/play", data={"opponent": "house-random"}, headers=ann.csrf)
    assert answer.status_code == 409 and "5 games running" in answer.get_data(as_text=True)
    answer = ann.post("/play/friend", data={}, headers=ann.csrf)  # no invite at the limit
    assert answer.status_code == 409 and "5 games running" in answer.get_data(as_text=True)
    # bob invites; ann, at the limit, cannot take his seat
    code = bob.post("/play/friend", data={}, headers=bob.csrf).headers["Location"].rsplit(
        "/", 1)[1]
    answer = ann.post(f"/play/friend/{code}", data={}, headers=ann.csrf)
    assert answer.status_code == 409 and "5 games running" in answer.get_data(as_text=True)
    # bob at the limit through invites taken: carl's invite to him is refused
    for i in range(people.MAX_OPEN_TABLES):
        host = guest(app, f"host{i}")
        link = host.post("/play/friend", data={}, headers=host.csrf).headers["Location"]
        answer = bob.post(link, data={}, headers=bob.csrf)
        assert answer.status_code == 302, answer.get_data(as_text=True)
    carl = guest(app, "carl")
    link = carl.post("/play/friend", data={}, headers=carl.csrf).headers["Location"]
    answer = bob.post(link, data={}, headers=bob.csrf)
    assert answer.status_code == 409 and "5 games running" in answer.get_data(as_text=True)
    # and bob's own open invite cannot seat him a sixth time
    dave = guest(app, "dave")
    answer = dave.post(f"/play/friend/{code}", data={}, headers=dave.csrf)
    assert answer.status_code == 409 and "5 games running" in answer.get_data(as_text=True)
    with service.sessions() as s:
        running = s.scalar(select(func.count()).select_from(Match).where(
            Match.state == "running", (Match.bot0_id == _bot(s, "bob"))
            | (Match.bot1_id == _bot(s, "bob"))))
    assert running == people.MAX_OPEN_TABLES


def _bot(s, name: str) -> int:
    from db.people import Person

    return s.scalar(select(Person.bot_id).where(Person.name == name))


def test_open_invites_are_limited_and_expire(app, service):
    ann, bob = guest(app, "ann"), guest(app, "bob")
    links = []
    for _ in range(people.MAX_OPEN_INVITES):
        answer = ann.post("/play/friend", data={}, headers=ann.csrf)
        assert answer.status_code == 302
        links.append(answer.headers["Location"])
    answer = ann.post("/play/friend", data={}, headers=ann.csrf)
    assert answer.status_code == 409 and "3 open invites" in answer.get_data(as_text=True)
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(PersonInvite)) == 3
    # an invite past its time: refused, its page says so, and it no longer counts
    code = links[0].rsplit("/", 1)[1]
    with service.sessions() as s, s.begin():
        made = s.get(PersonInvite, code).created_at
        s.execute(update(PersonInvite).where(PersonInvite.code == code).values(
            created_at=made - INVITE_TTL - timedelta(seconds=1)))
    page = bob.get(links[0]).get_data(as_text=True)
    assert "This invite expired" in page and "Take the seat" not in page
    answer = bob.post(links[0], data={}, headers=bob.csrf)
    assert answer.status_code == 409 and "this invite expired" in answer.get_data(as_text=True)
    assert bob.get(links[0].replace("/play/friend/", "/api/invites/")).get_json()["expired"]
    answer = ann.post("/play/friend", data={}, headers=ann.csrf)
    assert answer.status_code == 302  # room for one again
    answer = bob.post(links[1], data={}, headers=bob.csrf)  # a fresh one still seats
    assert answer.status_code == 302 and "/table/" in answer.headers["Location"]
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 1
