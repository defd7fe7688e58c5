"""Benchmark of the engine service against its floor, in the same run.

    .venv/bin/python bench/service.py [--db sqlite|postgres] [-n 50] [--seconds 5]
    .venv/bin/python bench/service.py --house [--db ...] [--seconds 10] [--rounds 3]
    .venv/bin/python bench/service.py --db postgres --replicas 2
    .venv/bin/python bench/service.py --db postgres --seconds 10 --rounds 5

Default mode: N matches at once, 2N bot clients, each bot one Play stream (bidirectional), all
clients asyncio (grpc.aio) in this process, each answering a turn with a random legal action.

- FLOOR: a bare Python gRPC relay (grpc.aio, its own process) serving the same Play stream and
  messages: each bot answer is forwarded to the other seat of its pair as a Turn of similar size
  (real observations of a Schnapsen match); no rules, no database.
- BUMMERL: a real `bummerl serve` in its own process on a fresh database (SQLite file, or a
  fresh PostgreSQL database on 127.0.0.1:5432, dropped after), N matches created with the
  operator token, a new match started whenever one ends, with the service's default time control.

For each it prints: actions/s (answers sent; each one applied / forwarded), p50 and p99 of the
time from an answer to the next turn of that match (any seat), the server process's CPU per
action (from /proc), the bench clients' own CPU per action (if that nears one core, the
clients are the bottleneck), the share of the time the server's busiest thread (its event loop)
ran and was ready but waited for a CPU (/proc schedstat: on a machine whose cores the bots and
the database share, the loop waits for a core, not only for work), and the ratios
bummerl/floor. On PostgreSQL it also prints the CPU of the database server processes serving
the bench's database (if /proc shows them), and after the run the matches forfeited (time-out
or illegal) and the answers refused: any makes the bench exit with status 1.

--house: a remote `random` bot (asyncio client) against a house `random` bot played by a real
Celery worker, which submits the house moves over gRPC with the house token, on each broker in
turn: the embedded one (`bummerl up`'s folder, workers.fsbroker) and Redis (`--redis`, default
redis://127.0.0.1:6379/0, keys under a unique prefix); `--rounds` rounds (default 1), the two
brokers in alternating order, each run on a fresh database. Prints, for each run, the median and
p95 of the time from the remote bot's answer to its next turn (the house move in between: the
worker's task, with the seat's observation in its message, choosing and calling SubmitAction;
then the push), beside the same figure for a remote-vs-remote match on the same server in the
same run (the peer); then the median over the rounds for each broker and the ratio
embedded/Redis.

--replicas K runs K `bummerl serve` processes on the one address (gRPC listens with
SO_REUSEPORT: the kernel spreads the bots' connections over them), sharing the database and the
change bus on `--redis`; a match whose bots landed on different replicas is played across the
bus. Its server CPU is the sum of the replicas'. The floor stays one process.

--profile FILE runs the bummerl server under cProfile (every thread) and writes the merged
statistics to FILE when it stops: `python -m pstats FILE`, then e.g. `sort tottime`, `stats 30`.
The machine's other load shows in every figure: compare the ratios, not the absolute numbers.
--rounds K repeats the pair of runs K times, the floor first in odd rounds and bummerl first in
even ones, each round on a fresh database, and prints the median ratios: on a shared machine the
floor moves by a third from minute to minute, and one pair of runs can miss that.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import math
import os
import pstats
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bummerl import wire  # noqa: E402
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc  # noqa: E402

OPERATOR = "bench-operator"
HOUSE = "bench-house-" + uuid.uuid4().hex
AUTH = (("authorization", f"Bearer {OPERATOR}"),)
POSTGRES = os.environ.get("BUMMERL_BENCH_POSTGRES_URL",
                          "postgresql+psycopg://postgres@127.0.0.1:5432/test")


# --- measuring ----------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process `pid` used so far (Linux /proc; else nan)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_times(pids: list[int]) -> dict[str, tuple[int, int]]:
    """(ns running, ns runnable but waiting for a CPU) of every thread of `pids`, by its
    /proc path (Linux schedstat; empty where it is not available)."""
    times: dict[str, tuple[int, int]] = {}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                running, waiting, _ = map(int, (task / "schedstat").read_text().split())
            except (OSError, ValueError):
                continue
            times[str(task)] = (running, waiting)
    return times


def busiest(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
            elapsed: float) -> tuple[float, float]:
    """(running, waiting for a CPU), as shares of `elapsed`, of the thread that ran most
    between the two `thread_times` (the server's event loop); nan without schedstat."""
    deltas = [(after[k][0] - v[0], after[k][1] - v[1]) for k, v in before.items() if k in after]
    if not deltas or elapsed <= 0:
        return float("nan"), float("nan")
    running, waiting = max(deltas)
    return running / 1e9 / elapsed, waiting / 1e9 / elapsed


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


@dataclass
class Clock:
    """Answers sent, and the gaps from an answer to the next turn of the same match."""

    recording: bool = False
    sent: dict[int, float] = field(default_factory=dict)
    gaps: list[float] = field(default_factory=list)
    answers: int = 0
    turns: int = 0  # turns received, recording or not
    rejected: int = 0
    errors: list[str] = field(default_factory=list)

    def answered(self, match_id: int) -> None:
        self.sent[match_id] = time.perf_counter()
        if self.recording:
            self.answers += 1

    def turn(self, match_id: int) -> None:
        self.turns += 1
        start = self.sent.pop(match_id, None)
        if start is not None and self.recording:
            self.gaps.append(time.perf_counter() - start)


@dataclass
class Figures:
    rate: float  # actions/s
    p50: float  # ms
    p99: float  # ms
    p95: float  # ms
    samples: int
    server_ms: float  # server CPU ms per action
    client_ms: float  # bench clients' CPU ms per action
    client_load: float  # bench clients' CPU seconds per second (1.0 = one core)
    db_ms: float = float("nan")  # database server CPU ms per action (PostgreSQL)
    # the server's busiest thread (its event loop): shares of the time it ran, and it was
    # ready to run but waited for a CPU (the machine's cores were taken)
    loop_running: float = float("nan")
    loop_waiting: float = float("nan")


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


async def measure(clock: Clock, seconds: float, server_pids: list[int],
                  db_pids: list[int] | None = None) -> Figures:
    """Record for `seconds` (the clients keep playing meanwhile); the server's CPU is that of
    all the `server_pids` (replicas)."""
    clock.recording, clock.answers = True, 0
    clock.gaps.clear()
    def server_cpu_now() -> float:
        return sum(cpu_seconds(pid) for pid in server_pids)

    started, cpu0, own0 = time.perf_counter(), server_cpu_now(), own_cpu()
    threads0 = thread_times(server_pids)
    db0 = {p: cpu_seconds(p) for p in db_pids or []}
    await asyncio.sleep(seconds)
    clock.recording = False
    elapsed = time.perf_counter() - started
    server_cpu, own = server_cpu_now() - cpu0, own_cpu() - own0
    loop_running, loop_waiting = busiest(threads0, thread_times(server_pids), elapsed)
    # a backend that ended meanwhile (its connection closed) is left out, not counted as nan
    db = sum(cpu_seconds(p) - before for p, before in db0.items()
             if not math.isnan(cpu_seconds(p) - before)) if db_pids else float("nan")
    gaps = sorted(clock.gaps)
    n = clock.answers or 1
    return Figures(clock.answers / elapsed, percentile(gaps, 0.5) * 1000,
                   percentile(gaps, 0.99) * 1000, percentile(gaps, 0.95) * 1000, len(gaps),
                   server_cpu / n * 1000, own / n * 1000, own / elapsed, db / n * 1000,
                   loop_running, loop_waiting)


# --- the bot clients (asyncio, shared by the floor and bummerl) -------------------------------
async def play(address: str, token: str, clock: Clock, seed: int,
               on_match_end=None) -> None:  # type: ignore[no-untyped-def]
    """One bot: a Play stream answering every turn with a random legal action."""
    rng = random.Random(seed)
    async with grpc.aio.insecure_channel(address) as channel:
        call = bot_pb2_grpc.BotServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {token}"),))
        await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="bench")))
        async for message in call:
            kind = message.WhichOneof("message")
            if kind == "turn":
                turn = message.turn
                clock.turn(turn.match_id)
                # guessable, and harmless: request ids are per seat (issue 44)
                await call.write(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
                    match_id=turn.match_id, seq=turn.seq,
                    action=rng.choice(turn.observation.legal_actions),
                    request_id=f"{turn.match_id}:{turn.seq}")))
                clock.answered(turn.match_id)
            elif kind == "rejected":
                clock.rejected += 1
                if len(clock.errors) < 5:
                    clock.errors.append(f"rejected: {message.rejected.code} "
                                        f"{message.rejected.message}")
            elif kind == "match_ended" and on_match_end is not None:
                await on_match_end(message.match_ended)


async def run_bots(bots: list[tuple[str, str, int]], clock: Clock, warmup: float,
                   seconds: float, server_pids: list[int], db_pids=None, on_match_end=None,  # type: ignore[no-untyped-def]
                   min_turns: int = 0) -> Figures:
    """Run every (address, token, seed) bot; measure after `warmup` seconds and, if more, after
    `min_turns` turns (at most a minute more: e.g. a worker's first task, which imports)."""
    tasks = [asyncio.create_task(play(address, token, clock, seed, on_match_end))
             for address, token, seed in bots]
    try:
        await asyncio.sleep(warmup)
        for _ in range(600):
            if clock.turns >= min_turns:
                break
            await asyncio.sleep(0.1)
        failed = [t for t in tasks if t.done()]
        for t in failed[:3]:
            clock.errors.append(f"a bot stream ended: {t.exception()!r}")
        return await measure(clock, seconds, server_pids, db_pids() if db_pids else None)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# --- the floor: a bare relay --------------------------------------------------------------------
def turn_templates(count: int = 64) -> list[bot_pb2.Turn]:
    """Turns of a real match (observations of the seat to act), as the relay sends them."""
    import engine

    game, rng, turns = engine.Match(1, "soft"), random.Random(1), []
    while not game.is_over and len(turns) < count:
        seat = game.to_act
        if seat is None:
            break
        obs = wire.observation_to_pb(game.observe(seat))
        turns.append(bot_pb2.Turn(match_id=0, seat=seat, seq=len(turns), observation=obs,
                                  bank_left_ms=30000))
        game.apply(seat, rng.choice(game.legal_actions()))
    return turns


class Relay(bot_pb2_grpc.BotServiceServicer):
    """Bot `pair:seat` (its token) is sent a Turn each time the other seat of its pair answers."""

    def __init__(self) -> None:
        self.templates = turn_templates()
        self.outboxes: dict[tuple[int, int], asyncio.Queue[bot_pb2.PlayResponse]] = {}

    def turn(self, pair: int, seat: int, seq: int) -> bot_pb2.PlayResponse:
        turn = bot_pb2.Turn()
        turn.CopyFrom(self.templates[seq % len(self.templates)])
        turn.match_id, turn.seat, turn.seq = pair, seat, seq
        turn.deadline.GetCurrentTime()
        return bot_pb2.PlayResponse(turn=turn)

    async def Play(self, request_iterator, context):  # type: ignore[no-untyped-def]
        token = dict(context.invocation_metadata())["authorization"].split()[-1]
        pair, seat = (int(x) for x in token.split(":"))
        outbox: asyncio.Queue[bot_pb2.PlayResponse] = asyncio.Queue()
        self.outboxes[(pair, seat)] = outbox
        reader = asyncio.create_task(self.read(pair, seat, request_iterator))
        try:
            yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome())
            other = self.outboxes.get((pair, 1 - seat))
            if other is not None:  # both seats are here: the pair starts
                self.outboxes[(pair, 0)].put_nowait(self.turn(pair, 0, 0))
            while True:
                yield await outbox.get()
        finally:
            reader.cancel()
            self.outboxes.pop((pair, seat), None)

    async def read(self, pair: int, seat: int, requests) -> None:  # type: ignore[no-untyped-def]
        async for request in requests:
            if request.WhichOneof("message") == "action":
                other = self.outboxes.get((pair, 1 - seat))
                if other is not None:
                    other.put_nowait(self.turn(pair, 1 - seat, request.action.seq + 1))


def serve_floor(address: str) -> int:
    async def main() -> None:
        server = grpc.aio.server(options=[  # as bummerl's (BUMMERL_MAX_PENDING_CALLS)
            ("grpc.server.max_pending_requests", 20000),
            ("grpc.server.max_pending_requests_hard_limit", 20000)])
        bot_pb2_grpc.add_BotServiceServicer_to_server(Relay(), server)
        server.add_insecure_port(address)
        await server.start()
        await server.wait_for_termination()

    asyncio.run(main())
    return 0


# --- processes ----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command: list[str], env: dict[str, str], log: Path, address: str | None = None
          ) -> tuple[subprocess.Popen, str]:
    """Start a server process (`command` gets the address appended); wait until it serves.
    Another replica on the same `address` (gRPC listens with SO_REUSEPORT, so the kernel
    spreads new connections over the replicas) is waited for until its log says it listens."""
    if address is not None:
        with open(log, "ab") as out:
            proc = subprocess.Popen([*command, address], cwd=ROOT, stdout=out, stderr=out,
                                    env={**os.environ, "PYTHONPATH": str(ROOT), **env})
        for _ in range(1200):
            if "listening on" in log.read_text(errors="replace"):
                return proc, address
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        proc.kill()
        raise SystemExit(f"a replica did not start; see {log}")
    address = f"127.0.0.1:{free_port()}"
    with open(log, "ab") as out:
        proc = subprocess.Popen([*command, address], cwd=ROOT, stdout=out, stderr=out,
                                env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    with grpc.insecure_channel(address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=120)
        except grpc.FutureTimeoutError:
            proc.kill()
            raise SystemExit(f"the server did not start; see {log}") from None
    return proc, address


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def bummerl_command(profile: str | None) -> list[str]:
    if profile:
        return [sys.executable, __file__, "--serve-profiled", profile]
    return [sys.executable, "-m", "cli.main", "serve", "--address"]


@contextmanager
def database(kind: str, tmp: Path) -> Iterator[str]:
    """A fresh database URL: an SQLite file, or a new PostgreSQL database dropped after."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp / 'bench.sqlite3'}"
        return
    from workers.testing import fresh_postgres

    with fresh_postgres(POSTGRES) as url:
        yield url


def postgres_pids(url: str) -> list[int]:
    """Pids of the PostgreSQL backends connected to the database of `url` (if visible)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    engine = create_engine(POSTGRES)
    try:
        with engine.connect() as c:
            pids = [int(p) for p in c.execute(
                text("SELECT pid FROM pg_stat_activity WHERE datname = :d"), {"d": name}
            ).scalars()]
    finally:
        engine.dispose()
    return [p for p in pids if Path(f"/proc/{p}/stat").exists()]


def forfeits(url: str) -> tuple[int, int]:
    """(matches forfeited, matches played out) in the database of `url`."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as c:
            rows = dict(c.execute(text(
                "SELECT coalesce(end_reason, 'running'), count(*) FROM matches "
                "GROUP BY end_reason")).all())
    finally:
        engine.dispose()
    return (sum(v for k, v in rows.items() if k.startswith("forfeit")),
            rows.get("played", 0))


# --- the two measurements -------------------------------------------------------------------------
async def floor_run(n: int, seconds: float, warmup: float, log: Path) -> Figures:
    proc, address = start([sys.executable, __file__, "--serve-floor"], {}, log)
    try:
        clock = Clock()
        bots = [(address, f"{pair}:{seat}", pair * 2 + seat)
                for pair in range(n) for seat in (0, 1)]
        figures = await run_bots(bots, clock, warmup, seconds, [proc.pid])
    finally:
        stop(proc)
    if clock.errors:
        print("floor errors:", *clock.errors, sep="\n  ")
    return figures


def bummerl_env(url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"DATABASE_URL": url, "BUMMERL_OPERATOR_TOKEN": OPERATOR, "BUMMERL_HOOKS": "",
            **(extra or {})}


async def register_pairs(address: str, n: int, tag: str, house_id: int | None = None
                         ) -> tuple[list[tuple[int, int]], list[tuple[str, str, int]]]:
    """Register n pairs of remote bots (or n remote bots facing `house_id`) and create a match
    for each; the (bot0, bot1) ids and the bots to run."""
    pairs, bots = [], []
    async with grpc.aio.insecure_channel(address) as channel:
        bot_stub = bot_pb2_grpc.BotServiceStub(channel)
        match_stub = match_pb2_grpc.MatchServiceStub(channel)
        for pair in range(n):
            ids = []
            for seat in (0, 1) if house_id is None else (0,):
                reply = await bot_stub.RegisterBot(
                    bot_pb2.RegisterBotRequest(name=f"{tag}-{pair}-{seat}"), metadata=AUTH)
                ids.append(reply.bot.bot_id)
                bots.append((address, reply.token, pair * 2 + seat))
            if house_id is not None:
                ids.append(house_id)
            pairs.append((ids[0], ids[1]))
            await match_stub.CreateMatch(match_pb2.CreateMatchRequest(bot_ids=ids),
                                         metadata=AUTH)
    return pairs, bots


def rematch(address: str):  # type: ignore[no-untyped-def]
    """A match_ended callback: seat 0 starts the next match of its pair."""
    channel = grpc.aio.insecure_channel(address)
    stub = match_pb2_grpc.MatchServiceStub(channel)

    async def on_match_end(ended: bot_pb2.MatchEnded) -> None:
        if ended.seat == 0:
            await stub.CreateMatch(match_pb2.CreateMatchRequest(
                bot_ids=list(ended.match.bot_ids)), metadata=AUTH)

    return on_match_end, channel


async def bummerl_run(url: str, n: int, seconds: float, warmup: float, log: Path,
                      profile: str | None, kind: str, replicas: int = 1, redis: str = ""
                      ) -> tuple[Figures, list[str]]:
    # More than one replica: the same address, and the change bus on Redis between them.
    env = bummerl_env(url, {"BUMMERL_BUS_URL": redis} if replicas > 1 else None)
    proc, address = start(bummerl_command(profile), env, log)
    procs = [proc] + [start(bummerl_command(profile), env, log.with_suffix(f".{i}.log"),
                            address)[0] for i in range(1, replicas)]
    on_match_end, channel = rematch(address)
    try:
        _, bots = await register_pairs(address, n, f"b{n}")
        clock = Clock()
        def db_pids() -> list[int]:  # after the warm-up: the server's pool is open
            pids = postgres_pids(url)
            print(f"  db CPU: the {len(pids)} PostgreSQL backends of the bench's database "
                  "(from /proc)")
            return pids

        figures = await run_bots(bots, clock, warmup, seconds, [p.pid for p in procs],
                                 db_pids if kind == "postgres" else None, on_match_end)
    finally:
        await channel.close()
        for p in procs:
            stop(p)
    lost, played = forfeits(url)
    problems = list(clock.errors)
    if lost:
        problems.append(f"{lost} match(es) forfeited (time-out or illegal actions)")
    print(f"  bummerl: {played} matches played out, {lost} forfeited, "
          f"{clock.rejected} answers refused")
    return figures, problems


def broker_site(kind: str, tmp: Path, redis: str) -> dict[str, str]:
    """The environment that puts the service and the worker on the broker `kind`: "embedded"
    (a folder under tmp) or "redis" (a unique key prefix on `redis`)."""
    if kind == "embedded":
        return {"BUMMERL_BROKER_URL": "bummerlfs://", "BUMMERL_BROKER_DIR": str(tmp / "broker")}
    from workers.testing import redis_site

    return redis_site(redis)[1]


async def house_run(url: str, seconds: float, warmup: float, tmp: Path, broker: dict[str, str]
                    ) -> tuple[Figures, Figures, list[str]]:
    """A remote random bot vs a house random bot (a real worker on the broker of `broker`, an
    environment); and, as the peer, a remote vs remote match on the same server."""
    from workers import procs

    site = {**broker, "BUMMERL_HOUSE_TOKEN": HOUSE, "BUMMERL_BEAT_SCHEDULE": str(tmp / "beat"),
            "BUMMERL_LADDER_EVERY": "3600"}
    proc, address = start(bummerl_command(None),
                          bummerl_env(url, {**site, "BUMMERL_HOOKS": "workers.hooks:install"}),
                          tmp / "server.log")
    worker = procs.start_worker({"DATABASE_URL": url, **site,
                                 "BUMMERL_SERVICE_ADDRESS": address},
                                queues="moves", concurrency=1, logfile=tmp / "worker.log")
    on_match_end, channel = rematch(address)
    try:
        from db.base import make_session_factory
        from services.ops import bots as plain_bots

        sessions = make_session_factory(url)
        house, _ = plain_bots.register_bot("house-random", kind="house",
                                           house_strategy="random", sessions=sessions)
        sessions.kw["bind"].dispose()
        _, remote = await register_pairs(address, 1, "house-peer", house.id)
        clock = Clock()
        figures = await run_bots(remote, clock, warmup, seconds, [proc.pid],
                                 on_match_end=on_match_end, min_turns=20)
        _, pair = await register_pairs(address, 1, "remote-peer")
        peer_clock = Clock()
        peer = await run_bots(pair, peer_clock, min(warmup, 1.0), seconds, [proc.pid],
                              on_match_end=on_match_end)
    finally:
        await channel.close()
        procs.stop(worker)
        stop(proc)
    lost, _ = forfeits(url)
    problems = clock.errors + peer_clock.errors
    if lost:
        problems.append(f"{lost} match(es) forfeited")
    tasks = sorted(float(x) * 1000 for x in re.findall(
        r"Task bummerl\.move\[[^\]]+\] succeeded in ([0-9.]+)s", (tmp / "worker.log").read_text()))
    if tasks:
        print(f"  worker: {len(tasks)} move tasks, median {statistics.median(tasks):.2f} ms "
              "inside the task (choose, SubmitAction)")
    return figures, peer, problems


# --- printing -----------------------------------------------------------------------------------
def ratio(a: float, b: float) -> str:
    return f"{a / b:.3g}x" if b and b == b and a == a else "-"


def print_table(n: int, floor: Figures, ours: Figures, kind: str, replicas: int = 1) -> None:
    on = f"{replicas} replicas of bummerl (one address, change bus on Redis)" \
        if replicas > 1 else "bummerl"
    print(f"\nN = {n} matches ({2 * n} bot streams), {on} on {kind}; the floor is one process")
    print(f"{'':<9} {'actions/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'samples':>8} "
          f"{'server CPU ms/action':>21} {'client CPU ms/action':>21} {'client cores':>13}"
          + (f" {'db CPU ms/action':>17}" if kind == "postgres" else ""))
    for name, f in (("floor", floor), ("bummerl", ours)):
        print(f"{name:<9} {f.rate:>10.0f} {f.p50:>8.2f} {f.p99:>8.2f} {f.samples:>8} "
              f"{f.server_ms:>21.3f} {f.client_ms:>21.3f} {f.client_load:>13.2f}"
              + (f" {f.db_ms:>17.3f}" if kind == "postgres" and name == "bummerl" else
                 f" {'':>17}" if kind == "postgres" else ""))
    print("server's busiest thread (its event loop): " + "; ".join(
        f"{name} running {f.loop_running:.2f}, waiting for a CPU {f.loop_waiting:.2f}"
        for name, f in (("floor", floor), ("bummerl", ours))) + " of the time")
    print(f"{'bummerl/floor':<9} {ratio(ours.rate, floor.rate):>6} actions/s, "
          f"{ratio(ours.p50, floor.p50)} p50, {ratio(ours.p99, floor.p99)} p99, "
          f"{ratio(ours.server_ms, floor.server_ms)} server CPU per action "
          f"(targets: actions/s >= 0.25x, p99 <= 4x)", flush=True)


def serve_profiled(path: str, address: str) -> int:
    """Run the server with a cProfile (CPU time) per thread; on SIGTERM write the merged stats."""
    from services.api.server import serve

    profiles: list[cProfile.Profile] = []
    run = threading.Thread.run

    def profiled_run(self: threading.Thread) -> None:
        profile = cProfile.Profile(time.thread_time)  # CPU time: waits do not count
        profiles.append(profile)
        profile.runcall(run, self)

    threading.Thread.run = profiled_run  # type: ignore[method-assign]

    def dump(*_: object) -> None:
        stats = None
        for profile in list(profiles):
            profile.create_stats()
            if profile.stats:  # type: ignore[attr-defined]
                stats = pstats.Stats(profile) if stats is None else stats.add(profile)
        if stats is not None:
            stats.dump_stats(path)
        os._exit(0)

    signal.signal(signal.SIGTERM, dump)
    serve(address)
    return 0


async def one_round(args: argparse.Namespace, tmp: Path, url: str, floor_first: bool
                    ) -> tuple[Figures, Figures, list[str]]:
    """The floor's run and bummerl's, in that order or the other."""
    floor = floor_run(args.n, args.seconds, args.warmup, tmp / "floor.log")
    ours = bummerl_run(url, args.n, args.seconds, args.warmup, tmp / "server.log",
                       args.profile, args.db, args.replicas, args.redis)
    if floor_first:
        floor_figures = await floor
        ours_figures, problems = await ours
    else:
        ours_figures, problems = await ours
        floor_figures = await floor
    return floor_figures, ours_figures, problems


async def house_rounds(args: argparse.Namespace) -> int:
    """--house: each round a run on each broker (alternating which goes first), then the
    medians over the rounds and the ratio embedded/Redis."""
    print(f"house bench: {args.rounds} round(s), each a run on the embedded broker and one on "
          f"Redis ({args.redis}); {args.seconds:g} s measured after {args.warmup:g} s warm-up; "
          f"bummerl on {args.db}", flush=True)
    print("\nremote random bot vs house random bot (real Celery worker, house moves over "
          "gRPC); time from the remote bot's answer to its next turn, ms:")
    print(f"{'round':<6} {'broker':<9} {'house p50':>10} {'house p95':>10} {'samples':>8} "
          f"{'peer p50':>9}  (peer: remote vs remote, same server)")
    runs: dict[str, list[tuple[Figures, Figures]]] = {"embedded": [], "redis": []}
    for number in range(args.rounds):
        order = ("embedded", "redis") if number % 2 == 0 else ("redis", "embedded")
        for kind in order:
            with tempfile.TemporaryDirectory() as name, database(args.db, Path(name)) as url:
                tmp = Path(name)
                ours, peer, problems = await house_run(
                    url, args.seconds, args.warmup, tmp, broker_site(kind, tmp, args.redis))
                print(f"{number + 1:<6} {kind:<9} {ours.p50:>10.2f} {ours.p95:>10.2f} "
                      f"{ours.samples:>8} {peer.p50:>9.2f}", flush=True)
                if problems:
                    print("problems:", *problems, sep="\n  ")
                    return 1
                runs[kind].append((ours, peer))
    medians = {kind: statistics.median(ours.p50 for ours, _ in r) for kind, r in runs.items()}
    p95s = {kind: statistics.median(ours.p95 for ours, _ in r) for kind, r in runs.items()}
    print(f"\nmedian of {args.rounds} round(s): embedded house p50 {medians['embedded']:.2f} ms "
          f"(p95 {p95s['embedded']:.2f}), Redis house p50 {medians['redis']:.2f} ms (p95 "
          f"{p95s['redis']:.2f}); embedded/Redis {ratio(medians['embedded'], medians['redis'])} "
          f"p50, {ratio(p95s['embedded'], p95s['redis'])} p95 (targets: embedded p50 <= 15 ms, "
          "either broker <= 20 ms)", flush=True)
    return 0


def print_rounds(rounds: list[tuple[Figures, Figures]]) -> None:
    """The ratios of each round and their medians: on a shared machine the floor moves from
    minute to minute, and the median of rounds taken in alternating order is steadier than one
    round."""
    rates = [ours.rate / floor.rate for floor, ours in rounds]
    p99s = [ours.p99 / floor.p99 for floor, ours in rounds]
    print(f"\n{len(rounds)} rounds (floor and bummerl in alternating order): actions/s "
          + ", ".join(f"{r:.3g}x" for r in rates) + "; p99 " + ", ".join(f"{r:.3g}x" for r in p99s))
    print(f"median of {len(rounds)} rounds: {statistics.median(rates):.3g}x actions/s, "
          f"{statistics.median(p99s):.3g}x p99 (targets: actions/s >= 0.25x, p99 <= 4x)",
          flush=True)


async def main_async(args: argparse.Namespace) -> int:
    if args.house:
        return await house_rounds(args)
    rounds: list[tuple[Figures, Figures]] = []
    for number in range(args.rounds):
        with tempfile.TemporaryDirectory() as name, database(args.db, Path(name)) as url:
            tmp = Path(name)
            of = f", round {number + 1} of {args.rounds}" if args.rounds > 1 else ""
            print(f"service bench{of}: {args.seconds:g} s measured after {args.warmup:g} s "
                  f"warm-up; bummerl on {args.db}; server logs in {tmp} (deleted after)",
                  flush=True)
            floor, ours, problems = await one_round(args, tmp, url, number % 2 == 0)
            print_table(args.n, floor, ours, args.db, args.replicas)
            if problems:
                print("problems:", *problems, sep="\n  ")
                return 1
            rounds.append((floor, ours))
    if len(rounds) > 1:
        print_rounds(rounds)
    return 0


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--serve-floor":
        return serve_floor(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-profiled":
        return serve_profiled(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite",
                        help="bummerl's database: a fresh SQLite file or PostgreSQL database")
    parser.add_argument("-n", type=int, default=50, help="matches at once (default 50)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time (default 5)")
    parser.add_argument("--warmup", type=float, default=2.0,
                        help="seconds of play before measuring (default 2)")
    parser.add_argument("--house", action="store_true",
                        help="remote bot vs house bot on a real worker (needs Redis)")
    parser.add_argument("--redis", default=os.environ.get(
        "BUMMERL_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="Redis for --house (keys under a unique prefix) and the change bus of --replicas")
    parser.add_argument("--replicas", type=int, default=1,
                        help="bummerl service processes on the one address (default 1; more "
                        "share the database and talk over the change bus on --redis)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of the floor's run and bummerl's, in alternating order, "
                        "each on a fresh database; prints each and the medians (default 1)")
    parser.add_argument("--profile", metavar="FILE", default=None,
                        help="run the bummerl server under cProfile; write its stats to FILE")
    args = parser.parse_args()
    with suppress(KeyboardInterrupt):
        return asyncio.run(main_async(args))
    return 130


if __name__ == "__main__":
    sys.exit(main())
