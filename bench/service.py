"""Benchmark of the engine service: N concurrent matches, each between two bot clients (the
client kit with random bots) connected over the Play stream, for a few seconds per N.

Prints, for N = 1, 10, 50: actions applied per second, and the p50/p99 action round-trip
latency: from a bot queueing its answer to the next turn of that match reaching a bot (so the
submit, the engine, the database commit and the next observation, over gRPC).

The server runs in its own process (`bummerl serve`) on a fresh SQLite file, or on the
database given with --database-url (e.g. PostgreSQL).

    .venv/bin/python bench/service.py [--seconds 4] [--sizes 1 10 50]

With --profile FILE the server runs under cProfile (every thread) and writes the merged
statistics to FILE when it stops: `python -m pstats FILE`, then e.g. `sort tottime`, `stats 30`.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc  # noqa: E402

from client import Runner  # noqa: E402
from examples.random_bot import RandomBot  # noqa: E402

OPERATOR = "bench-operator"
AUTH = (("authorization", f"Bearer {OPERATOR}"),)


class Clock:
    """Round-trip times: answer queued for a match → next turn of that match received."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: dict[int, float] = {}
        self.samples: list[float] = []
        self.answers = 0
        self.recording = False

    def answered(self, match_id: int) -> None:
        with self.lock:
            self.sent[match_id] = time.perf_counter()
            if self.recording:
                self.answers += 1

    def turn(self, match_id: int) -> None:
        now = time.perf_counter()
        with self.lock:
            start = self.sent.pop(match_id, None)
            if start is not None and self.recording:
                self.samples.append(now - start)


class BenchRunner(Runner):
    def __init__(self, clock: Clock, on_match_end, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.clock = clock
        self.on_match_end = on_match_end

    def on_turn(self, turn: bot_pb2.Turn) -> None:
        self.clock.turn(turn.match_id)

    def on_answer(self, turn: bot_pb2.Turn) -> None:
        self.clock.answered(turn.match_id)

    def _match_ended(self, ended: bot_pb2.MatchEnded) -> None:
        super()._match_ended(ended)
        if ended.seat == 0:
            self.on_match_end()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(database_url: str, profile: str | None = None
                 ) -> tuple[subprocess.Popen[bytes], str]:
    address = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "DATABASE_URL": database_url, "BUMMERL_OPERATOR_TOKEN": OPERATOR,
           "BUMMERL_HOOKS": "", "BUMMERL_MOVE_MS": "20000", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "cli.main", "serve", "--address", address]
    if profile:
        command = [sys.executable, __file__, "--serve-profiled", address, profile]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=60)
    return server, address


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process `pid` used so far (Linux /proc; else nan)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_size(address: str, n: int, seconds: float, tag: str, server_pid: int
             ) -> tuple[float, float, float, int, float]:
    channel = grpc.insecure_channel(address)
    bots = bot_pb2_grpc.BotServiceStub(channel)
    matches = match_pb2_grpc.MatchServiceStub(channel)
    clock = Clock()
    runners: list[BenchRunner] = []
    stop = threading.Event()
    for pair in range(n):
        ids, tokens = [], []
        for seat in (0, 1):
            reply = bots.RegisterBot(bot_pb2.RegisterBotRequest(name=f"{tag}-{pair}-{seat}"),
                                     metadata=AUTH)
            ids.append(reply.bot.bot_id)
            tokens.append(reply.token)

        def new_match(ids: list[int] = ids) -> None:
            if not stop.is_set():
                matches.CreateMatch(match_pb2.CreateMatchRequest(bot_ids=ids), metadata=AUTH)

        new_match()
        for seat in (0, 1):
            runners.append(BenchRunner(clock, new_match, RandomBot(pair * 2 + seat), address,
                                       tokens[seat]))
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for t in threads:
        t.start()
    time.sleep(min(1.0, seconds / 4))  # warm up: connect, first turns
    with clock.lock:
        clock.recording = True
        clock.samples.clear()
    started = time.perf_counter()
    cpu_started = cpu_seconds(server_pid)
    time.sleep(seconds)
    with clock.lock:
        clock.recording = False
        elapsed = time.perf_counter() - started
        samples = sorted(clock.samples)
        answers = clock.answers
    server_cpu = cpu_seconds(server_pid) - cpu_started
    stop.set()
    for r in runners:
        r.stop()
    for t in threads:
        t.join(5)
    channel.close()
    if not samples:
        return 0.0, float("nan"), float("nan"), 0, float("nan")
    p50 = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    cpu_per_action = server_cpu / answers * 1000 if answers else float("nan")
    return answers / elapsed, p50 * 1000, p99 * 1000, len(samples), cpu_per_action


def serve_profiled(address: str, path: str) -> int:
    """Run the server with a cProfile (CPU time) per thread; on SIGTERM write the merged stats."""
    from services.server import serve

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


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-profiled":
        return serve_profiled(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="measured time per N")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--database-url", default=None,
                        help="database of the server (default: a fresh SQLite file)")
    parser.add_argument("--profile", metavar="FILE", default=None,
                        help="run the server under cProfile; write its stats to FILE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        server, address = start_server(url, args.profile)
        try:
            kind = url.split(":", 1)[0]
            print(f"service bench on {kind}, {args.seconds:g} s per N "
                  "(N matches at once, 2N bot clients)")
            print(f"{'N':>4} {'actions/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'samples':>8} "
                  f"{'server CPU ms/action':>21}")
            for n in args.sizes:
                rate, p50, p99, count, cpu = run_size(
                    address, n, args.seconds, f"b{n}-{os.getpid()}", server.pid)
                print(f"{n:>4} {rate:>10.0f} {p50:>8.1f} {p99:>8.1f} {count:>8} {cpu:>21.2f}",
                      flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
