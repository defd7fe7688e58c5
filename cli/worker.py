"""`bummerl worker` and `bummerl beat`: run a Celery worker or the beat scheduler.

Shorthands for `celery -A workers.app worker|beat ...` with bummerl's defaults; the broker is
`BUMMERL_BROKER_URL` / `REDIS_URL`, else the embedded filesystem broker under var/broker
(see workers/app.py), the database `DATABASE_URL`, else SQLite under var/. A worker on the
`moves` queue submits house-bot moves to the engine service at `BUMMERL_SERVICE_ADDRESS`
(default 127.0.0.1:50051) with the service's house token `BUMMERL_HOUSE_TOKEN`.

A worker on the `moves` queue registers the house bots it plays (house-random, house-bully,
house-rdeep, ...: cli.up.HOUSE_BOTS) when they are missing, so a site of separate processes
(the image, k8s/) has them as `bummerl up` has.

`bummerl worker --check [-n NAME] [--max-age S]` is the worker's liveness probe: exit status 0
while the worker NAME writes its heartbeat (workers/liveness.py), 1 once it is older than S s.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from workers import procs
from workers.procs import PEOPLE_THREADS


def register(subparsers: Any) -> None:
    worker = subparsers.add_parser(
        "worker", help="run a Celery worker (house-bot moves, simulation chunks)",
        description="Run a Celery worker on the queues `people` (house bots' answers to "
                    "people at the table), `moves` (house-bot moves, ladder, sweeps) and "
                    "`batch` (simulation chunks, analyses); in production one worker per "
                    "queue (-Q people, -Q moves, -Q batch).")
    worker.add_argument("-Q", "--queues", default="people,moves,batch")
    worker.add_argument("-c", "--concurrency", type=int, default=None,
                        help="pool processes, or threads (default: the number of cores; "
                             f"{PEOPLE_THREADS} threads)")
    worker.add_argument("-P", "--pool", choices=["prefork", "threads"], default=None,
                        help="prefork (default), or threads (the default for -Q people "
                             "alone: its tasks mostly wait for an answer's due time)")
    worker.add_argument("-n", "--name", default="bummerl")
    worker.add_argument("-B", "--beat", action="store_true",
                        help="also run the beat scheduler in this worker (one per site!)")
    worker.add_argument("-l", "--loglevel", default="INFO")
    worker.add_argument("--check", action="store_true",
                        help="do not run a worker: exit 0 if the worker NAME (-n) is alive "
                             "(its heartbeat is fresh), else 1; a liveness probe")
    worker.add_argument("--max-age", type=float, default=60.0, metavar="S",
                        help="with --check: the oldest heartbeat still alive, in seconds "
                             "(default %(default)s)")
    worker.set_defaults(func=run_worker)
    beat = subparsers.add_parser(
        "beat", help="run the Celery beat scheduler (ladder ticks, sweeper)",
        description="Run Celery beat: every BUMMERL_LADDER_EVERY s a ladder tick, every "
                    "BUMMERL_SWEEP_EVERY s a sweep. Run exactly one.")
    beat.add_argument("-l", "--loglevel", default="INFO")
    beat.set_defaults(func=run_beat)


def _migrate() -> None:
    from db.migrate import upgrade

    upgrade()


def run_worker(args: argparse.Namespace) -> int:
    if args.check:
        return check_worker(args.name, args.max_age)
    _migrate()
    house = bool({"moves", "people"} & set(args.queues.split(",")))
    if house:
        from cli.up import ensure_house_bots

        ensure_house_bots()
    if house and not os.environ.get("BUMMERL_HOUSE_TOKEN"):
        print("warning: BUMMERL_HOUSE_TOKEN is not set, so the service will refuse "
              "this worker's house-bot moves; set it to the service's house token (and "
              "BUMMERL_SERVICE_ADDRESS if the service is not at 127.0.0.1:50051)",
              file=sys.stderr)
    cmd = procs.celery_command(*worker_args(args))
    os.execv(cmd[0], cmd)


def worker_args(args: argparse.Namespace) -> list[str]:
    """Celery's arguments for `bummerl worker`: a worker on `people` alone runs a pool of
    `PEOPLE_THREADS` threads unless told otherwise (its tasks mostly wait for an answer's due
    time), any other a pool of processes, one per core."""
    pool = args.pool or ("threads" if args.queues == "people" else "prefork")
    concurrency = args.concurrency or (PEOPLE_THREADS if pool == "threads"
                                       else os.cpu_count() or 1)
    return procs.worker_args(args.queues, concurrency, pool, args.name, args.loglevel, args.beat)


def check_worker(name: str, max_age: float) -> int:
    from workers.liveness import check

    alive, message = check(name, max_age)
    print(message)
    return 0 if alive else 1


def run_beat(args: argparse.Namespace) -> int:
    _migrate()
    cmd = procs.celery_command("beat", "-l", args.loglevel)
    os.execv(cmd[0], cmd)
