"""Benchmark: batch-simulation throughput (deals per second) on real Celery workers, for one
worker process and for two.

Each deal is played twice (a duplicate pair), in-process with the engine on the workers; the
figure counts distinct deals (hands = 2 × deals). The broker is Redis with `--redis URL`, else
the embedded filesystem broker; the database is `--database URL`, else a fresh SQLite file.
Run: `.venv/bin/python bench/batch.py [--a bully --b random --deals 10000 --chunk 500]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="bully")
    parser.add_argument("--b", default="random")
    parser.add_argument("--deals", type=int, default=10000)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--workers", default="1,2", help="worker counts to measure")
    parser.add_argument("--redis", default=None, help="Redis broker URL (default: embedded)")
    parser.add_argument("--database", default=None, help="database URL (default: temp SQLite)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bummerl-bench-"))
    os.environ["DATABASE_URL"] = args.database or f"sqlite:///{tmp / 'bench.sqlite3'}"
    os.environ["BUMMERL_BROKER_DIR"] = str(tmp / "broker")
    os.environ["BUMMERL_BEAT_SCHEDULE"] = str(tmp / "beat")
    os.environ.pop("BUMMERL_BROKER_URL", None)
    if args.redis:
        os.environ["BUMMERL_BROKER_URL"] = args.redis
    else:
        os.environ.pop("REDIS_URL", None)

    from bots.batch import play_deals
    from db.migrate import upgrade
    from workers import procs, simulations, tasks
    from workers.app import broker_url

    upgrade()
    print(f"bench/batch.py: {args.a} vs {args.b}, {args.deals} deals (× 2 seatings), chunks of "
          f"{args.chunk}; broker {broker_url().split('://')[0]}, database "
          f"{os.environ['DATABASE_URL'].split(':')[0]}; {os.cpu_count()} cores")
    start = time.perf_counter()
    sample = max(1, args.deals // 4)
    play_deals(args.a, args.b, 1, 0, sample)
    print(f"  in-process, no Celery:  {sample / (time.perf_counter() - start):8.1f} deals/s")
    for count in (int(n) for n in args.workers.split(",")):
        logs = [tmp / f"worker{count}-{i}.log" for i in range(count)]
        workers = [procs.start_worker(queues="batch", concurrency=1, name=f"bench{count}-{i}",
                                      logfile=log) for i, log in enumerate(logs)]
        try:
            for log in logs:  # wait until every worker is ready to consume
                while not (log.exists() and "ready." in log.read_text()):
                    time.sleep(0.1)
            sim_id = simulations.create_simulation(args.a, args.b, args.deals, seed=count,
                                                   chunk_deals=args.chunk)
            start = time.perf_counter()
            simulations.dispatch(sim_id, send=tasks.send_chunks)
            while simulations.progress(sim_id)["state"] == "running":
                time.sleep(0.05)
            elapsed = time.perf_counter() - start
        finally:
            procs.stop_all(workers)
        label = f"{count} worker{'s' if count > 1 else ''}"
        print(f"  {label + ':':24}{args.deals / elapsed:8.1f} deals/s "
              f"({2 * args.deals / elapsed:.1f} hands/s, {elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
