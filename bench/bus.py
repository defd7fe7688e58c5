"""What the change bus costs each replica as replicas are added.

    .venv/bin/python bench/bus.py [--replicas 1,2,3] [--matches 10] [--seconds 10]
        [--think-ms 20] [--redis redis://127.0.0.1:6379/0]

For each R in `--replicas`: R `bummerl serve` processes, each on an address of its own, sharing
a fresh PostgreSQL database (127.0.0.1:5432, `BUMMERL_BENCH_POSTGRES_URL`) and the change bus
on `--redis`. Each replica gets `--matches` matches whose two bots (this process's asyncio
clients, answering after `--think-ms`) are both connected to it: no match needs the bus. It
prints per replica: its own actions per second, the changes it heard on the bus per second
(its `bummerl_bus_received_total`, scraped from its metrics port) and their ratio to its own
actions, the bus channels it listens to, and its CPU per own action beside the same figure of
the R = 1 run (the peer: one replica, which hears nothing), with the ratio.

If each replica hears every change of the site, what it hears grows with R - 1 times its own
actions and its CPU per own action grows with it: at R replicas of A actions/s each, each
hears (R - 1) x A changes/s (the bench prints that arithmetic for 10 and 100 replicas). Routed
per match and bot (`services.live.bus`), a replica hears only the changes of the matches and
bots it serves.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import service as svc  # noqa: E402  (bench/service.py: processes and measuring)
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc  # noqa: E402


def scrape(port: int, name: str) -> float:
    """The value of the metric `name` (summed over its labels) on the metrics port `port`."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? ([0-9.e+-]+)$", text,
                                            re.M))


class Replica:
    def __init__(self, proc, address: str, metrics_port: int) -> None:  # type: ignore[no-untyped-def]
        self.proc, self.address, self.metrics_port = proc, address, metrics_port
        self.answers = 0


async def play(replica: Replica, token: str, think: float, rng: random.Random,
               recording: list[bool]) -> None:
    async with grpc.aio.insecure_channel(replica.address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        call = bot_pb2_grpc.BotServiceStub(channel).Play(
            metadata=(("authorization", f"Bearer {token}"),))
        await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="bus-bench")))
        async for message in call:
            kind = message.WhichOneof("message")
            if kind == "turn":
                await asyncio.sleep(think)
                turn = message.turn
                await call.write(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
                    match_id=turn.match_id, seq=turn.seq,
                    action=rng.choice(turn.observation.legal_actions))))
                if recording[0]:
                    replica.answers += 1
            elif kind == "match_ended" and message.match_ended.seat == 0:
                await stub.CreateMatch(match_pb2.CreateMatchRequest(
                    bot_ids=list(message.match_ended.match.bot_ids)), metadata=svc.AUTH)


async def one_run(r: int, url: str, redis: str, args: argparse.Namespace, tmp: Path
                  ) -> list[dict[str, float]]:
    replicas: list[Replica] = []
    try:
        for i in range(r):  # one after the other: the first applies the migrations
            port = svc.free_port()
            env = svc.bummerl_env(url, {"BUMMERL_BUS_URL": redis,
                                        "BUMMERL_METRICS_PORT": str(port)})
            proc, address = svc.start(svc.bummerl_command(None), env, tmp / f"r{r}-{i}.log")
            replicas.append(Replica(proc, address, port))
        rng, recording = random.Random(r), [False]
        tasks = []
        for i, replica in enumerate(replicas):
            pairs, bots = await svc.register_pairs(replica.address, args.matches, f"r{r}-{i}")
            del pairs
            tasks += [asyncio.create_task(play(replica, token, args.think_ms / 1000, rng,
                                               recording)) for _, token, _ in bots]
        await asyncio.sleep(args.warmup)
        heard0 = [scrape(p.metrics_port, "bummerl_bus_received_total") for p in replicas]
        cpu0 = [svc.cpu_seconds(p.proc.pid) for p in replicas]
        t0, recording[0] = time.perf_counter(), True
        await asyncio.sleep(args.seconds)
        recording[0], elapsed = False, time.perf_counter() - t0
        out = []
        for i, p in enumerate(replicas):
            out.append({
                "own": p.answers / elapsed,
                "heard": (scrape(p.metrics_port, "bummerl_bus_received_total") - heard0[i])
                / elapsed,
                "channels": scrape(p.metrics_port, "bummerl_bus_channels"),
                "cpu_ms": (svc.cpu_seconds(p.proc.pid) - cpu0[i]) / max(p.answers, 1) * 1000,
            })
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return out
    finally:
        for p in replicas:
            svc.stop(p.proc)


async def main_async(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in args.replicas.split(",")]
    print(f"PostgreSQL, bus on {args.redis}; {args.matches} matches per replica, both bots on "
          f"it, {args.think_ms:g} ms per move; {args.seconds:g} s measured")
    print(f"{'R':>2} {'replica':>7} {'own actions/s':>14} {'heard/s':>9} {'heard/own':>10} "
          f"{'channels':>9} {'CPU ms/own action':>18} {'vs R=1':>7}")
    peer = float("nan")
    with tempfile.TemporaryDirectory() as tmp_name:
        for r in sizes:
            with svc.database("postgres", Path(tmp_name)) as url:
                rows = await one_run(r, url, args.redis, args, Path(tmp_name))
            if r == 1 or peer != peer:
                peer = sum(row["cpu_ms"] for row in rows) / len(rows)
            for i, row in enumerate(rows):
                print(f"{r:>2} {i:>7} {row['own']:>14.0f} {row['heard']:>9.0f} "
                      f"{row['heard'] / max(row['own'], 1e-9):>10.2f} {row['channels']:>9.0f} "
                      f"{row['cpu_ms']:>18.3f} {row['cpu_ms'] / peer:>6.2f}x")
            if r > 1:
                own = sum(row["own"] for row in rows) / len(rows)
                heard = sum(row["heard"] for row in rows) / len(rows)
                per = heard / own / (r - 1) if own else 0.0
                print(f"   by arithmetic: each replica hears {per:.2f} x (R - 1) x its own "
                      f"actions: at {own:.0f} actions/s each, {per * 9 * own:,.0f}/s at R = 10, "
                      f"{per * 99 * own:,.0f}/s at R = 100")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", default="1,2,3", help="replica counts R")
    parser.add_argument("--matches", type=int, default=10, help="matches per replica")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--think-ms", type=float, default=20.0, help="each bot's think time")
    parser.add_argument("--redis", default=os.environ.get(
        "BUMMERL_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
