"""Events: tournaments of bots played as duplicate pairs (pure logic, no I/O).

Like `engine/`, deterministic and free of the database: the formats and their schedules
(`events.formats`), the Swiss pairing (`events.swiss`), a duplicate pair's score
(`events.scoring`), and the standings with their tie-breaks and the crosstable
(`events.standings`). The tables are `db.events` and `db.pairs`, the scheduler
`workers.events` and `workers.pairs`, the operator's calls `services.ops.tournaments`. Beside them,
`events.levels`: the table of the house opponents for every level (a pure table any layer reads).
"""
