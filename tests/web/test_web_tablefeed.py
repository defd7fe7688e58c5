"""The people's table streams (web/tablefeed.py): the poller tells a table's streams of each new
seq or state of its match read from the database, a stream opened since the last poll once
whatever the seq, and nobody of a row that did not change."""

from __future__ import annotations

import json
import queue

import pytest
from sqlalchemy import update
from test_web_pages import add_bots, add_match

from db.base import make_session_factory
from db.models import FINISHED, RUNNING, Match
from db.schema import create_all
from web import create_app


@pytest.fixture
def sessions(tmp_path):
    factory = make_session_factory(f"sqlite:///{tmp_path / 'web.sqlite3'}")
    create_all(factory)
    yield factory
    factory.kw["bind"].dispose()


@pytest.fixture
def feed(sessions):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "TESTING": True, "TABLE_POLL_SECONDS": 0.02,
                      "TABLE_STREAMS": 3})
    feed = app.extensions["bummerl.tables"]
    yield feed
    feed.close()


def event(stream: queue.Queue, timeout: float = 5.0) -> dict:  # type: ignore[type-arg]
    return json.loads(stream.get(timeout=timeout))


def test_streams_hear_each_change_of_their_match_and_a_new_stream_hears_it_once(sessions,
                                                                                  feed):
    a, b = add_bots(sessions, "a", "b")
    first, other = add_match(sessions, a, b, RUNNING, seq=4), add_match(sessions, a, b, RUNNING)
    one, two = feed.subscribe(first), feed.subscribe(first)
    assert event(one) == event(two) == {"seq": 4, "final": False}
    assert one.empty() and two.empty()
    late = feed.subscribe(first)  # opened after the first poll: told once, the others not
    assert event(late) == {"seq": 4, "final": False}
    with sessions.begin() as s:
        s.execute(update(Match).where(Match.id == other).values(seq=9))  # nobody's table
        s.execute(update(Match).where(Match.id == first).values(seq=5))
    assert [event(q) for q in (one, two, late)] == [{"seq": 5, "final": False}] * 3
    with sessions.begin() as s:
        s.execute(update(Match).where(Match.id == first).values(state=FINISHED))
    assert event(one) == {"seq": 5, "final": True}
    assert feed.subscribe(first) is None  # past TABLE_STREAMS: the page polls instead
    for q in (one, two, late):
        feed.unsubscribe(first, q)
    assert feed.open == 0 and not feed.streams and not feed.seen


def test_a_poll_tells_only_the_changed_rows(sessions, feed):
    a, b = add_bots(sessions, "a", "b")
    ids = [add_match(sessions, a, b, RUNNING, seq=n) for n in range(3)]
    streams = {i: feed.subscribe(i) for i in ids}
    feed.stopping.set()  # the test runs the polls itself
    rows = [(i, n, RUNNING) for n, i in enumerate(ids)]
    while feed.thread is not None and feed.thread.is_alive():
        feed.thread.join(0.1)
    feed.seen.clear()
    feed.fresh.clear()
    told = feed._changes(rows)
    assert [(targets, seq) for targets, seq, _ in told] == \
        [([streams[i]], n) for n, i in enumerate(ids)]
    assert feed._changes(rows) == []
    rows[1] = (ids[1], 7, RUNNING)
    rows.append((999, 1, RUNNING))  # a match without a stream (closed meanwhile)
    assert feed._changes(rows) == [([streams[ids[1]]], 7, RUNNING)]
