"""Migration 0020_seat_request_ids keys the action log's request ids by (match, seat, request
id) (issue 44): the rows of before stay valid, both seats of a match may then use one id, a seat
may not use its own id twice; the downgrade clears the later of two seats' equal ids and puts
the old index back, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, exc, text

from db.migrate import downgrade, upgrade

MATCH = ("INSERT INTO matches (id, bot0_id, bot1_id, profile, seed, state, seq, hand_number, "
         "counter0, counter1, schneider, move_ms, bank_ms, max_illegal, bank0_ms, bank1_ms, "
         "illegal0, illegal1, created_at, rated, origin) "
         "VALUES (1, 1, 2, 'soft', 7, 'running', 3, 0, 7, 7, false, 4000, 9000, 3, 9000, "
         "9000, 0, 0, '2026-12-01 10:00:00+00', false, 'manual')")
ACTION = ("INSERT INTO actions (match_id, seq, seat, action, request_id, created_at) VALUES "
          "(1, :seq, :seat, 'play AD', :rid, '2026-12-01 10:00:00+00')")


def test_request_ids_become_each_seats_own_and_the_downgrade_keeps_the_log(database_url):
    upgrade(database_url, "0019_bot_names_case")
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            for bot_id, name in ((1, "a"), (2, "b")):
                conn.execute(text("INSERT INTO bots (id, name, kind, created_at) VALUES "
                                  "(:id, :name, 'remote', '2026-12-01 10:00:00+00')"),
                             {"id": bot_id, "name": name})
            conn.execute(text(MATCH))
            conn.execute(text(ACTION), {"seq": 0, "seat": 0, "rid": "house:1:1"})
        with pytest.raises(exc.IntegrityError), engine.begin() as conn:  # the squat of before
            conn.execute(text(ACTION), {"seq": 1, "seat": 1, "rid": "house:1:1"})
        upgrade(database_url)
        with engine.begin() as conn:  # the other seat's equal id is its own now
            conn.execute(text(ACTION), {"seq": 1, "seat": 1, "rid": "house:1:1"})
        with pytest.raises(exc.IntegrityError), engine.begin() as conn:  # a seat's own twice
            conn.execute(text(ACTION), {"seq": 2, "seat": 1, "rid": "house:1:1"})
        with engine.begin() as conn:
            conn.execute(text(ACTION), {"seq": 2, "seat": 0, "rid": "mine"})
        downgrade(database_url, "0019_bot_names_case")
        with engine.begin() as conn:
            rows = conn.execute(text("SELECT seq, seat, request_id FROM actions "
                                     "ORDER BY seq")).all()
        assert [tuple(r) for r in rows] == [(0, 0, "house:1:1"), (1, 1, None), (2, 0, "mine")]
        with pytest.raises(exc.IntegrityError), engine.begin() as conn:  # the old index again
            conn.execute(text(ACTION), {"seq": 3, "seat": 1, "rid": "mine"})
    finally:
        engine.dispose()
