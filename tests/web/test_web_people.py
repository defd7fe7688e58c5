"""People at the table through the web, as HTTP clients doing what the page does, against a whole
site (tests/web/tablekit.py: the real gRPC service, a real worker process for the house seats,
the web under waitress as the service's client):

- a guest plays a whole Bummerl against house-random, and no table JSON ever shows a card its
  seat may not know; the seed shown at the end hashes to the commitment shown from the start;
- CSRF: a POST without the token is refused and changes nothing;
- a second session cannot act for the first (the service refuses: not its seat);
- a forged illegal card is refused by the service with the rule named, and changes nothing;
- the session cookie is HttpOnly and SameSite, holds no web token; login attempts are
  rate-limited; a name is escaped when shown back;
- a guest cannot start a rated game; the person's page, leaderboard and download.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from tablekit import HOUSE_TOKEN, Refused, people_site, wait_for
from web_safety import shown_cards

import engine
from db.models import ActionLog, Bot, Hand, Match
from workers.moves import house_request_id


@pytest.fixture
def site(tmp_path, monkeypatch):
    with people_site(tmp_path, monkeypatch) as s:
        yield s


def seat_hidden(site, state) -> set[str]:
    """The cards the person's seat may not know at the table's seq (R10): the opponent's hand
    and the face-down stock of the hand in play, from the deal and the log (the engine), minus
    the trump card (known to both seats, remembered after a close, R10.1) and the cards the
    opponent was shown to hold (R10.2)."""
    with site.sessions() as s:
        m = s.get(Match, state["match_id"])
        row = (s.query(Hand).filter(Hand.match_id == m.id, Hand.first_seq <= state["seq"])
               .order_by(Hand.first_seq.desc()).first())
        actions = [(a.seat, a.action) for a in s.query(ActionLog).filter(
            ActionLog.match_id == m.id, ActionLog.seq >= row.first_seq,
            ActionLog.seq < state["seq"]).order_by(ActionLog.seq)]
        seed, profile = m.seed, m.profile
    hand = engine.Hand(engine.deck_for(seed, row.number), row.dealer, profile)
    for seat, text in actions:
        hand.apply(seat, engine.Action.from_text(text))
    if hand.is_over:
        return set()
    seat = state["seat"]
    obs = engine.observe(hand, seat)
    hidden = {str(c) for c in hand.holding(1 - seat)} | {str(c) for c in hand.stock_cards()}
    hidden -= {str(obs.trump_card)} | {str(c) for c in obs.known_opponent_cards()}
    assert not hidden & {str(c) for c in obs.hand}
    return hidden


def my_turn(person, match_id):
    def ready():
        state = person.table(match_id)
        return state if state["state"] != "running" or state["to_act"] == state["seat"] \
            else None
    return wait_for(ready, 30, "the house bot's answer")


def test_a_guest_plays_a_whole_bummerl_and_sees_only_its_seat(site):
    anna = site.person()
    anna.guest("anna")
    match_id = anna.start("house-random")
    first = anna.table(match_id)
    assert first["names"][first["seat"]].startswith("@anna")
    assert first["commitment"] and first["seed"] is None and not first["rated"]
    rng = random.Random(4)
    actions = 0
    while True:
        state = my_turn(anna, match_id)
        leaked = shown_cards(json.dumps(state)) & seat_hidden(site, state)
        assert not leaked, f"the table at seq {state['seq']} shows {leaked}"
        if state["state"] != "running":
            break
        assert state["legal"], state
        after = anna.act(match_id, rng.choice(state["legal"]), state["seq"])
        assert after["seq"] > state["seq"]
        actions += 1
        assert actions < 400
    assert state["result"]["winner"] in (0, 1)
    assert min(state["game_points_needed"]) <= 0  # R9.1: at 0 or below
    assert state["hands"] and all(h["why"] for h in state["hands"])
    assert hashlib.sha256(state["seed"].encode()).hexdigest() == state["commitment"]
    with site.sessions() as s:
        assert str(s.get(Match, match_id).seed) == state["seed"]
        from db.people import Person

        person_id = s.query(Person.id).filter(Person.name == "anna").scalar()
    # the person's page offers the game as a match record, as /api/export does
    status, body, headers = anna.get(f"/people/{person_id}/games")
    assert status == 200 and headers["X-Bummerl-Total"] == "1"
    record = json.loads(body.splitlines()[0])
    assert record["match_id"] == match_id and str(record["seed"]) == state["seed"]


def test_a_person_squatting_the_house_bots_next_request_id_blocks_nothing(site):
    """Issue 44, through the web's act endpoint: a person sends its lead with the request id the
    house bot (a real worker process) will submit its answer with (as if it knew the house
    token): its card lands, the house's answer lands, nobody forfeits."""
    anna = site.person()
    anna.guest("anna")
    match_id = anna.start("house-random")
    rng = random.Random(2)
    for _ in range(40):  # until the person leads: the house answers at the next seq
        state = my_turn(anna, match_id)
        assert state["state"] == "running", state["result"]
        plays = [a for a in state["legal"] if a.startswith("play ")]
        if state["lead_card"] is None and plays:
            break
        anna.act(match_id, rng.choice([a for a in state["legal"] if a != "claim"]),
                 state["seq"])
    else:
        raise AssertionError("the person never led a trick")
    house = 1 - state["seat"]
    squat = house_request_id(match_id, house, state["seq"] + 1, HOUSE_TOKEN)
    after = anna.post_json(f"/api/table/{match_id}/act", {
        "action": rng.choice(plays), "seq": state["seq"], "request_id": squat})
    assert after["seq"] == state["seq"] + 1  # the person's card landed
    answered = my_turn(anna, match_id)  # the house bot's answer landed
    assert answered["state"] == "running" and answered["seq"] >= state["seq"] + 2, answered
    with site.sessions() as s:
        log = {(a.seq, a.seat): a.request_id for a in s.query(ActionLog).filter(
            ActionLog.match_id == match_id)}
    assert log[(state["seq"], state["seat"])] == squat
    assert log[(state["seq"] + 1, house)] == squat  # the house's own id, the same text


def test_a_post_without_csrf_is_refused_and_changes_nothing(site):
    anna = site.person()
    anna.guest("anna")
    match_id = anna.start("house-random")
    state = my_turn(anna, match_id)
    with pytest.raises(Refused) as refused:
        anna.post_json(f"/api/table/{match_id}/act",
                       {"action": state["legal"][0], "seq": state["seq"]}, csrf=False)
    assert refused.value.status == 400 and "CSRF" in refused.value.body["error"]
    status, body = anna.post_form("/play", {"opponent": "house-random"}, csrf=False)
    assert status == 400 and "CSRF" in body
    assert anna.table(match_id)["seq"] == state["seq"]


def test_a_second_session_cannot_act_for_the_first(site):
    anna, mallory = site.person(), site.person()
    anna.guest("anna")
    mallory.guest("mallory")
    match_id = anna.start("house-random")
    state = my_turn(anna, match_id)
    mallory.get("/play")  # mallory's own CSRF token
    with pytest.raises(Refused) as refused:
        mallory.post_json(f"/api/table/{match_id}/act",
                          {"action": state["legal"][0], "seq": state["seq"]})
    assert refused.value.status == 403, refused.value.body
    with pytest.raises(Refused) as looked:
        mallory.table(match_id)
    assert looked.value.status == 403
    assert anna.table(match_id)["seq"] == state["seq"]


def test_a_forged_illegal_card_is_refused_with_the_rule_named(site):
    anna = site.person()
    anna.guest("anna")
    match_id = anna.start("house-random")
    state = my_turn(anna, match_id)
    mine = set(state["hand"])
    not_mine = next(c for c in (r + s for r in "ATKQJ" for s in "CDHS")
                    if c not in mine and c != state["trump_card"] and c != state["lead_card"])
    with pytest.raises(Refused) as refused:
        anna.act(match_id, f"play {not_mine}", state["seq"])
    body = refused.value.body
    assert refused.value.status in (400, 409), body
    assert "R" in (body.get("rule") or "") or "R3" in body["error"] or "R1" in body["error"], body
    assert anna.table(match_id)["seq"] == state["seq"]


def test_cookies_limits_and_escaping(site):
    anna = site.person()
    anna.guest("anna")
    cookie = next(c for c in anna.jar if c.name == "bummerl_session")
    assert cookie.has_nonstandard_attr("HttpOnly")
    assert (cookie.get_nonstandard_attr("SameSite") or "").lower() == "lax"
    assert not cookie.secure  # plain HTTP here; Secure under TLS
    import base64
    import zlib

    payload = cookie.value.split(".")[0 if not cookie.value.startswith(".") else 1]
    padded = payload + "=" * (-len(payload) % 4)
    raw = base64.urlsafe_b64decode(padded)
    data = zlib.decompress(raw) if cookie.value.startswith(".") else raw
    assert b"person_id" in data and b"web-secret" not in data
    # a name is escaped when shown back
    status, body, _ = anna.get("/login")
    status, body = anna.post_form("/login", {"name": "<b>x</b>", "password": "nope"})
    assert status == 401 and "<b>x</b>" not in body and "&lt;b&gt;x&lt;/b&gt;" in body
    # login attempts are rate-limited per address
    statuses = [anna.post_form("/login", {"name": "nobody", "password": "wrong-pass"})[0]
                for _ in range(12)]
    assert 429 in statuses, statuses


def test_a_guest_cannot_play_rated_and_a_person_has_a_page(site):
    guest = site.person()
    guest.guest("gus")
    guest.get("/play")
    status, body = guest.post_form("/play", {"opponent": "house-random", "rated": "1"})
    assert status in (400, 403, 409) and "rated" in body.lower(), (status, body[:300])
    bea = site.person()
    bea.signup("bea", "a-long-password")
    match_id = bea.start("house-bully", rated=True)
    assert bea.table(match_id)["rated"]
    other = bea.start("house-random")  # several tables at once, each its own
    assert not bea.table(other)["rated"] and bea.table(match_id)["rated"]
    status, body, _ = bea.get("/play")
    assert f"/table/{match_id}" in body and f"/table/{other}" in body  # the open tables
    status, body, _ = bea.get("/people")
    assert status == 200
    with site.sessions() as s:
        from db.people import Person

        person_id = s.query(Person.id).filter(Person.name == "bea").scalar()
    status, body, _ = bea.get(f"/people/{person_id}")
    assert status == 200 and "bea" in body and f"#{match_id}" in body
    status, body, headers = bea.get(f"/people/{person_id}/games")
    assert status == 200 and headers["X-Bummerl-Total"] == "0"  # nothing finished yet


def test_play_lists_the_strongest_first_by_one_rating_and_says_which(site):
    """/play orders its opponents by one measure, their ladder rating (every house bot has
    one), and shows it: a rating against people (another scale, few games) is not mixed in,
    so house-random rated high by the people it beat stays below house-champion."""
    import re

    from db.models import HOUSE
    from db.people import PeopleRating
    from db.ratings import Rating
    from services.ops import bots

    ids = {name: bots.register_bot(name, kind=HOUSE, house_strategy=strategy,
                                   sessions=site.sessions)[0].id
           for name, strategy in (("house-champion", "champion"), ("house-level-5", "level-5"))}
    with site.sessions() as s:
        ids |= {b.name: b.id for b in s.query(Bot).filter(
            Bot.name.in_(["house-random", "house-bully"]))}
    with site.sessions.begin() as s:
        for name, mu in (("house-champion", 40.0), ("house-bully", 28.0), ("house-random", 18.0)):
            s.add(Rating(bot_id=ids[name], profile="soft", mu=mu, sigma=2.0, matches=50))
        s.add(PeopleRating(bot_id=ids["house-random"], mu=45.0, sigma=1.0, games=12, wins=12))
    anna = site.person()
    anna.guest("anna")
    status, body, _ = anna.get("/play")
    assert status == 200
    order = re.findall(r'class="primary play-bot" data-bot="([^"]+)"', body)
    assert order == ["house-champion", "house-bully", "house-random", "house-level-5"], order
    rows = dict(re.findall(r'>([\w-]+)</a></td>\s*<td>[^<]*</td>\s*<td class="num ladder">'
                           r'(<span class="hint">unrated|[^<]*)', body))
    assert rows == {"house-champion": "34.0", "house-bully": "22.0", "house-random": "12.0",
                    "house-level-5": '<span class="hint">unrated'}, rows
    assert "by their <b>ladder rating</b>" in body
