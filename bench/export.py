"""Memory and speed of exporting match records, beside the same processes idle.

    .venv/bin/python bench/export.py [--matches 10000] [--sizes 1000,10000] [--db sqlite|postgres]

Fills a fresh, migrated database with `--matches` finished matches played by the engine with
random legal actions, written as the service writes them (`fill`: matches, hands, actions with
think times; now and then a refused action, every 20th match forfeited on time). Then starts a
real `bummerl serve` and `bummerl web` on it and, for each size K of `--sizes`, exports K
records through `bummerl games export --limit K` (gRPC) and through `/api/export?limit=K` (HTTP,
read in chunks), both to nowhere.

Prints, for the service and the dashboard processes: their RSS idle (after one small export,
so that imports and pools are warm) and their peak RSS during each export (VmHWM, reset before
each through /proc/PID/clear_refs): flat memory means the peak of the largest export is close
to the smallest's. And the records per second of each export beside the floor: the same rows
read with plain SELECTs and dumped as JSON in this process, one page at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from db.models import (  # noqa: E402
    FINISHED,
    FORFEIT_TIMEOUT,
    HOUSE,
    ORIGIN_CHALLENGE,
    ORIGIN_LADDER,
    ORIGIN_TEST,
    ORIGIN_TOURNAMENT,
    PLAYED,
    REMOTE,
)

ORIGINS = (ORIGIN_LADDER, ORIGIN_LADDER, ORIGIN_CHALLENGE, ORIGIN_TOURNAMENT, ORIGIN_TEST)
BOTS = [("alpha", REMOTE, None, "1.0"), ("beta", REMOTE, None, "2.3"),
        ("gamma", REMOTE, None, None), ("house-random", HOUSE, "random", None),
        ("house-bully", HOUSE, "bully", None), ("house-rdeep", HOUSE, "rdeep", None)]


def fill(bind: Any, matches: int, seed: int = 0, chunk: int = 200) -> list[int]:
    """Write `matches` finished matches (and their bots, if missing) into the database of
    `bind`, as the service writes them; returns the match ids. Deterministic from `seed`."""
    from sqlalchemy import func, insert, select

    from db.models import ActionLog, Bot, Hand, Match, Refusal

    tables = {t.__tablename__: t.metadata.tables[t.__tablename__]
              for t in (Bot, Match, Hand, ActionLog, Refusal)}
    rng = random.Random(seed)
    base = datetime(2026, 11, 1, tzinfo=UTC)
    with bind.begin() as connection:
        known = {name: bot_id for name, bot_id in connection.execute(
            select(tables["bots"].c.name, tables["bots"].c.id))}
        for name, kind, strategy, version in BOTS:
            if name not in known:
                known[name] = connection.execute(insert(tables["bots"]).values(
                    name=name, kind=kind, house_strategy=strategy, version=version,
                    created_at=base).returning(tables["bots"].c.id)).scalar_one()
        first = (connection.execute(select(func.max(tables["matches"].c.id))).scalar() or 0) + 1
    bots = [(known[name], kind, version) for name, kind, _, version in BOTS]
    ids = list(range(first, first + matches))
    for start in range(0, matches, chunk):
        rows: dict[str, list[dict[str, Any]]] = {"matches": [], "hands": [], "actions": [],
                                                 "refusals": []}
        for match_id in ids[start:start + chunk]:
            _one(rng, match_id, bots, base + timedelta(seconds=match_id), rows)
        with bind.begin() as connection:
            for name in ("matches", "hands", "actions", "refusals"):
                if rows[name]:
                    connection.execute(insert(tables[name]), rows[name])
    return ids


def _one(rng: random.Random, match_id: int, bots: list[tuple[int, str, str | None]],
         created: datetime, rows: dict[str, list[dict[str, Any]]]) -> None:
    """One match's rows, played with random legal actions (and a refusal now and then)."""
    seat0, seat1 = rng.sample(bots, 2)
    profile = "sharp" if match_id % 5 == 0 else "soft"
    match_seed = rng.getrandbits(62)
    game = engine.Match(match_seed, profile)
    forfeit_at = rng.randrange(5, 60) if match_id % 20 == 0 else None
    move_ms, bank = 5000, [30000, 30000]
    illegal = [0, 0]
    seq, at = 0, created
    hand_first = 0
    while not game.is_over and seq != forfeit_at:
        seat = game.to_act
        assert seat is not None
        hand = game.hand
        if rng.random() < 0.01:  # a refused action: a card the seat does not hold
            held = set(hand.holding(seat))
            card = next(c for c in engine.ALL_CARDS if c not in held)
            error = hand.why_illegal(seat, engine.Action.play(card))
            illegal[seat] += 1
            rows["refusals"].append({"match_id": match_id, "seq": seq, "seat": seat,
                                     "action": f"play {card}", "rule": error.rule,
                                     "message": str(error)[:300], "created_at": at})
        think = rng.randrange(1, 400)
        at += timedelta(milliseconds=think)
        plays = [a for a in game.legal_actions() if a.kind == "play"]
        action = rng.choice(plays) if plays and rng.random() < 0.9 else \
            rng.choice(game.legal_actions())
        rows["actions"].append({"match_id": match_id, "seq": seq, "seat": seat,
                                "action": str(action), "request_id": None, "created_at": at,
                                "think_ms": think})
        kind = (seat0 if seat == 0 else seat1)[1]
        if kind != HOUSE:
            bank[seat] = max(0, bank[seat] - max(0, think - move_ms))
        result = game.apply(seat, action)
        if result is not None:
            rows["hands"].append(_hand(match_id, len(game.results) - 1, hand.dealer,
                                       hand_first, seq, result, at))
            hand_first = seq + 1
        seq += 1
    if not game.is_over:
        rows["hands"].append({"match_id": match_id, "number": game.hand_number,
                              "dealer": game.hand.dealer, "first_seq": hand_first,
                              **dict.fromkeys(("last_seq", "winner", "game_points", "reason",
                                               "points0", "points1", "tricks0", "tricks1",
                                               "finished_at"))})
    names = [seat0, seat1]
    if game.is_over:
        winner, reason, forfeit_seat = game.winner, PLAYED, None
        detail = f"seat {winner} won the match {game.counters[0]}:{game.counters[1]}"
    else:
        forfeit_seat = game.to_act
        assert forfeit_seat is not None
        winner, reason = 1 - forfeit_seat, FORFEIT_TIMEOUT
        detail = f"seat {forfeit_seat} forfeited on time at seq {seq}"
        bank[forfeit_seat] = 0
        at += timedelta(milliseconds=move_ms)
    rows["matches"].append({
        "id": match_id, "bot0_id": names[0][0], "bot1_id": names[1][0], "profile": profile,
        "seed": match_seed, "state": FINISHED, "seq": seq, "to_act": None,
        "hand_number": game.hand_number, "counter0": game.counters[0],
        "counter1": game.counters[1], "winner": winner, "schneider": game.schneider,
        "end_reason": reason, "end_detail": detail, "forfeit_seat": forfeit_seat,
        "move_ms": move_ms, "bank_ms": 30000, "max_illegal": 3, "bank0_ms": bank[0],
        "bank1_ms": bank[1], "illegal0": illegal[0], "illegal1": illegal[1],
        "turn_started_at": None, "deadline_at": None, "created_at": created,
        "finished_at": at, "rated": True, "origin": ORIGINS[match_id % len(ORIGINS)],
        "version0": names[0][2], "version1": names[1][2]})


def _hand(match_id: int, number: int, dealer: int, first: int, last: int,
          r: engine.HandResult, at: datetime) -> dict[str, Any]:
    return {"match_id": match_id, "number": number, "dealer": dealer, "first_seq": first,
            "last_seq": last, "winner": r.winner, "game_points": r.game_points,
            "reason": r.reason.value, "points0": r.points[0], "points1": r.points[1],
            "tricks0": r.tricks[0], "tricks1": r.tricks[1], "finished_at": at}


# --- the bench -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS (Linux 4.0+)


def wait_for(url_or_port: Any, what: str, timeout: float = 60) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        try:
            if isinstance(url_or_port, int):
                socket.create_connection(("127.0.0.1", url_or_port), 1).close()
            else:
                urllib.request.urlopen(url_or_port, timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{what} did not start within {timeout:g} s")


@contextmanager
def database(kind: str, folder: Path) -> Any:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'export.sqlite3'}"
        return
    from workers.testing import fresh_postgres

    with fresh_postgres(os.environ.get("BUMMERL_BENCH_POSTGRES",
                                       "postgresql+psycopg://postgres@127.0.0.1:5432/test")) as url:
        yield url


def grpc_export(port: int, limit: int) -> float:
    started = time.perf_counter()
    with open(os.devnull, "w") as nowhere:
        done = subprocess.run(
            [sys.executable, "-m", "cli.main", "games", "export", "--limit", str(limit),
             "--no-progress", "--server", f"127.0.0.1:{port}"],
            cwd=ROOT, stdout=nowhere, stderr=subprocess.PIPE, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"bummerl games export failed: {done.stderr}")
    return time.perf_counter() - started


def http_export(port: int, limit: int) -> float:
    started = time.perf_counter()
    lines = 0
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/export?limit={limit}",
                                timeout=3600) as answer:
        while chunk := answer.read(1 << 16):
            lines += chunk.count(b"\n")
    if lines != limit:
        raise SystemExit(f"/api/export sent {lines} records, not {limit}")
    return time.perf_counter() - started


def floor(url: str, limit: int) -> float:
    """The same rows read with plain SELECTs, a page at a time, and dumped as JSON."""
    from sqlalchemy import select

    from db.base import make_engine
    from db.models import ActionLog, Hand, Match

    bind = make_engine(url)
    m, h, a = (t.metadata.tables[t.__tablename__] for t in (Match, Hand, ActionLog))
    started = time.perf_counter()
    last, done = 0, 0
    with bind.connect() as connection:
        while done < limit:
            rows = connection.execute(select(m).where(m.c.id > last).order_by(m.c.id)
                                      .limit(min(50, limit - done))).all()
            ids = [r.id for r in rows]
            hands = connection.execute(select(h).where(h.c.match_id.in_(ids))).all()
            acts = connection.execute(select(a).where(a.c.match_id.in_(ids))
                                      .order_by(a.c.match_id, a.c.seq)).all()
            by: dict[int, list[Any]] = {}
            for row in acts:
                by.setdefault(row.match_id, []).append([row.seq, row.seat, row.action,
                                                         row.think_ms])
            results: dict[int, list[Any]] = {}
            for x in hands:
                results.setdefault(x.match_id, []).append([x.number, x.winner])
            for row in rows:
                json.dumps({"id": row.id, "seed": row.seed, "actions": by.get(row.id, []),
                            "hands": results.get(row.id, [])})
            done += len(rows)
            last = ids[-1]
    bind.dispose()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--sizes", default="1000,10000",
                        help="export sizes, comma-separated (each at most --matches)")
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if max(sizes) > args.matches:
        parser.error("each size must be at most --matches")
    folder = Path(tempfile.mkdtemp(prefix="bummerl-export-"))
    try:
        with database(args.db, folder) as url:
            return run(url, args, sizes, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(url: str, args: argparse.Namespace, sizes: list[int], folder: Path) -> int:
    from db.base import make_engine
    from db.migrate import upgrade

    upgrade(url)
    bind = make_engine(url)
    started = time.perf_counter()
    fill(bind, args.matches)
    bind.dispose()
    print(f"export bench on {args.db}: {args.matches} finished matches written in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    grpc_port, web_port = free_port(), free_port()
    env = {**os.environ, "DATABASE_URL": url, "BUMMERL_HOOKS": "", "BUMMERL_BUS_URL": "off"}
    logs = open(folder / "logs", "w")  # noqa: SIM115  (closed below)
    serve = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--address",
                              f"127.0.0.1:{grpc_port}", "--no-migrate"], cwd=ROOT, env=env,
                             stdout=logs, stderr=logs)
    web = subprocess.Popen([sys.executable, "-m", "cli.main", "web", "--port", str(web_port)],
                           cwd=ROOT, env=env, stdout=logs, stderr=logs)
    try:
        wait_for(grpc_port, "bummerl serve")
        wait_for(f"http://127.0.0.1:{web_port}/healthz", "bummerl web")
        grpc_export(grpc_port, 10)  # warm: imports, pools, caches
        http_export(web_port, 10)
        idle = {"service": status_kb(serve.pid, "VmRSS"), "dashboard": status_kb(web.pid, "VmRSS")}
        peaks: dict[str, list[int]] = {"service": [], "dashboard": []}
        rates: dict[str, list[float]] = {"service": [], "dashboard": [], "floor": []}
        for size in sizes:
            reset_peak(serve.pid)
            rates["service"].append(size / grpc_export(grpc_port, size))
            peaks["service"].append(status_kb(serve.pid, "VmHWM"))
            reset_peak(web.pid)
            rates["dashboard"].append(size / http_export(web_port, size))
            peaks["dashboard"].append(status_kb(web.pid, "VmHWM"))
            rates["floor"].append(size / floor(url, size))
    finally:
        for process in (serve, web):
            process.send_signal(signal.SIGINT)
        for process in (serve, web):
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        logs.close()
    print(f"\n{'':28}" + "".join(f"{f'{s} records':>16}" for s in sizes) + f"{'idle':>12}")
    for who in ("service", "dashboard"):
        print(f"{who + ' peak RSS MiB':28}" + "".join(f"{p / 1024:16.1f}" for p in peaks[who])
              + f"{idle[who] / 1024:12.1f}")
    for who in ("service", "dashboard", "floor"):
        print(f"{who + ' records/s':28}" + "".join(f"{r:16.0f}" for r in rates[who]))
    print()
    for who in ("service", "dashboard"):
        growth = (peaks[who][-1] - peaks[who][0]) / 1024
        print(f"{who}: peak {peaks[who][-1] / idle[who]:.2f}x its idle RSS at {sizes[-1]} "
              f"records, {peaks[who][0] / idle[who]:.2f}x at {sizes[0]} "
              f"(+{growth:.1f} MiB for {sizes[-1] // max(1, sizes[0])}x the records); "
              f"{rates[who][-1] / rates['floor'][-1]:.2f}x the floor's records/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
