"""A ladder at internet size: a PostgreSQL database with a long history, and what reads it.

    .venv/bin/python bench/history.py fill --matches 100000 [--bots 2000] [--db NAME]
    .venv/bin/python bench/history.py bench --db NAME[,NAME...] [--runs 20] [--json FILE]
        [--only TEXT,...]
    .venv/bin/python bench/history.py sizes --db NAME[,NAME...]

`fill` creates a fresh database (default `bummerl_history_<N>` on the server of
`BUMMERL_TEST_POSTGRES_URL`, default postgresql+psycopg://postgres@127.0.0.1:5432/test),
migrates it and fills it with `--matches` matches of `--bots` bots over a year, with their hands,
action logs, ladder rows and rating history (`bench/historydata.py` says how realistic), by
COPY; it prints rows/s of each step.

`bench` times, on each database given, p50 and p99 over `--runs` runs (after one warm-up) of:
every dashboard page and JSON endpoint through Flask's test client of `web/` (the standings, a
busy bot's page and its JSON with the chart and the per-opponent table, the matches list with
filters and pages, deep ones too, a match page, a hand replay, /health), the ladder's tick
(`workers.ladder.tick` with no match to start, and the reads of a pairing), rating a finished
match (`workers.ladder.rate_match`; the bench un-rates a few ladder matches of the database
first and rates one per run: it writes to the database), and exports (`db.records`: a page of
50 records, a bot's page, the count). Beside each: the floor, a `SELECT 1` round trip through the
same engine in the same run, and with several databases the growth from the smallest to the
largest next to the growth of the data (matches).

`sizes` prints each table's rows and `pg_total_relation_size`, and bytes per match and per
action.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("BUMMERL_DB_STATEMENT_MS", "0")  # a slow query is a figure, not an error

import historydata  # noqa: E402
import psycopg  # noqa: E402
from sqlalchemy import select, text  # noqa: E402

BASE_URL = os.environ.get("BUMMERL_TEST_POSTGRES_URL",
                          "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TABLES = ("matches", "hands", "actions", "refusals", "ladder_matches", "ratings",
          "rating_history", "bots", "actions_archive")


def db_url(name: str) -> str:
    return historydata.with_database(BASE_URL, name)


def cmd_fill(args: argparse.Namespace) -> None:
    name = args.db or f"bummerl_history_{args.matches}"
    url = historydata.create_database(BASE_URL, name)
    print(f"filling {name}: {args.matches:,} matches of {args.bots:,} bots")
    t = time.perf_counter()
    done = historydata.fill(url, args.matches, args.bots, days=args.days)
    total = time.perf_counter() - t
    rows = sum(done.rows.values())
    for step, s in done.seconds.items():
        print(f"  {step:<16} {s:8.1f} s")
    for table, n in done.rows.items():
        print(f"  {table:<16} {n:>12,} rows")
    copied = sum(n for t_, n in done.rows.items() if t_ not in ("hands", "actions"))
    made = done.rows["hands"] + done.rows["actions"]
    print(f"COPY {copied / done.seconds['copy']:,.0f} rows/s ({copied:,} rows); hands and "
          f"actions from the templates {made / done.seconds['expand']:,.0f} rows/s "
          f"({made:,} rows); all {rows / total:,.0f} rows/s, {total:.0f} s in all")


# --- timing ----------------------------------------------------------------------------------
def timed(fn: Callable[[], object], runs: int) -> tuple[float, ...]:
    """p50 and p99 in ms of `runs` calls of `fn` after one warm-up call."""
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    return statistics.median(times), p99


def get(client: Any, path: str) -> Callable[[], object]:
    def call() -> object:
        answer = client.get(path)
        if answer.status_code != 200:
            raise RuntimeError(f"GET {path}: {answer.status_code} {answer.data[:300]!r}")
        return answer.data
    return call


def probe(url: str) -> dict[str, Any]:
    """Things to ask for: a busy remote bot, a finished match, the number of pages."""
    with psycopg.connect(historydata.libpq_url(url)) as c:
        matches = c.execute("SELECT count(*) FROM matches").fetchone()[0]  # type: ignore[index]
        bot = c.execute("SELECT bot_id FROM ratings WHERE profile = 'soft' AND bot_id > 6 "
                        "ORDER BY matches DESC LIMIT 1").fetchone()[0]  # type: ignore[index]
        finished = c.execute("SELECT id FROM matches WHERE state = 'finished' AND "  # recent
                             "profile = 'soft' ORDER BY id DESC OFFSET 100 LIMIT 1"
                             ).fetchone()[0]  # type: ignore[index]
        ids = [r[0] for r in c.execute("SELECT id FROM matches WHERE bot0_id = %s OR "
                                       "bot1_id = %s ORDER BY id", (bot, bot))]
    return {"matches": matches, "bot": bot, "finished": finished, "bot_matches": len(ids),
            "bot_middle": ids[len(ids) // 2]}


def deep_pages(client: Any, where: str, middle_id: int, oldest_id: int) -> tuple[str, str]:
    """The query strings of a page in the middle of the history and of its oldest page: by
    keyset (`before=ID`) where the list has it, else by page number (before migration 0012's
    commit, the list sorted every match and had numbered pages only)."""
    data = client.get(f"/api/matches?{where}").get_json()
    if "next_before" in data:
        return f"before={middle_id}", f"before={oldest_id + data['per_page']}"
    pages = data["pages"]
    return f"page={max(1, pages // 2)}", f"page={pages}"


def unrate(url: str, n: int) -> list[int]:
    """Clear rated_at of `n` finished ladder matches (the newest), so that rating them runs."""
    with psycopg.connect(historydata.libpq_url(url)) as c:
        ids = [r[0] for r in c.execute(
            "SELECT l.match_id FROM ladder_matches l JOIN matches m ON m.id = l.match_id "
            "WHERE m.state = 'finished' AND m.winner IS NOT NULL AND m.rated "
            "ORDER BY l.match_id DESC LIMIT %s", (n,))]
        c.execute("UPDATE ladder_matches SET rated_at = NULL WHERE match_id = ANY(%s)", (ids,))
    return ids


def bench_one(name: str, runs: int, only: list[str] | None = None
              ) -> dict[str, tuple[float, ...]]:
    from db import records
    from db.base import make_session_factory
    from web import create_app, queries
    from workers import ladder

    url = db_url(name)
    info = probe(url)
    os.environ["BUMMERL_LADDER_MATCHES"] = "0"  # the tick starts nothing (no service here)
    app = create_app({"DATABASE_URL": url, "SERVICE_ADDRESS": "127.0.0.1:9",
                      "BROKER_URL": None, "TESTING": True})
    client = app.test_client()
    sessions = make_session_factory(url)
    bind = sessions.kw["bind"]
    bot, match = info["bot"], info["finished"]
    out: dict[str, tuple[float, ...]] = {}
    middle, last = deep_pages(client, "", info["matches"] // 2, 30)
    bot_middle, bot_last = deep_pages(client, f"bot={bot}&", info["bot_middle"], 0)

    def floor() -> None:
        with bind.connect() as c:
            c.execute(text("SELECT 1"))

    cases: list[tuple[str, Callable[[], object]]] = [
        ("floor: SELECT 1", floor),
        ("GET /standings", get(client, "/standings")),
        ("GET /api/standings", get(client, "/api/standings")),
        ("GET /bots/ID (busy bot)", get(client, f"/bots/{bot}")),
        ("GET /api/bots/ID", get(client, f"/api/bots/{bot}")),
        ("GET /matches", get(client, "/matches")),
        ("GET /matches?page=2", get(client, "/matches?page=2")),
        ("GET /matches, middle of history", get(client, f"/matches?{middle}")),
        ("GET /matches, oldest page", get(client, f"/matches?{last}")),
        ("GET /matches?state=finished", get(client, "/matches?state=finished")),
        ("GET /matches?state=running", get(client, "/matches?state=running")),
        ("GET /matches?profile=sharp", get(client, "/matches?profile=sharp")),
        ("GET /matches?bot=ID", get(client, f"/matches?bot={bot}")),
        ("GET /matches?bot=ID, middle", get(client, f"/matches?bot={bot}&{bot_middle}")),
        ("GET /matches?bot=ID, oldest page", get(client, f"/matches?bot={bot}&{bot_last}")),
        ("GET /api/matches", get(client, "/api/matches")),
        ("GET /api/matches, oldest page", get(client, f"/api/matches?{last}")),
        ("GET /matches/ID", get(client, f"/matches/{match}")),
        ("GET /api/matches/ID", get(client, f"/api/matches/{match}")),
        ("GET /matches/ID/hands/0", get(client, f"/matches/{match}/hands/0")),
        ("GET /health", get(client, "/health")),
        ("health: activity (db part)", lambda: queries.activity(sessions)),
        ("live: change markers", lambda: sessions().execute(
            __import__("web.live", fromlist=["x"]).markers_query()).all()),
        ("ladder tick (nothing to start)", lambda: ladder.tick(sessions)),
        ("ladder pairing reads", lambda: pairing_reads(sessions)),
        ("export: 50 records", lambda: list(records.export(bind, records.ExportFilter(),
                                                            limit=50))),
        ("export: a bot's 50 records", lambda: list(records.export(
            bind, records.ExportFilter(bot_id=bot), limit=50))),
        ("export: count all", lambda: records.count(bind, records.ExportFilter())),
    ]
    blocks = BlockCounter(url)
    if only:
        cases = [(label, fn) for label, fn in cases
                 if label.startswith("floor") or any(o in label for o in only)]
    for label, fn in cases:
        blocks.start()
        out[label] = timed(fn, runs)
        out[label] = (*out[label], blocks.per_call(runs + 1))
        print(f"  {label:<34} p50 {out[label][0]:9.2f} ms  p99 {out[label][1]:9.2f} ms  "
              f"{out[label][2]:10,.0f} pages", flush=True)
    if only and not any(o in "rate a finished match" for o in only):
        blocks.close()
        bind.dispose()
        out["_info"] = (float(info["matches"]), float(info["bot_matches"]))
        return out
    ids = unrate(url, runs + 1)
    left = list(ids)

    def rate_one() -> None:
        if not ladder.rate_match(left.pop(), sessions):
            raise RuntimeError("rating a finished ladder match did nothing")

    blocks.start()
    out["rate a finished match"] = (*timed(rate_one, runs), blocks.per_call(runs + 1))
    blocks.close()
    print(f"  {'rate a finished match':<34} p50 {out['rate a finished match'][0]:9.2f} ms  "
          f"p99 {out['rate a finished match'][1]:9.2f} ms", flush=True)
    out["_info"] = (float(info["matches"]), float(info["bot_matches"]))
    bind.dispose()
    return out


class BlockCounter:
    """8 kB pages PostgreSQL read for this database (from its buffers or from disk), per call:
    how much of the data a query touches, whatever the load on the machine. Backends report
    their counts when idle (at most every second), so each reading waits for that first."""

    def __init__(self, url: str) -> None:
        self.connection = psycopg.connect(historydata.libpq_url(url), autocommit=True)
        self.at = 0

    def read(self) -> int:
        time.sleep(1.2)
        row = self.connection.execute("SELECT blks_hit + blks_read FROM pg_stat_database "
                                      "WHERE datname = current_database()").fetchone()
        assert row is not None
        return int(row[0])

    def start(self) -> None:
        self.at = self.read()

    def per_call(self, calls: int) -> float:
        return (self.read() - self.at) / calls

    def close(self) -> None:
        self.connection.close()


def pairing_reads(sessions: Any) -> None:
    """What start_matches reads before it asks the service for a match."""
    import random

    from workers import ladder
    from workers.ladder import Rating

    with sessions() as s:
        running = ladder.running_ladder(s, "soft")
        bots = ladder.eligible_bots(s, "soft")
        ratings = {b.id: s.scalar(select(Rating).where(Rating.bot_id == b.id,
                                                       Rating.profile == "soft"))
                   for b in bots}
        playing = {frozenset((m.bot0_id, m.bot1_id)) for m in running}
    ladder.choose_pair({k: v for k, v in ratings.items() if v is not None}, playing,
                       random.Random(1))


def cmd_bench(args: argparse.Namespace) -> None:
    names = args.db.split(",")
    results = {}
    for name in names:
        print(f"{name}:", flush=True)
        results[name] = bench_one(name, args.runs, args.only.split(",") if args.only else None)
        if args.json:  # after each database: a later one may take long
            Path(args.json).write_text(json.dumps(results, indent=1))
    report(results)


def report(results: dict[str, dict[str, Any]]) -> None:
    """One table: per query and database p50 / p99 (× the floor's p50) and pages per call;
    with several databases, how p50 and the pages grew from the first to the last."""
    names = list(results)
    sizes = [results[n]["_info"][0] for n in names]
    head = "| query | " + " | ".join(f"{int(s):,} matches: p50 / p99 (× floor), pages"
                                     for s in sizes)
    if len(names) > 1:
        head += f" | growth of p50, pages ({sizes[-1] / sizes[0]:,.0f}× the matches)"
    print()
    print(head + " |")
    print("|---" * (len(names) + 1 + (len(names) > 1)) + "|")
    for label in results[names[0]]:
        if label.startswith("_") or any(label not in results[n] for n in names):
            continue
        cells = []
        for n in names:
            p50, p99, pages = results[n][label][:3]
            fl = results[n]["floor: SELECT 1"][0]
            cells.append(f"{p50:.1f} / {p99:.1f} ms ({p50 / fl:,.0f}×), {pages:,.0f}")
        row = f"| {label} | " + " | ".join(cells)
        if len(names) > 1:
            first, last = results[names[0]][label], results[names[-1]][label]
            row += f" | {last[0] / first[0]:.1f}×, {last[2] / max(first[2], 1):.1f}×"
        print(row + " |")


def sizes(name: str) -> dict[str, tuple[int, int]]:
    """Rows and total bytes (with indexes and TOAST) of each table."""
    out = {}
    with psycopg.connect(historydata.libpq_url(db_url(name))) as c:
        for table in TABLES:
            found = c.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            if found is None or found[0] is None:
                continue
            rows = c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            size = c.execute("SELECT pg_total_relation_size(%s)",
                             (table,)).fetchone()[0]  # type: ignore[index]
            out[table] = (int(rows), int(size))
        out["(database)"] = (0, int(c.execute("SELECT pg_database_size(current_database())")
                                    .fetchone()[0]))  # type: ignore[index]
    return out


def cmd_sizes(args: argparse.Namespace) -> None:
    for name in args.db.split(","):
        found = sizes(name)
        matches = found["matches"][0]
        actions = found["actions"][0] or 1
        print(f"{name}: {matches:,} matches")
        print("| table | rows | MB | rows per match | bytes per match |")
        print("|---|---|---|---|---|")
        for table, (rows, size) in found.items():
            print(f"| {table} | {rows:,} | {size / 2**20:,.1f} | {rows / matches:.2f} | "
                  f"{size / matches:,.0f} |")
        print(f"actions: {found['actions'][1] / actions:.0f} bytes per action (with indexes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fill = sub.add_parser("fill", help="create and fill a database")
    fill.add_argument("--matches", type=int, required=True)
    fill.add_argument("--bots", type=int, default=2000)
    fill.add_argument("--days", type=float, default=365)
    fill.add_argument("--db", help="database name (default bummerl_history_<matches>)")
    bench = sub.add_parser("bench", help="time what reads the databases")
    bench.add_argument("--db", required=True, help="database names, comma-separated")
    bench.add_argument("--runs", type=int, default=20)
    bench.add_argument("--json", help="also write the figures to this file")
    bench.add_argument("--only", help="only the queries whose labels contain one of these "
                                      "comma-separated texts")
    size = sub.add_parser("sizes", help="rows and bytes per table")
    size.add_argument("--db", required=True)
    args = parser.parse_args()
    {"fill": cmd_fill, "bench": cmd_bench, "sizes": cmd_sizes}[args.command](args)


if __name__ == "__main__":
    main()
