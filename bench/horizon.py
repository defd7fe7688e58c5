"""The cost of an export's release horizon (db.records), beside the page it guards.

    .venv/bin/python bench/horizon.py [--matches 2000] [--pairs 20000] [--open 20] [--db postgres]

Fills a fresh, migrated database with `--matches` finished matches (bench/export.py's `fill`:
played by the engine, written as the service writes them); the first half of them become the
legs of done duplicate pairs, and `--pairs` more done pairs (a tournament history) fill the
pairs table. Then `--open` pairs are being played: half with leg 0 finished and leg 1 not made
yet, half with leg 0 finished and leg 1 running; their finished legs are among the last
matches, so an export from the start reads almost everything before the horizon.

Prints the median time of the horizon query (`records._horizon`, one statement) from the start
and from a cursor near the end, beside the peer it is paid with: the matches SELECT of one
page (50 rows, keyset on `ix_matches_finished`) and one whole page of records (`_page`), with
the ratios; and on PostgreSQL, the plan's scans (which indexes the horizon uses) and the
server's own execution time of it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from export import database, fill  # noqa: E402


def median_ms(function: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def make_pairs(bind: Any, ids: list[int], history: int, open_pairs: int) -> None:
    """Done pairs over the first half of `ids` (two legs each) and `history` more without
    matches; `open_pairs` playing pairs whose leg 0 is one of the last matches."""
    from sqlalchemy import insert, select, update

    from db.models import RUNNING, Match
    from db.pairs import DONE, PLAYING, DuplicatePair

    pairs = DuplicatePair.metadata.tables["duplicate_pairs"]
    matches = Match.metadata.tables["matches"]
    with bind.begin() as connection:
        a, b = connection.execute(select(matches.c.bot0_id, matches.c.bot1_id)
                                  .where(matches.c.id == ids[0])).one()
        base = {"owner": "tournament", "seed": 1, "bot_a_id": a, "bot_b_id": b,
                "profile": "soft", "move_ms": 5000, "bank_ms": 30000, "rated": False}
        rows = [{**base, "owner_id": 1 + n // 1000, "round": 1, "board": 1 + n % 1000,
                 "state": DONE} for n in range(len(ids) // 4 + history)]
        for start in range(0, len(rows), 5000):
            connection.execute(insert(pairs), rows[start:start + 5000])
        done = list(connection.scalars(select(pairs.c.id).order_by(pairs.c.id)))
        for n, pair_id in enumerate(done[:len(ids) // 4]):
            for leg in (0, 1):
                connection.execute(update(matches).where(matches.c.id == ids[2 * n + leg])
                                   .values(pair_id=pair_id, pair_leg=leg))
            connection.execute(update(pairs).where(pairs.c.id == pair_id).values(
                match_a_id=ids[2 * n], match_b_id=ids[2 * n + 1]))
        last = ids[-open_pairs * 3::3]  # among the last matches, others between them
        for n, match_id in enumerate(last):
            pair_id = connection.execute(insert(pairs).values(
                **base, owner_id=999_999, round=1, board=1 + n, state=PLAYING,
                match_a_id=match_id).returning(pairs.c.id)).scalar_one()
            connection.execute(update(matches).where(matches.c.id == match_id)
                               .values(pair_id=pair_id, pair_leg=0))
            if n % 2:  # leg 1 running
                row = dict(connection.execute(select(matches).where(
                    matches.c.id == match_id)).mappings().one())
                row.update(id=ids[-1] + 1 + n, state=RUNNING, finished_at=None, winner=None,
                           pair_leg=1, end_reason=None, end_detail=None)
                connection.execute(insert(matches).values(row))
                connection.execute(update(pairs).where(pairs.c.id == pair_id)
                                   .values(match_b_id=row["id"]))


def plan_scans(bind: Any, statement: Any) -> list[str]:
    """The scans of PostgreSQL's plan for `statement` (which table, by which index) and the
    server's execution time (EXPLAIN ANALYZE)."""
    from sqlalchemy import text

    with bind.connect() as connection:
        compiled = statement.compile(bind, compile_kwargs={"literal_binds": True})
        lines = connection.execute(text(f"EXPLAIN ANALYZE {compiled}")).scalars().all()
    scans = [line.strip().removeprefix("->").strip().split("  (")[0] for line in lines
             if " Scan " in line or line.strip().startswith("Seq Scan")]
    return scans + [line.strip() for line in lines if line.startswith("Execution Time")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--open", type=int, default=20)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="postgres")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bummerl-horizon-"))
    try:
        with database(args.db, folder) as url:
            return run(url, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(url: str, args: argparse.Namespace) -> int:
    from sqlalchemy import select, text

    from db import records
    from db.base import make_engine
    from db.migrate import upgrade

    upgrade(url)
    bind = make_engine(url)
    started = time.perf_counter()
    ids = fill(bind, args.matches)
    make_pairs(bind, ids, args.pairs, args.open)
    if bind.dialect.name == "postgresql":
        with bind.begin() as connection:
            connection.execute(text("ANALYZE"))
    print(f"filled {args.matches} matches, {args.pairs + args.matches // 4 + args.open} pairs "
          f"({args.open} open) in {time.perf_counter() - started:.0f} s ({args.db})")
    every = records.ExportFilter()
    cursors = [c for _, c in records.export(bind, every)]
    horizon = records.tally(bind, every).horizon
    assert horizon is not None and len(cursors) < args.matches
    print(f"an export from the start stops before match {horizon.match_id}: "
          f"{len(cursors)} of {args.matches} records released")
    near_end = cursors[-10]
    m = records.MATCHES.c
    with bind.connect() as connection:
        for name, after in (("from the start", None), ("from a cursor near the end", near_end)):
            rows = (select(records.MATCHES)
                    .where(*records._conditions(every, after))
                    .order_by(m.finished_at, m.id).limit(records.PAGE))
            horizon_ms = median_ms(lambda a=after: records._horizon(connection, every, a),
                                   args.runs)
            rows_ms = median_ms(lambda q=rows: connection.execute(q).all(), args.runs)
            page_ms = median_ms(lambda a=after: records._page(connection, every, a,
                                                              records.PAGE), max(1, args.runs // 5))
            print(f"{name}: horizon {horizon_ms:.2f} ms; the page's matches SELECT "
                  f"{rows_ms:.2f} ms (ratio {horizon_ms / rows_ms:.2f}); a whole page of "
                  f"{records.PAGE} records {page_ms:.1f} ms (ratio {horizon_ms / page_ms:.3f})")
    if bind.dialect.name == "postgresql":
        print("plan of the horizon:", "; ".join(plan_scans(bind, horizon_statement(every))))
    bind.dispose()
    return 0


def horizon_statement(where: Any) -> Any:
    """`records._horizon`'s statement, for EXPLAIN (captured from one call)."""
    from db import records

    seen: list[Any] = []

    class Capture:
        def execute(self, statement: Any) -> Any:
            seen.append(statement)
            return self

        def first(self) -> None:
            return None

    records._horizon(Capture(), where, None)  # type: ignore[arg-type]
    return seen[0]


if __name__ == "__main__":
    raise SystemExit(main())
