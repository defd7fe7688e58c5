"""A crowd of connected bots on one replica: what idle Play streams cost, and a reconnect storm.

    .venv/bin/python bench/crowd.py [--db sqlite|postgres] [--sizes 1000,5000,10000]
        [--matches 20] [--seconds 15] [--clients 4]

For each crowd size K, a fresh `bummerl serve` process on the same database (SQLite file or a
fresh PostgreSQL database), K registered bots each holding one Play stream on a connection of
its own (grpc.aio, spread over `--clients` client processes; `--per-connection N` puts N
streams on one connection), and `--matches` matches played by 2 x matches bots of this process
with a think time of 50-500 ms per move (a long time control: no time-outs). It prints, per K:

- **RSS per stream**: the server's resident memory with the crowd connected minus before it,
  over K.
- **idle CPU**: the server's CPU while the crowd is connected and the matches' bots hold their
  answers (heartbeats, safety nets, presence and revocation checks), minus the same with no
  crowd just before it, as % of a core per 1,000 bots (the target: under 1 %).
- **open**: the time to welcome the K streams opened 100 at a time (the rate, per second).
- **turn latency** of the playing matches (from an answer to the next turn of that match) with
  the crowd connected, beside the same matches with no crowd: before the crowd opens and after
  it is dropped (the peer is the median of the two), and the ratio of the p99s (the target at
  K = 5,000: within 1.5x).
- **storm**: every crowd connection is closed at once and all K reopened at once: the time
  until all are welcomed (the target at K = 5,000: under 5 s), and the streams that failed,
  by status code and message (the target: none).

The server's file descriptors bound K: each connection is one; the bench raises its soft
limit (`ulimit -n`) to the hard one, which its children inherit, and says so. The bench exits
with status 1 if any stream of the crowd or the storm failed.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import service as svc  # noqa: E402  (bench/service.py: processes and measuring)
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc  # noqa: E402

LONG = {"BUMMERL_MOVE_MS": "600000", "BUMMERL_BANK_MS": "3600000"}  # no time-outs while paused
OPEN_WAIT_S = 180.0  # the longest a stream may wait for its Welcome


def raise_fd_limit() -> tuple[int, int]:
    """Raise this process's soft limit of open files to its hard limit; (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


# --- the crowd: idle bots in client processes ---------------------------------------------------
class Crowd:
    """Idle Play streams of one client process: opened, held, dropped."""

    def __init__(self, address: str, tokens: list[str], per_connection: int) -> None:
        self.address = address
        self.tokens = tokens
        self.per_connection = per_connection
        self.channels: list[grpc.aio.Channel] = []
        self.tasks: list[asyncio.Task[None]] = []

    def _channel(self, index: int) -> grpc.aio.Channel:
        if index % self.per_connection == 0:  # a connection of its own (no shared subchannel)
            self.channels.append(grpc.aio.insecure_channel(
                self.address, options=[("grpc.use_local_subchannel_pool", 1)]))
        return self.channels[-1]

    async def _hold(self, channel: grpc.aio.Channel, token: str,
                    welcomed: asyncio.Future[tuple[str, float]]) -> None:
        started = time.perf_counter()
        try:
            call = bot_pb2_grpc.BotServiceStub(channel).Play(
                metadata=(("authorization", f"Bearer {token}"),))
            await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="crowd")))
            async for message in call:
                if not welcomed.done():
                    kind = message.WhichOneof("message")
                    welcomed.set_result(("OK" if kind == "welcome" else f"first: {kind}",
                                         time.perf_counter() - started))
            if not welcomed.done():
                welcomed.set_result(("ended before a Welcome", 0.0))
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as e:
            if not welcomed.done():
                welcomed.set_result((f"{e.code().name}: {e.details()}", 0.0))
        except Exception as e:  # noqa: BLE001  (reported, not raised)
            if not welcomed.done():
                welcomed.set_result((repr(e), 0.0))

    async def open(self, batch: int) -> dict[str, Any]:
        """Open every stream, `batch` at a time (0: all at once); when each was welcomed."""
        loop = asyncio.get_running_loop()
        outcomes: Counter[str] = Counter()
        waits: list[float] = []
        start = time.time()
        step = batch or len(self.tokens)
        for first in range(0, len(self.tokens), step):
            futures = []
            for index in range(first, min(first + step, len(self.tokens))):
                welcomed: asyncio.Future[tuple[str, float]] = loop.create_future()
                self.tasks.append(asyncio.create_task(
                    self._hold(self._channel(index), self.tokens[index], welcomed)))
                futures.append(welcomed)
            done, pending = await asyncio.wait(futures, timeout=OPEN_WAIT_S)
            for f in done:
                outcome, wait = f.result()
                outcomes[outcome] += 1
                if outcome == "OK":
                    waits.append(wait)
            if pending:
                outcomes["no Welcome within the time-out"] += len(pending)
        return {"start": start, "end": time.time(), "outcomes": dict(outcomes),
                "waits": waits, "cpu": svc.own_cpu()}

    async def drop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await asyncio.gather(*(c.close() for c in self.channels), return_exceptions=True)
        self.tasks, self.channels = [], []


def crowd_process(address: str, tokens: list[str], per_connection: int, conn: Any) -> None:
    """A client process: commands ("open", batch), ("drop", None), ("stop", None) on `conn`."""
    raise_fd_limit()

    async def main() -> None:
        crowd = Crowd(address, tokens, per_connection)
        loop = asyncio.get_running_loop()
        while True:
            command, arg = await loop.run_in_executor(None, conn.recv)
            if command == "open":
                conn.send(await crowd.open(arg))
            elif command == "drop":
                await crowd.drop()
                conn.send({"cpu": svc.own_cpu()})
            else:
                await crowd.drop()
                conn.send({})
                return

    asyncio.run(main())


class Clients:
    """The client processes of the crowd, commanded together."""

    def __init__(self, address: str, tokens: list[str], processes: int,
                 per_connection: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.conns, self.procs = [], []
        for i in range(processes):
            mine = tokens[i::processes]
            if not mine:
                continue
            parent, child = context.Pipe()
            proc = context.Process(target=crowd_process,
                                   args=(address, mine, per_connection, child), daemon=True)
            proc.start()
            self.conns.append(parent)
            self.procs.append(proc)

    async def ask(self, command: str, arg: Any = None) -> list[dict[str, Any]]:
        for conn in self.conns:
            conn.send((command, arg))
        loop = asyncio.get_running_loop()
        return list(await asyncio.gather(*(loop.run_in_executor(None, c.recv)
                                           for c in self.conns)))

    async def open(self, batch: int) -> dict[str, Any]:
        # `batch` at a time in all: each process opens its share of it at a time
        answers = await self.ask("open", max(1, batch // len(self.conns)) if batch else 0)
        outcomes: Counter[str] = Counter()
        waits: list[float] = []
        for a in answers:
            outcomes.update(a["outcomes"])
            waits.extend(a["waits"])
        waits.sort()
        return {"seconds": max(a["end"] for a in answers) - min(a["start"] for a in answers),
                "outcomes": outcomes, "p50": svc.percentile(waits, 0.5),
                "p99": svc.percentile(waits, 0.99)}

    async def close(self) -> None:
        await self.ask("stop")
        for proc in self.procs:
            proc.join(timeout=10)


# --- the playing matches ------------------------------------------------------------------------
class Players:
    """2 x `matches` bots of this process playing with a think time; `paused` holds answers."""

    def __init__(self, address: str, tokens: list[tuple[str, int]], seed: int = 1) -> None:
        self.address = address
        self.tokens = tokens
        self.rng = random.Random(seed)
        self.clock = svc.Clock()
        self.go = asyncio.Event()
        self.go.set()
        self.tasks: list[asyncio.Task[None]] = []
        self.thinking: set[asyncio.Task[None]] = set()
        self.writing: dict[int, asyncio.Lock] = {}  # id of a call -> its writes' lock
        self.channel = grpc.aio.insecure_channel(address)
        self.matches = match_pb2_grpc.MatchServiceStub(self.channel)

    async def _play(self, token: str) -> None:
        try:
            await self._play_stream(token)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001  (reported with the figures)
            detail = f"{e.code().name}: {e.details()}" if isinstance(e, grpc.aio.AioRpcError) \
                else repr(e)
            self.clock.errors.append(f"a player's stream ended: {detail}")

    async def _play_stream(self, token: str) -> None:
        async with grpc.aio.insecure_channel(
                self.address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
            call = bot_pb2_grpc.BotServiceStub(channel).Play(
                metadata=(("authorization", f"Bearer {token}"),))
            await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="crowd-player")))
            async for message in call:
                kind = message.WhichOneof("message")
                if kind == "turn":  # thought over on a task of its own: the reading goes on
                    self.clock.turn(message.turn.match_id)
                    thinking = asyncio.create_task(self._answer(call, message.turn))
                    self.thinking.add(thinking)
                    thinking.add_done_callback(self.thinking.discard)
                elif kind == "rejected":
                    self.clock.rejected += 1
                elif kind == "match_ended" and message.match_ended.seat == 0:
                    await self.matches.CreateMatch(match_pb2.CreateMatchRequest(
                        bot_ids=list(message.match_ended.match.bot_ids)), metadata=svc.AUTH)

    async def _answer(self, call: Any, turn: bot_pb2.Turn) -> None:
        await asyncio.sleep(self.rng.uniform(0.05, 0.5))  # thinking
        await self.go.wait()
        if call.done():  # the stream ended meanwhile (reported by `_play`)
            return
        # one write at a time on a call (a bot thinking over two matches at once)
        async with self.writing.setdefault(id(call), asyncio.Lock()):
            try:
                # guessable, and harmless: request ids are per seat (issue 44)
                await call.write(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
                    match_id=turn.match_id, seq=turn.seq,
                    action=self.rng.choice(turn.observation.legal_actions),
                    request_id=f"{turn.match_id}:{turn.seq}")))
            except Exception as e:  # noqa: BLE001  (reported with the figures)
                self.clock.errors.append(f"a player's answer was not sent: {e!r}"[:200])
                return
        self.clock.answered(turn.match_id)

    async def start(self, pairs: list[tuple[int, int]]) -> None:
        self.tasks = [asyncio.create_task(self._play(token)) for token, _ in self.tokens]
        await asyncio.sleep(1.0)
        for pair in pairs:
            await self.matches.CreateMatch(match_pb2.CreateMatchRequest(bot_ids=list(pair)),
                                           metadata=svc.AUTH)

    async def measure(self, seconds: float) -> tuple[float, float, int]:
        """(p50 ms, p99 ms, samples) of the turn latency over `seconds`."""
        self.clock.gaps, self.clock.recording = [], True
        await asyncio.sleep(seconds)
        self.clock.recording = False
        gaps = sorted(self.clock.gaps)
        return (svc.percentile(gaps, 0.5) * 1000, svc.percentile(gaps, 0.99) * 1000, len(gaps))

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.channel.close()


async def floor_storm(k: int, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    """The peer of the storm: the same K streams opened at once, dropped and reopened at once,
    on a bare grpc.aio relay (bench/service.py's floor: no rules, no database)."""
    proc, address = svc.start([sys.executable, str(ROOT / "bench" / "service.py"),
                               "--serve-floor"], {}, log)
    clients = Clients(address, [f"{i}:0" for i in range(k)], args.clients, args.per_connection)
    try:
        await clients.open(0)
        await clients.ask("drop")
        await asyncio.sleep(3.0)
        return await clients.open(0)
    finally:
        await clients.close()
        svc.stop(proc)


# --- one crowd size -----------------------------------------------------------------------------
async def register(address: str, count: int, tag: str) -> list[tuple[str, int]]:
    """Register `count` bots, 50 at a time; their (token, id)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = bot_pb2_grpc.BotServiceStub(channel)
        out: list[tuple[str, int]] = []
        for first in range(0, count, 50):
            replies = await asyncio.gather(*(
                stub.RegisterBot(bot_pb2.RegisterBotRequest(name=f"{tag}-{i}"),
                                 metadata=svc.AUTH)
                for i in range(first, min(count, first + 50))))
            out.extend((r.token, r.bot.bot_id) for r in replies)
        return out


async def idle_cpu(pid: int, seconds: float) -> float:
    """The server's CPU over `seconds`, in cores."""
    cpu0, t0 = svc.cpu_seconds(pid), time.perf_counter()
    await asyncio.sleep(seconds)
    return (svc.cpu_seconds(pid) - cpu0) / (time.perf_counter() - t0)


async def one_size(k: int, url: str, env: dict[str, str], log: Path,
                   crowd_tokens: list[str], players: list[tuple[str, int]],
                   args: argparse.Namespace) -> dict[str, Any]:
    proc, address = svc.start(svc.bummerl_command(None), env, log)
    figures: dict[str, Any] = {"K": k, "load": os.getloadavg()[0]}
    clients = Clients(address, crowd_tokens[:k], args.clients, args.per_connection)
    play = Players(address, players)
    try:
        pairs = [(players[2 * i][1], players[2 * i + 1][1]) for i in range(args.matches)]
        await play.start(pairs)
        await asyncio.sleep(2.0)
        base_before = await play.measure(args.seconds)
        play.go.clear()  # the players hold their answers: the server is idle
        await asyncio.sleep(1.0)
        figures["cpu_none"] = await idle_cpu(proc.pid, args.idle_seconds)
        rss0, fds0 = rss_bytes(proc.pid), open_fds(proc.pid)

        opened = await clients.open(100)
        figures["open"] = opened
        await asyncio.sleep(3.0)
        figures["rss_per_stream"] = (rss_bytes(proc.pid) - rss0) / k
        figures["fds"] = open_fds(proc.pid) - fds0
        figures["cpu_crowd"] = await idle_cpu(proc.pid, args.idle_seconds)
        play.go.set()
        await asyncio.sleep(1.0)
        figures["crowd"] = await play.measure(args.seconds)

        await clients.ask("drop")  # every connection closed at once ...
        await asyncio.sleep(3.0)
        figures["storm"] = await clients.open(0)  # ... and all reopened at once
        figures["after_storm"] = await play.measure(args.seconds / 2)

        await clients.ask("drop")
        await asyncio.sleep(3.0)
        base_after = await play.measure(args.seconds)
        figures["base"] = (base_before, base_after)
        figures["rejected"] = play.clock.rejected
        figures["player_errors"] = list(play.clock.errors)
        figures["floor_storm"] = await floor_storm(k, args, log.with_suffix(".floor.log"))
    finally:
        await play.stop()
        await clients.close()
        svc.stop(proc)
    return figures


def report(f: dict[str, Any]) -> list[str]:
    """Print the figures of one crowd size; the problems found."""
    k = f["K"]
    per_k = (f["cpu_crowd"] - f["cpu_none"]) / (k / 1000) * 100
    opened, storm = f["open"], f["storm"]
    (b0p50, b0p99, b0n), (b1p50, b1p99, b1n) = f["base"]
    cp50, cp99, cn = f["crowd"]
    bp50, bp99 = statistics.median((b0p50, b1p50)), statistics.median((b0p99, b1p99))
    print(f"\nK = {k:,} idle bots (one Play stream each), {f['fds']:,} more fds in the server "
          f"(load average {f['load']:.1f} on {os.cpu_count()} cores)")
    print(f"  server RSS per stream     {f['rss_per_stream'] / 1024:8.1f} KiB")
    print(f"  server idle CPU           {f['cpu_crowd'] * 100:8.2f} % of a core with the crowd,"
          f" {f['cpu_none'] * 100:.2f} % without: {per_k:.2f} % per 1,000 bots "
          f"(target < 1 %: {per_k / 1:.2f}x)")
    print(f"  open, 100 at a time       {opened['seconds']:8.2f} s "
          f"({k / opened['seconds']:,.0f} streams/s; Welcome p50 {opened['p50'] * 1000:.0f} ms, "
          f"p99 {opened['p99'] * 1000:.0f} ms)")
    print(f"  turn latency, crowd       p50 {cp50:7.1f} ms  p99 {cp99:7.1f} ms  ({cn} turns)")
    print(f"  turn latency, no crowd    p50 {bp50:7.1f} ms  p99 {bp99:7.1f} ms  (before: "
          f"{b0p50:.1f}/{b0p99:.1f}, {b0n} turns; after: {b1p50:.1f}/{b1p99:.1f}, {b1n} turns)")
    print(f"  p99 crowd / no crowd      {cp99 / bp99:8.2f}x (target at 5,000: <= 1.5x)")
    fs = f["floor_storm"]
    print(f"  storm on the floor        {fs['seconds']:8.2f} s (a bare grpc.aio relay, same "
          f"clients; bummerl / floor {storm['seconds'] / fs['seconds']:.2f}x; "
          f"{fs['outcomes'].get('OK', 0):,} welcomed)")
    sp50, sp99, sn = f["after_storm"]
    print(f"  storm: all {k:,} reopened {storm['seconds']:8.2f} s "
          f"({k / storm['seconds']:,.0f} streams/s; Welcome p50 {storm['p50'] * 1000:.0f} ms, "
          f"p99 {storm['p99'] * 1000:.0f} ms; target at 5,000: < 5 s: "
          f"{storm['seconds'] / 5:.2f}x)")
    print(f"  turn latency after storm  p50 {sp50:7.1f} ms  p99 {sp99:7.1f} ms  ({sn} turns)")
    problems = []
    for name, run in (("open", opened), ("storm", storm)):
        bad = {o: n for o, n in run["outcomes"].items() if o != "OK"}
        print(f"  {name}: {run['outcomes'].get('OK', 0):,} welcomed"
              + "".join(f"; {n:,} {o}" for o, n in sorted(bad.items())))
        problems.extend(f"K={k} {name}: {n} {o}" for o, n in bad.items())
    if f["rejected"]:
        problems.append(f"K={k}: {f['rejected']} answers refused")
    problems.extend(f"K={k}: {e}" for e in sorted(set(f["player_errors"])))
    return problems


async def main_async(args: argparse.Namespace) -> int:
    soft, hard = raise_fd_limit()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"open files (ulimit -n): {soft:,} (hard {hard:,}); the server needs one per "
          f"connection: K up to about {soft - 200:,} with one stream per connection")
    if max(sizes) // args.per_connection > soft - 200:
        raise SystemExit(f"K = {max(sizes):,} needs more open files than {soft:,}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        with svc.database(args.db, tmp) as url:
            env = svc.bummerl_env(url, LONG)
            proc, address = svc.start(svc.bummerl_command(None), env, tmp / "register.log")
            try:
                t0 = time.perf_counter()
                crowd = await register(address, max(sizes), "crowd")
                players = await register(address, 2 * args.matches * len(sizes), "player")
                print(f"{len(crowd) + len(players):,} bots registered in "
                      f"{time.perf_counter() - t0:.1f} s")
            finally:
                svc.stop(proc)
            print(f"{args.db}; {args.matches} matches played at 50-500 ms a move; crowd over "
                  f"{args.clients} client processes, {args.per_connection} stream(s) per "
                  f"connection; {args.seconds:g} s per latency window, "
                  f"{args.idle_seconds:g} s per idle window")
            problems: list[str] = []
            for i, k in enumerate(sizes):  # fresh players: no match left from the size before
                mine = players[2 * args.matches * i:2 * args.matches * (i + 1)]
                f = await one_size(k, url, env, tmp / f"server-{k}.log",
                                   [t for t, _ in crowd], mine, args)
                problems.extend(report(f))
    if problems:
        print("\nproblems:", *problems, sep="\n  ")
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--sizes", default="1000,5000,10000", help="crowd sizes K")
    parser.add_argument("--matches", type=int, default=20, help="matches played (default 20)")
    parser.add_argument("--seconds", type=float, default=15.0, help="each latency window")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="each idle window")
    parser.add_argument("--clients", type=int, default=4, help="crowd client processes")
    parser.add_argument("--per-connection", type=int, default=1,
                        help="crowd streams per connection (default 1: a connection per bot)")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
