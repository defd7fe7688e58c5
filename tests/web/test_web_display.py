"""The dashboard's wording (issue 29, "display"): plurals, game points that cannot be read as a
score, a bot against itself named by version, "connected since" only while connected, a
version test's decision worded as what the SPRT decides, and a test with no pairs shown as
such (never -0.0). Pages of a fresh SQLite database per test; the browser side is in
test_web_browser.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from test_web_pages import add_bots, add_match, play, real_match

from bots.stats import PairOutcomes, paired_elo_ci, paired_llr
from db.base import make_session_factory
from db.models import FINISHED, ORIGIN_TEST, PLAYED, REMOTE, RUNNING, Bot
from db.schema import create_all
from db.versiontests import H0, H1, STOPPED, VersionTest
from web import create_app
from web.filters import plural, signed


@pytest.fixture
def sessions(tmp_path):
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


def text_of(html: str) -> str:
    """The page's text as read: tags dropped, white space folded."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


ONE_PLURAL = re.compile(r"(?<![\d.])1 (tricks|cards|actions|moves|matches|pairs|bots|rounds|"
                        r"game points|deals|illegal actions)\b")
MINUS_ONE = re.compile(r"[-−]1\b")
NEGATIVE_ZERO = re.compile(r"[-−]0\.0+\b")


# --- plurals ---------------------------------------------------------------------------------
def test_plural_says_one_and_many():
    assert [plural(n, "trick") for n in (0, 1, 2)] == ["0 tricks", "1 trick", "2 tricks"]
    assert plural(1, "match") == "1 match" and plural(3, "match") == "3 matches"
    assert plural(1, "game point") == "1 game point" and plural(2, "pair") == "2 pairs"


def test_no_page_of_a_played_match_says_1_tricks(client, sessions):
    """Every replay step of every hand shows each seat's tricks: a seat at exactly one trick
    read "1 tricks"."""
    match_id = real_match(sessions, seed=42)
    play(match_id, sessions)
    data = client.get(f"/api/matches/{match_id}").get_json()
    pages = [client.get(f"/matches/{match_id}").get_data(as_text=True)]
    pages += [client.get(f"/matches/{match_id}/hands/{h['number']}").get_data(as_text=True)
              for h in data["hands"]]
    texts = [text_of(page) for page in pages]
    # the match's end, as the service wrote it: what the loser still needed, no counters
    detail = data["end_detail"]
    assert "won the match; seat" in detail and "lost, still needing" in detail, detail
    assert not re.search(r"\d:-?\d", detail), detail
    assert any("1 trick ·" in text for text in texts)  # the singular is there ...
    for text in texts:  # ... and no "1 tricks", "1 game points", ...
        assert not ONE_PLURAL.search(text), ONE_PLURAL.search(text)


# --- game points: what each seat still needs -------------------------------------------------
def test_game_points_read_as_what_each_seat_still_needs(client, sessions):
    """A match's counters 7 and -1 (seat 1 won with a hand worth more than it needed) read
    "7:-1", like a lead of seat 0."""
    anna, bert = add_bots(sessions, "anna", "bert")
    done = add_match(sessions, anna, bert, winner=1, counter0=7, counter1=-1)
    running = add_match(sessions, anna, bert, state=RUNNING, counter0=3, counter1=5)
    listing = text_of(client.get("/matches").get_data(as_text=True))
    assert "needs 7 · needs 0" in listing and "needs 3 · needs 5" in listing
    assert "7 : -1" not in listing and not MINUS_ONE.search(listing)
    page = text_of(client.get(f"/matches/{done}").get_data(as_text=True))
    assert "anna needs 7 · bert needs 0" in page and not MINUS_ONE.search(page)
    assert "anna needs 3 · bert needs 5" in text_of(
        client.get(f"/matches/{running}").get_data(as_text=True))
    bot_page = text_of(client.get(f"/bots/{anna}").get_data(as_text=True))
    assert "needs 7 · needs 0" in bot_page and "game points needed" in bot_page


# --- a bot against itself ----------------------------------------------------------------------
def test_a_bot_against_itself_is_named_by_version(client, sessions):
    with sessions.begin() as s:
        bot = Bot(name="walkbot", kind=REMOTE)
        s.add(bot)
        s.flush()
        walkbot = bot.id
    (other,) = add_bots(sessions, "rdeep")
    add_match(sessions, walkbot, walkbot, version0="1.0", version1="2.0", winner=1,
              counter0=3, counter1=0)
    add_match(sessions, walkbot, other, version0="2.0", winner=0, counter0=0, counter1=4)
    page = text_of(client.get(f"/bots/{walkbot}").get_data(as_text=True))
    assert "walkbot 2.0 beat walkbot 1.0" in page
    assert "walkbot won" in page  # against another bot the name is enough
    assert page.count("walkbot won") == 1, page
    assert "itself (version against version)" in page  # its row among the opponents


# --- connected since -----------------------------------------------------------------------
def test_connected_since_only_while_connected(client, sessions):
    """A connection that ended without a clean close (its server stopped beating) keeps
    `connected_since` in the row: the page said "connected since" that closed one's time."""
    now = datetime.now(UTC)
    with sessions.begin() as s:
        gone = Bot(name="gone", kind=REMOTE, connected_since=now - timedelta(hours=2),
                   last_seen_at=now - timedelta(hours=1))
        here = Bot(name="here", kind=REMOTE, connected_since=now - timedelta(minutes=5),
                   last_seen_at=now)
        never = Bot(name="never", kind=REMOTE)
        s.add_all([gone, here, never])
        s.flush()
        ids = gone.id, here.id, never.id
    gone_page, here_page, never_page = (
        text_of(client.get(f"/bots/{i}").get_data(as_text=True)) for i in ids)
    assert "connected since" not in gone_page and "not connected, last seen" in gone_page
    assert "connected since" in here_page and "not connected" not in here_page
    assert "not connected, never seen" in never_page
    assert client.get(f"/api/bots/{ids[0]}").get_json()["connected_since"] is None
    assert client.get(f"/api/bots/{ids[1]}").get_json()["connected_since"] is not None


# --- version tests: the decision and no pairs ------------------------------------------------
def add_test(sessions, counts: tuple[int, int, int], state: str, name: str = "mybot") -> int:
    """A test of mybot@2.0 against mybot@1.0 (elo0 0, elo1 50) with `counts` (lost both,
    split, won both) and one finished match."""
    o = PairOutcomes(*counts)
    with sessions.begin() as s:
        bot = Bot(name=name, kind=REMOTE)
        s.add(bot)
        s.flush()
        test = VersionTest(candidate_bot_id=bot.id, candidate_version="2.0",
                           baseline_bot_id=bot.id, baseline_version="1.0", elo0=0, elo1=50,
                           alpha=0.05, beta=0.05, profile="soft", move_ms=1000, bank_ms=2000,
                           concurrency=1, state=state, lost_both=counts[0], split=counts[1],
                           won_both=counts[2], forfeited=0, voided=0,
                           llr=paired_llr(o, 0, 50), seed=1, started_by="operator",
                           created_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                           reason="the candidate is stronger by 50 Elo (an old row's words)")
        s.add(test)
        s.flush()
        test_id, bot_id = test.id, bot.id
    add_match(sessions, bot_id, bot_id, state=FINISHED, origin=ORIGIN_TEST, event_id=test_id,
              pair_id=test_id, pair_leg=0, version0="2.0", version1="1.0", rated=False, winner=0,
              end_reason=PLAYED, counter0=-2, counter1=6)
    return test_id


def test_a_decided_test_says_what_the_sprt_decided(client, sessions):
    """"the candidate is stronger by 50 Elo" beside an estimate of +190.8 read as two
    measurements that disagree; the decision is which hypothesis was accepted."""
    counts = (0, 2, 14)
    test_id = add_test(sessions, counts, H1)
    elo, low, high = paired_elo_ci(PairOutcomes(*counts))
    assert elo > 100  # the estimate is far past elo1
    page = text_of(client.get(f"/tests/{test_id}").get_data(as_text=True))
    assert "stronger by" not in page
    assert "H1 accepted after 16 pairs" in page
    assert "an Elo difference of at least +50 (elo1) over one of at most 0 (elo0)" in page
    estimate = f"{signed(elo)} [{signed(low)}, {signed(high)}]"
    assert f"the estimate is {signed(elo)} Elo, 95% [{signed(low)}, {signed(high)}]" in page
    assert estimate in page  # the same numbers in the decision and in the table
    assert "needs 0 · needs 6" in page  # the test's matches: game points needed
    listing = text_of(client.get("/tests").get_data(as_text=True))
    assert "stronger by elo1" not in listing and "at least elo1" in listing

    h0 = add_test(sessions, (8, 4, 0), H0, name="otherbot")
    page = text_of(client.get(f"/tests/{h0}").get_data(as_text=True))
    assert "H0 accepted after 12 pairs" in page
    assert "an Elo difference of at most 0 (elo0) over one of at least +50 (elo1)" in page


def test_the_workers_decision_says_which_hypothesis(sessions):
    from workers.versiontests import decide

    test = VersionTest(elo0=0.0, elo1=50.0, alpha=0.05, beta=0.05, max_pairs=None)
    _, final, why = decide(test, PairOutcomes(0, 2, 14))
    assert final == H1 and why is not None
    assert "accepted H1 after 16 pairs" in why and "at least +50 Elo (elo1)" in why, why
    assert "stronger by" not in why
    _, final, why = decide(test, PairOutcomes(8, 4, 0))
    assert final == H0 and why is not None and "at most 0 Elo (elo0)" in why, why


def test_a_test_with_no_pairs_shows_no_numbers(client, sessions):
    """A stopped test with 0 pairs showed score 0.500 and Elo -0.0."""
    test_id = add_test(sessions, (0, 0, 0), STOPPED)
    html = client.get(f"/tests/{test_id}").get_data(as_text=True)
    page = text_of(html)
    assert page.count("no pairs played") == 2 and "0.500" not in page
    assert not NEGATIVE_ZERO.search(page), NEGATIVE_ZERO.search(page)
    listing = text_of(client.get("/tests").get_data(as_text=True))
    assert "no pairs played" in listing and "0.500" not in listing
    assert not NEGATIVE_ZERO.search(listing)


@pytest.mark.parametrize(("value", "digits", "shown"), [
    (-0.0, 1, "±0.0"), (-0.04, 1, "±0.0"), (-1e-9, 2, "±0.00"), (0.0, 1, "±0.0"),
    (-0.06, 1, "−0.1"), (190.8, 1, "+190.8"), (-2.944, 2, "−2.94"), (None, 1, "–")])
def test_signed_never_prints_minus_zero(value, digits, shown):
    assert signed(value, digits) == shown
