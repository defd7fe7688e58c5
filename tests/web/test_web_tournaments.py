"""The dashboard's tournament pages (issue 23): the list, a tournament's crosstable, standings
with tie-breaks, rounds with byes and forfeits, progress with an ETA, and the JSON twins, on
a fresh database per test (SQLite and PostgreSQL) with the rows written through the models."""

from __future__ import annotations

import re

import pytest
from tournamentkit import add_bye, add_pair, tournament

from db.base import make_session_factory
from db.events import T_FINISHED, Tournament
from db.pairs import PLAYING, DuplicatePair
from db.schema import create_all
from events.scoring import FORFEIT_BOTH
from web import create_app

DETAIL = "cleo was absent past its grace period (60 s)"


@pytest.fixture(params=["sqlite", "postgres"])
def sessions(request, tmp_path):
    if request.param == "postgres":
        _url, factory = request.getfixturevalue("postgres_sessions")
        yield factory
        return
    factory = make_session_factory(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


@pytest.fixture
def client(sessions):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "TESTING": True})
    yield app.test_client()
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def four_bot_round_robin(sessions):
    """Round 1 played (a 2-0 and a split), round 2: a forfeit and a pair playing, round 3:
    one pair waiting."""
    event = tournament(sessions, ["anna", "bert", "cleo", "dora"])
    add_pair(sessions, event, 1, 1, "anna", "dora", legs=((0, 3), (1, 2)))  # anna wins both
    add_pair(sessions, event, 1, 2, "bert", "cleo", legs=((0, 4), (0, 1)))  # each wins one
    add_pair(sessions, event, 2, 1, "anna", "cleo", forfeit="b", detail=DETAIL)
    add_pair(sessions, event, 2, 2, "dora", "bert", state=PLAYING)
    add_pair(sessions, event, 3, 1, "anna", "bert")
    return event


def expected_cell(p: DuplicatePair, bot: int) -> tuple[str, int | None]:
    """What the crosstable must say for `bot` in pair `p`, from the pair's row alone."""
    if p.state == "waiting" or p.state == "playing":
        return "pending", None
    points = p.points_a if bot == p.bot_a_id else p.points_b
    if p.forfeit:
        return "forfeit", points
    return {2: "win", 1: "split", 0: "loss"}[points], points


def test_the_crosstable_matches_the_pairs_rows(client, sessions):
    event = four_bot_round_robin(sessions)
    data = client.get(f"/api/tournaments/{event.id}").get_json()
    page = client.get(f"/tournaments/{event.id}").get_data(as_text=True)
    with sessions() as s:
        pairs = list(s.query(DuplicatePair).all())
    rows = {row["bot_id"]: row for row in data["crosstable"]["rows"]}
    assert len(pairs) == 5
    for p in pairs:
        for bot, other in ((p.bot_a_id, p.bot_b_id), (p.bot_b_id, p.bot_a_id)):
            cell = next(c for c in rows[bot]["cells"] if c["opponent"] == other)
            [shown] = [x for x in cell["pairs"] if x["pair_id"] == p.id]
            outcome, points = expected_cell(p, bot)
            assert (shown["outcome"], shown["points"]) == (outcome, points), (p.id, bot)
            assert shown["matches"] == [p.match_a_id, p.match_b_id]
            # the HTML cell: its colour class, and a link to each of its two matches
            html = re.search(rf'<div class="cell {outcome}" id="cell-{bot}-{other}-{p.id}"'
                             r'.*?</div>', page, re.S)
            assert html is not None, (p.id, bot, outcome)
            for m in (p.match_a_id, p.match_b_id):
                if m is not None:
                    assert f'href="/matches/{m}"' in html.group(0)
    anna, bert, cleo, dora = (event.bots[n] for n in ("anna", "bert", "cleo", "dora"))
    # a bot's own diagonal is empty, and a pairing to come shows as to play
    assert next(c for c in rows[anna]["cells"] if c["opponent"] == anna)["self"] is True
    assert next(c for c in rows[anna]["cells"]
                if c["opponent"] == bert)["pairs"][0]["outcome"] == "pending"
    # the forfeit says who forfeited and why
    forfeit = next(c for c in rows[cleo]["cells"] if c["opponent"] == anna)["pairs"][0]
    assert forfeit["forfeited_by_me"] is True and forfeit["detail"] == DETAIL
    assert DETAIL in page and "forfeited</span> by cleo" in page
    assert next(c for c in rows[dora]["cells"]
                if c["opponent"] == bert)["pairs"][0]["state"] == "playing"


def test_standings_use_the_tie_breaks(client, sessions):
    event = four_bot_round_robin(sessions)
    data = client.get(f"/api/tournaments/{event.id}").get_json()
    table = {r["name"]: r for r in data["standings"]}
    assert [r["name"] for r in data["standings"]] == ["anna", "bert", "cleo", "dora"]
    anna, bert, cleo, dora = (table[n] for n in ("anna", "bert", "cleo", "dora"))
    assert (anna["points"], anna["scored"], anna["conceded"]) == (4, 14, 9)
    assert (bert["points"], bert["scored"], bert["conceded"]) == (1, 13, 10)
    assert (cleo["points"], cleo["difference"], cleo["forfeits"]) == (1, -3, 1)
    assert (dora["points"], dora["difference"]) == (0, -5)
    assert bert["rank"] == 2 and cleo["rank"] == 3  # equal points: the difference decides
    # Sonneborn-Berger (not Swiss): anna beat dora (0) and cleo (1): 2/2 of each
    assert data["tiebreak"] == "Sonneborn-Berger" and anna["tiebreak"] == 1
    page = client.get(f"/tournaments/{event.id}").get_data(as_text=True)
    standings = page[page.index("<h2>Standings"):page.index("<h2>Crosstable")]
    assert [standings.index(n) for n in ("anna", "bert", "cleo", "dora")] == sorted(
        standings.index(n) for n in ("anna", "bert", "cleo", "dora"))


def test_progress_counts_matches_and_estimates_the_end(client, sessions):
    event = four_bot_round_robin(sessions)  # started 600 s ago
    progress = client.get(f"/api/tournaments/{event.id}").get_json()["progress"]
    # a 4-bot round-robin: 6 pairs, 12 matches; 3 pairs decided (one by forfeit)
    assert (progress["matches_done"], progress["matches_due"]) == (6, 12)
    assert (progress["pairs_decided"], progress["pairs_due"]) == (3, 6)
    assert progress["pace_s"] == pytest.approx(100, abs=5)
    assert progress["eta"] is not None
    page = client.get(f"/tournaments/{event.id}").get_data(as_text=True)
    assert "<b class=\"done-due\">6 / 12</b>" in page and "ETA" in page
    assert "data-events=" in page  # live while it runs


def test_rounds_show_pairings_byes_and_forfeits(client, sessions):
    event = tournament(sessions, ["anna", "bert", "cleo"], format="swiss", rounds=2,
                       name="Swiss open")
    add_pair(sessions, event, 1, 1, "anna", "bert", legs=((1, 2), (0, 5)))  # bert wins both
    add_bye(sessions, event, 1, "cleo")
    add_pair(sessions, event, 2, 1, "cleo", "bert", forfeit=FORFEIT_BOTH,
             detail="both bots were absent past the grace period (60 s)")
    add_bye(sessions, event, 2, "anna")
    data = client.get(f"/api/tournaments/{event.id}").get_json()
    assert [r["round"] for r in data["rounds_played"]] == [1, 2]
    assert data["rounds_played"][0]["byes"][0]["name"] == "cleo"
    table = {r["name"]: r for r in data["standings"]}
    assert (table["cleo"]["points"], table["cleo"]["byes"]) == (2, 1)
    assert (table["bert"]["points"], table["bert"]["forfeits"]) == (2, 1)
    assert data["tiebreak"] == "Buchholz"
    # Swiss: 2 rounds of one pair each (3 bots): 4 matches, all decided
    assert (data["progress"]["matches_done"], data["progress"]["matches_due"]) == (4, 4)
    page = client.get(f"/tournaments/{event.id}").get_data(as_text=True)
    assert page.count('<span class="tag">bye</span>') == 2
    assert "both bots were absent past the grace period" in page and "by both" in page


def test_a_finished_tournament_keeps_its_page_not_live(client, sessions):
    event = tournament(sessions, ["anna", "bert"], format="gauntlet", rounds=1)
    add_pair(sessions, event, 1, 1, "anna", "bert", legs=((0, 1), (1, 1)))
    with sessions.begin() as s:
        s.get(Tournament, event.id).state = T_FINISHED
    page = client.get(f"/tournaments/{event.id}")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "data-events=" not in text and "finished" in text and "ETA" not in text
    assert "2 / 2" in text


def test_unknown_tournament_is_a_404_naming_it(client):
    page = client.get("/tournaments/999")
    assert page.status_code == 404
    assert "no tournament with id 999" in page.get_data(as_text=True)
    api = client.get("/api/tournaments/999")
    assert api.status_code == 404 and "no tournament with id 999" in api.get_json()["error"]
    assert client.get("/events/tournaments/999").status_code == 404
    bad = client.get("/tournaments/first")
    assert bad.status_code == 400
    assert "tournament id must be a whole number" in bad.get_data(as_text=True)


def test_the_tournaments_list_and_its_json(client, sessions):
    assert client.get("/api/tournaments").get_json() == {"tournaments": []}
    assert "No tournaments yet" in client.get("/tournaments").get_data(as_text=True)
    event = four_bot_round_robin(sessions)
    done = tournament(sessions, ["erik", "fay"], format="gauntlet", rounds=1, name="Old cup")
    add_pair(sessions, done, 1, 1, "erik", "fay", legs=((0, 1), (0, 1)))
    with sessions.begin() as s:
        s.get(Tournament, done.id).state = T_FINISHED
    items = client.get("/api/tournaments").get_json()["tournaments"]
    assert [t["id"] for t in items] == [event.id, done.id]  # running first
    first = items[0]
    assert (first["name"], first["format"], first["state"], first["bots"]) == (
        "Winter cup", "round-robin", "running", 4)
    assert (first["progress"]["matches_done"], first["progress"]["matches_due"]) == (6, 12)
    assert items[1]["progress"]["matches_done"] == items[1]["progress"]["matches_due"] == 2
    page = client.get("/tournaments").get_data(as_text=True)
    assert f'href="/tournaments/{event.id}"' in page and "6 / 12" in page
    assert 'href="/tournaments"' in client.get("/standings").get_data(as_text=True)  # the nav


def test_a_tournament_match_page_names_its_event_and_round(client, sessions):
    event = four_bot_round_robin(sessions)
    match_id = event.legs["anna-dora"][1]
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert f'<a href="/tournaments/{event.id}">Winter cup</a>' in page
    assert f'href="/tournaments/{event.id}#round-1">round 1</a>' in page
    assert "second leg (seats swapped)" in page
    data = client.get(f"/api/matches/{match_id}").get_json()["event"]
    assert (data["kind"], data["id"], data["round"], data["leg"]) == (
        "tournament", event.id, 1, 1)


def test_a_finished_leg_hides_its_deals_while_the_other_leg_runs(client, sessions):
    """Both legs of a pair have one seed, so the same deck for every hand number: a finished
    leg's seed, hand replays and seat pages wait until the other leg is over too."""
    from datetime import UTC, datetime

    from db.models import FINISHED, PLAYED, Match

    event = tournament(sessions, ["anna", "bert"], format="gauntlet", rounds=1)
    add_pair(sessions, event, 1, 1, "anna", "bert", state=PLAYING)
    first, second = event.legs["anna-bert"]
    with sessions.begin() as s:
        m = s.get(Match, first)
        m.state, m.winner, m.end_reason, m.to_act = FINISHED, 0, PLAYED, None
        m.counter1, m.finished_at = 0, datetime.now(UTC)
    shown = client.get(f"/api/matches/{first}").get_json()
    assert shown["state"] == "finished" and shown["seed"] is None
    assert shown["pair_in_play"] is True
    assert "download the record" not in client.get(f"/matches/{first}").get_data(as_text=True)
    listed = {m["id"]: m for m in client.get("/api/matches").get_json()["matches"]}
    assert listed[first]["seed"] is None
    replay = client.get(f"/api/matches/{first}/hands/0")
    assert replay.status_code == 404 and "other match of its duplicate pair" in \
        replay.get_json()["error"]
    seat = client.get(f"/api/matches/{first}/seats/0")
    assert seat.status_code == 404 and "still running" in seat.get_json()["error"]
    with sessions.begin() as s:  # the other leg ends: everything is shown
        m = s.get(Match, second)
        m.state, m.winner, m.end_reason, m.to_act = FINISHED, 1, PLAYED, None
        m.counter0, m.finished_at = 0, datetime.now(UTC)
    after = client.get(f"/api/matches/{first}").get_json()
    assert after["seed"] == shown_seed(sessions, first) and after["pair_in_play"] is False
    assert "download the record" in client.get(f"/matches/{first}").get_data(as_text=True)


def shown_seed(sessions, match_id: int) -> int:
    from db.models import Match

    with sessions() as s:
        return s.get(Match, match_id).seed
