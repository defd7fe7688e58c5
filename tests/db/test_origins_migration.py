"""Migration 0014_origins backfills the origin of every match made before origins were kept
(the rule in its docstring: a pair's leg from its pair's owner, a ladder match from
`ladder_matches`, anything else 'manual'; an origin already set is kept) and makes the column
NOT NULL, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, exc, text

from db.migrate import downgrade, upgrade

MATCH = ("INSERT INTO matches (id, bot0_id, bot1_id, profile, seed, state, seq, hand_number, "
         "counter0, counter1, schneider, move_ms, bank_ms, max_illegal, bank0_ms, bank1_ms, "
         "illegal0, illegal1, created_at, rated, origin, pair_id, pair_leg, event_id) "
         "VALUES (:id, 1, 2, 'soft', 7, 'finished', 0, 0, 7, 7, false, 4000, 9000, 3, 9000, "
         "9000, 0, 0, '2026-12-01 10:00:00+00', true, :origin, :pair_id, :leg, :event_id)")
PAIR = ("INSERT INTO duplicate_pairs (id, owner, owner_id, round, board, seed, bot_a_id, "
        "bot_b_id, profile, move_ms, bank_ms, rated, state, due_at, created_at) VALUES "
        "(:id, :owner, 1, 1, :id, 7, 1, 2, 'soft', 4000, 9000, false, 'done', "
        "'2026-12-01 10:00:00+00', '2026-12-01 10:00:00+00')")


def test_old_matches_get_their_origin_and_the_column_is_required(database_url):
    upgrade(database_url, "0013_bot_versions")
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            for bot_id, name in ((1, "a"), (2, "b")):
                conn.execute(text(
                    "INSERT INTO bots (id, name, kind, created_at) VALUES "
                    "(:id, :name, 'remote', '2026-12-01 10:00:00+00')"),
                    {"id": bot_id, "name": name})
            conn.execute(text(PAIR), {"id": 1, "owner": "tournament"})
            conn.execute(text(PAIR), {"id": 2, "owner": "test"})
            rows = {  # match id: (origin as stored, pair, leg, event)
                1: (None, None, None, None),  # a ladder match (below)
                2: (None, None, None, None),  # CreateMatch by an operator
                3: ("challenge", None, None, None),  # challenges always said so
                4: (None, 1, 0, 1),  # a tournament's leg
                5: (None, 2, 1, 1),  # a version test's leg
                6: ("ladder", 1, 1, 1),  # an origin already set is kept as it is
            }
            for match_id, (origin, pair_id, leg, event_id) in rows.items():
                conn.execute(text(MATCH), {"id": match_id, "origin": origin,
                                           "pair_id": pair_id, "leg": leg,
                                           "event_id": event_id})
            conn.execute(text("INSERT INTO ladder_matches (match_id, profile, created_at) "
                              "VALUES (1, 'soft', '2026-12-01 10:00:00+00')"))
        upgrade(database_url)
        with engine.begin() as conn:
            origins = dict(conn.execute(text("SELECT id, origin FROM matches")).all())
        assert origins == {1: "ladder", 2: "manual", 3: "challenge", 4: "tournament",
                           5: "test", 6: "ladder"}
        with pytest.raises(exc.IntegrityError), engine.begin() as conn:
            conn.execute(text(MATCH), {"id": 7, "origin": None, "pair_id": None, "leg": None,
                                       "event_id": None})
        downgrade(database_url, "0013_bot_versions")  # and back: the column takes nulls again
        with engine.begin() as conn:
            conn.execute(text(MATCH), {"id": 7, "origin": None, "pair_id": None, "leg": None,
                                       "event_id": None})
    finally:  # (the database goes with its folder or schema)
        engine.dispose()
