"""Benchmark: a round-robin of house bots played as duplicate pairs, beside the ladder's matches
per second on the same site in the same run.

    .venv/bin/python bench/events.py [--bots 32] [--concurrency 16] [--ladder-seconds 60]
        [--postgres postgresql://127.0.0.1:5432/test] [--redis redis://127.0.0.1:6379/0]

One machine, real processes: `bummerl serve` on a fresh PostgreSQL database (dropped after),
one Celery worker (`--worker-concurrency` pool processes, default 2) with beat on Redis (keys
under a unique prefix), and `--bots` house bots playing `random`. Every move of every match is
a house move: the service announces it, the worker computes it and submits it over gRPC.

1. PEER, the ladder: the worker keeps `--concurrency` ladder matches going for
   `--ladder-seconds`; the figure is the ladder matches finished per second over the window.
2. EVENT: the ladder stopped (a new worker with no ladder tick), a round-robin of every bot
   (`bummerl tournament create`, `--concurrency` matches at once, each pair's legs one after
   the other) is played to its end; the figures are its wall time (create to finished) and its
   matches per second, and the ratio event / ladder.

Both run the same bots, time control and number of matches at once on the same site, so the
ratio shows what the events scheduler costs or gains over the ladder's (its waits between the
legs of a pair and between rounds, one pair per bot at a time).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OPERATOR = "bench-operator"
HOUSE_TOKEN = "bench-house"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16,
                        help="matches at once, for the ladder and the event alike")
    parser.add_argument("--ladder-seconds", type=float, default=60.0)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--postgres", default="postgresql://127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds the event may take before the bench gives up")
    args = parser.parse_args()

    from sqlalchemy import func, select

    from db.base import make_session_factory
    from db.models import FINISHED, HOUSE, Match
    from db.ratings import LadderMatch
    from services.ops import bots
    from workers import procs
    from workers.testing import fresh_postgres, redis_site

    tmp = Path(tempfile.mkdtemp(prefix="bummerl-bench-events-"))
    atexit.register(shutil.rmtree, tmp, True)  # at exit, also on failure (issue 44)
    _, broker_env = redis_site(args.redis)
    with fresh_postgres(args.postgres) as url:
        port = free_port()
        env = {**os.environ, **broker_env, "DATABASE_URL": url, "PYTHONPATH": str(ROOT),
               "BUMMERL_OPERATOR_TOKEN": OPERATOR, "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN,
               "BUMMERL_HOOKS": "workers.hooks:install", "BUMMERL_BUS_URL": "off",
               "BUMMERL_SERVICE_ADDRESS": f"127.0.0.1:{port}", "BUMMERL_EVENTS_EVERY": "0.5",
               "BUMMERL_LADDER_EVERY": "1", "BUMMERL_LADDER_MATCHES": str(args.concurrency),
               "BUMMERL_SWEEP_EVERY": "5", "BUMMERL_BEAT_SCHEDULE": str(tmp / "beat"),
               "BUMMERL_WORKER_HEARTBEAT": str(tmp / "worker.alive")}
        with open(tmp / "service.log", "ab") as out:
            service = subprocess.Popen(
                [sys.executable, "-m", "cli.main", "serve", "--address", f"127.0.0.1:{port}"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        worker = None
        sessions = None
        try:
            wait_listening(port, service)
            sessions = make_session_factory(url)
            names = [f"house-{i:02d}" for i in range(args.bots)]
            for name in names:
                bots.register_bot(name, kind=HOUSE, house_strategy="random", sessions=sessions)
            print(f"bench/events.py: {args.bots} house bots (random), {args.concurrency} "
                  f"matches at once, 1 worker x {args.worker_concurrency} processes, "
                  f"PostgreSQL + Redis; {os.cpu_count()} cores")

            def ladder_finished() -> int:
                with sessions() as s:
                    return s.scalar(select(func.count()).select_from(LadderMatch).join(
                        Match, Match.id == LadderMatch.match_id).where(
                        Match.state == FINISHED)) or 0

            # 1. The ladder.
            worker = procs.start_worker(env, concurrency=args.worker_concurrency, beat=True,
                                        logfile=tmp / "worker-ladder.log", name="ladder")
            wait_for(lambda: ladder_finished() >= args.concurrency, 120, "the ladder to warm up")
            start_count, start = ladder_finished(), time.perf_counter()
            time.sleep(args.ladder_seconds)
            ladder_rate = (ladder_finished() - start_count) / (time.perf_counter() - start)
            procs.stop(worker)
            wait_for(lambda: running(sessions) == 0 or abort_running(sessions, port), 60,
                     "the ladder's matches to stop")
            # 2. The event, ladder off.
            event_env = {**env, "BUMMERL_LADDER_EVERY": "3600"}
            worker = procs.start_worker(event_env, concurrency=args.worker_concurrency,
                                        beat=True, logfile=tmp / "worker-event.log",
                                        name="event")
            start = time.perf_counter()
            tid = create_event(port, names, args.concurrency)
            wait_for(lambda: state_of(port, tid) != "running", args.timeout,
                     "the round-robin to finish", every=1.0)
            wall = time.perf_counter() - start
            with sessions() as s:
                played = s.scalar(select(func.count()).select_from(Match).where(
                    Match.event_id == tid, Match.state == FINISHED)) or 0
            event_rate = played / wall
            rounds = args.bots - 1 if args.bots % 2 == 0 else args.bots
            print(f"  round-robin: {rounds} rounds, {played} matches, state "
                  f"{state_of(port, tid)}")
            print(f"  {'':<28} {'matches/s':>10}")
            print(f"  {'ladder (peer)':<28} {ladder_rate:>10.2f}")
            print(f"  {'event round-robin':<28} {event_rate:>10.2f}   wall {wall:.1f} s")
            print(f"  ratio event/ladder: {event_rate / ladder_rate:.2f}")
        finally:
            if worker is not None:
                procs.stop(worker)
            service.terminate()
            service.wait(15)
            if sessions is not None:
                sessions.kw["bind"].dispose()
    return 0


def wait_listening(port: int, service: subprocess.Popen) -> None:
    def up() -> bool:
        assert service.poll() is None, "the service exited (see its log)"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    wait_for(up, 60, "the service to listen")


def wait_for(condition, timeout: float, what: str, every: float = 0.2) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise SystemExit(f"bench/events.py: timed out after {timeout:.0f} s waiting for "
                             f"{what}")
        time.sleep(every)


def running(sessions) -> int:  # type: ignore[no-untyped-def]
    from sqlalchemy import func, select

    from db.models import RUNNING, Match

    with sessions() as s:
        return s.scalar(select(func.count()).select_from(Match)
                        .where(Match.state == RUNNING)) or 0


def abort_running(sessions, port: int) -> bool:  # type: ignore[no-untyped-def]
    """The ladder's matches left running once its worker stopped: aborted by the operator
    (AdminService), so the event starts on an idle site."""
    import grpc
    from bummerl.v1 import admin_pb2, admin_pb2_grpc
    from sqlalchemy import select

    from db.models import RUNNING, Match

    with sessions() as s:
        ids = list(s.scalars(select(Match.id).where(Match.state == RUNNING)))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        for match_id in ids:
            with contextlib.suppress(grpc.RpcError):  # one that ended meanwhile
                admin.AbortMatch(admin_pb2.AbortMatchRequest(
                    match_id=match_id, reason="bench: the ladder phase is over"),
                    metadata=(("authorization", f"Bearer {OPERATOR}"),), timeout=30)
    return running(sessions) == 0


def create_event(port: int, names: list[str], concurrency: int) -> int:
    import grpc
    from bummerl.v1 import match_pb2, tournament_pb2, tournament_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = tournament_pb2_grpc.TournamentServiceStub(channel).CreateTournament(
            tournament_pb2.CreateTournamentRequest(
                format=tournament_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN, bot_names=names,
                concurrency=concurrency, name="bench",
                time_control=match_pb2.TimeControl(move_ms=5000, bank_ms=30000)),
            metadata=(("authorization", f"Bearer {OPERATOR}"),), timeout=30)
    return int(reply.tournament.tournament_id)


def state_of(port: int, tournament_id: int) -> str:
    import grpc
    from bummerl.v1 import tournament_pb2, tournament_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = tournament_pb2_grpc.TournamentServiceStub(channel).GetTournament(
            tournament_pb2.GetTournamentRequest(tournament_id=tournament_id), timeout=30)
    name = tournament_pb2.TournamentState.Name(reply.tournament.state)
    return name.removeprefix("TOURNAMENT_STATE_").lower()


if __name__ == "__main__":
    sys.exit(main())
