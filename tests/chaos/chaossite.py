"""The site the chaos scenarios break: real processes (the gRPC service, a Celery worker, beat,
remote bots from the client kit) on the real Redis and PostgreSQL, each reached through a proxy
the test controls, and the invariants checked after every fault."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from conftest import REDIS_URL, through
from faultproxy import Proxy
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

import engine
from bots.batch import play_deals
from bots.stats import Totals
from db.base import aware, make_session_factory, utcnow
from db.batch import CHUNK_DONE, SimulationChunk
from db.models import FINISHED, HOUSE, RUNNING, ActionLog, Bot, Match
from db.ratings import LadderMatch, Rating
from services.ops import bots
from workers import procs, simulations
from workers.app import ROOT, make_app
from workers.testing import wait_until

OPERATOR = "chaos-operator-token"
HOUSE_BOTS = {"house-random": "random", "house-bully": "bully", "house-rdeep": "rdeep"}
REMOTE_BOTS = ("remote-a", "remote-b")
SIM = ("rdeep", "random", 8, 77)  # strategies, deals (one per chunk), seed
SLACK_S = 15.0  # how far past its deadline a running match may be before it counts as stuck


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Site:
    database_url: str  # direct, for the test's own reads
    tmp: Path
    redis: Proxy
    postgres: Proxy
    front: Proxy = field(init=False)  # in front of the service, for the bots
    port: int = field(init=False)
    env: dict[str, str] = field(init=False)
    sessions: sessionmaker[Session] = field(init=False)
    service: subprocess.Popen | None = None
    worker: subprocess.Popen | None = None
    beat: subprocess.Popen | None = None
    bots: dict[str, subprocess.Popen] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    deaths: list[str] = field(default_factory=list)
    prefix: str = ""

    def __post_init__(self) -> None:
        self.port = free_port()
        self.front = Proxy(("127.0.0.1", self.port))
        self.sessions = make_session_factory(self.database_url)
        self.app = make_app(REDIS_URL, self.prefix)
        t = self.tmp
        self.env = {
            "DATABASE_URL": through(self.database_url, self.postgres.port),
            "BUMMERL_BROKER_URL": through(REDIS_URL, self.redis.port),
            "BUMMERL_BROKER_PREFIX": self.prefix,
            "BUMMERL_OPERATOR_TOKEN": OPERATOR,
            "BUMMERL_HOOKS": "workers.hooks:install",
            # House moves go through the service's gRPC door, with the house token.
            "BUMMERL_HOUSE_TOKEN": "chaos-house-token",
            "BUMMERL_SERVICE_ADDRESS": f"127.0.0.1:{self.port}",
            # A short ladder cadence: ticks every second, sweeps every 2 s.
            "BUMMERL_LADDER_EVERY": "1", "BUMMERL_LADDER_MATCHES": "3",
            "BUMMERL_SWEEP_EVERY": "2", "BUMMERL_SWEEP_STALE": "6",
            "BUMMERL_SWEEP_MOVE_STALE": "3",
            "BUMMERL_MOVE_MS": "5000", "BUMMERL_BANK_MS": "30000",
            "BUMMERL_HOUSE_MOVE_MS": "40000", "BUMMERL_HOUSE_THINK_S": "0.3",
            "BUMMERL_HEARTBEAT_S": "1",
            "BUMMERL_WORKER_CHECK_S": "1", "BUMMERL_BROKER_TIMEOUT": "2",
            "BUMMERL_WORKER_HEARTBEAT": str(t / "worker.alive"),
            "BUMMERL_BEAT_SCHEDULE": str(t / "beat-schedule"),
        }

    # -- processes -------------------------------------------------------------------------

    def _spawn(self, args: list[str], log: str, extra: dict[str, str] | None = None
               ) -> subprocess.Popen:
        env = {**os.environ, **self.env, **(extra or {}), "PYTHONPATH": str(ROOT)}
        with open(self.tmp / log, "ab") as out:
            return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def start_service(self) -> None:
        self.service = self._spawn(["-m", "cli.main", "serve", "--address",
                                    f"127.0.0.1:{self.port}"], "service.log")
        wait_until(self._service_answers, 60, every=0.2, what="the service to listen")

    def _service_answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            assert self.service is not None and self.service.poll() is None, \
                "the service exited: " + self.log("service.log")[-2000:]
            return False

    def start_worker(self) -> None:
        self.worker = procs.start_worker(self.env, concurrency=2, logfile=self.tmp / "worker.log",
                                         name="chaos")

    def start_beat(self) -> None:
        self.beat = procs.start_beat(self.env, logfile=self.tmp / "beat.log")

    def start_bot(self, name: str) -> None:
        self.bots[name] = self._spawn(
            ["-m", "client", "examples/simple_bot.py:SimpleBot", "--server",
             f"127.0.0.1:{self.front.port}"], f"{name}.log",
            {"BUMMERL_BOT_TOKEN": self.tokens[name]})

    def start(self) -> None:
        self.start_service()  # migrates the database
        for name, strategy in HOUSE_BOTS.items():
            bots.register_bot(name, kind=HOUSE, house_strategy=strategy, sessions=self.sessions)
        for name in REMOTE_BOTS:
            _, token = bots.register_bot(name, sessions=self.sessions)
            self.tokens[name] = token or ""
            self.start_bot(name)
        self.start_worker()
        self.start_beat()

    def dead_bots(self) -> list[str]:
        return [name for name, proc in self.bots.items() if proc.poll() is not None]

    def revive_bots(self) -> None:
        """Start again the bots a previous scenario killed (that scenario already failed)."""
        for name in self.dead_bots():
            self.start_bot(name)

    def stop(self) -> None:
        procs.stop_all([p for p in (self.worker, self.beat, self.service, *self.bots.values())
                        if p is not None], timeout=10)
        self.front.close()
        self.sessions.kw["bind"].dispose()

    def log(self, name: str) -> str:
        with contextlib.suppress(OSError):
            return (self.tmp / name).read_text(errors="replace")
        return ""

    # -- load ------------------------------------------------------------------------------

    def start_simulation(self) -> int:
        a, b, deals, seed = SIM
        sim_id = simulations.create_simulation(a, b, deals, seed=seed, chunk_deals=1,
                                               sessions=self.sessions)
        simulations.dispatch(sim_id, self.sessions, send=lambda ids: [
            self.app.send_task("bummerl.chunk", (i,), queue="batch") for i in ids])
        return sim_id

    def running_ladder(self) -> list[Match]:
        with self.sessions() as s:
            return list(s.scalars(select(Match).join(LadderMatch, LadderMatch.match_id == Match.id)
                                  .where(Match.state == RUNNING)).unique())

    def last_action(self) -> int:
        with self.sessions() as s:
            return s.scalar(select(func.max(ActionLog.id))) or 0

    def simulation_done(self, sim_id: int) -> bool:
        return bool(simulations.progress(sim_id, self.sessions)["state"] == "done")

    def chunk_running(self, sim_id: int) -> bool:
        with self.sessions() as s:
            return any(c.attempts and c.state != CHUNK_DONE for c in s.scalars(
                select(SimulationChunk).where(SimulationChunk.simulation_id == sim_id)))

    def house_thinking(self) -> bool:
        """An rdeep house bot has been to act for a moment (its move task is running)."""
        now = utcnow()
        for m in self.running_ladder():
            bot = m.bot0 if m.to_act == 0 else m.bot1
            if bot.name == "house-rdeep" and m.turn_started_at is not None \
                    and now - aware(m.turn_started_at) > timedelta(seconds=0.05):
                return True
        return False

    def recovery(self, since: int, cleared: float, timeout: float = 60) -> str:
        """Wait until a house bot and a remote bot have both moved after action id `since`;
        how long after `cleared` (time.monotonic()) each happened."""
        seen: dict[str, float] = {}

        def both() -> bool:
            with self.sessions() as s:
                rows = s.execute(select(ActionLog.request_id).where(ActionLog.id > since)).all()
            for (request_id,) in rows:
                kind = "house" if (request_id or "").startswith("house:") else "remote"
                seen.setdefault(kind, time.monotonic() - cleared)
            return len(seen) == 2

        try:
            wait_until(both, timeout, every=0.2, what="a house move and a remote move after "
                       "the fault")
        except AssertionError as e:
            raise AssertionError(f"{e} (seen: {', '.join(seen) or 'none'}; running: "
                                 f"{self.describe()})") from None
        return f"house move after {seen['house']:.1f} s, remote move after {seen['remote']:.1f} s"

    def describe(self) -> str:
        """The running matches, for failure messages."""
        now = utcnow()
        parts = []
        with self.sessions() as s:
            for m in s.scalars(select(Match).where(Match.state == RUNNING)).unique():
                due = "" if m.deadline_at is None else \
                    f" due in {(aware(m.deadline_at) - now).total_seconds():.0f} s"
                parts.append(f"#{m.id} {m.bot0.name}-{m.bot1.name} seq {m.seq} "
                             f"seat {m.to_act} to act{due}")
        return "; ".join(parts) or "none"

    def report(self, sim_id: int, lines: int = 25) -> str:
        """The site's state and its processes' last log lines, for a failure message."""
        with self.sessions() as s:
            chunks = [(c.state, c.attempts) for c in s.scalars(
                select(SimulationChunk).where(SimulationChunk.simulation_id == sim_id)
                .order_by(SimulationChunk.id))]
        parts = [f"running ladder matches: {len(self.running_ladder())}; running: "
                 f"{self.describe()}", f"simulation {sim_id} chunks (state, attempts): {chunks}",
                 "processes: " + ", ".join(
                     f"{name} {'alive' if p.poll() is None else f'exited {p.returncode}'}"
                     for name, p in (("service", self.service), ("worker", self.worker),
                                     ("beat", self.beat), *self.bots.items())
                     if p is not None)]
        for log in ("service.log", "worker.log", "beat.log"):
            tail = self.log(log).splitlines()[-lines:]
            parts.append(f"--- last {len(tail)} lines of {log}:\n" + "\n".join(
                line[:300] for line in tail))
        ladder = [line[:300] for line in self.log("worker.log").splitlines() if "ladder" in line]
        parts.append("--- the worker's last lines about the ladder:\n" + "\n".join(ladder[-10:]))
        return "\n".join(parts)

    # -- invariants ------------------------------------------------------------------------

    def check(self, sim_id: int) -> str:
        """Every invariant of the site; a short summary. AssertionError naming the breach."""
        problems: list[str] = []
        started = time.monotonic()
        try:
            wait_until(lambda: simulations.progress(sim_id, self.sessions)["state"] == "done",
                       120, every=0.3, what=f"simulation {sim_id} to finish")
        except AssertionError as e:
            problems.append(str(e))
        sim_s = time.monotonic() - started
        with self.sessions() as s:
            totals = simulations.totals_of(s, sim_id)
        if totals != expected_totals():
            problems.append(f"simulation {sim_id} totals {totals} != {expected_totals()}")
        problems += self.replay_all()
        problems += self.ratings()
        problems += self.stuck()
        dead = self.dead_bots()
        if dead:
            problems.append("bot processes died: " + ", ".join(
                f"{n} ({self.log(n + '.log')[-300:]!r})" for n in dead))
        assert not problems, "; ".join(problems)
        with self.sessions() as s:
            count = s.scalar(select(func.count()).select_from(Match)) or 0
        return f"{count} matches replayed, simulation done {sim_s:.1f} s after the check began"

    def replay_all(self) -> list[str]:
        problems = []
        with self.sessions() as s:
            # One snapshot: the match rows and their logs as of the same moment.
            s.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            matches = list(s.scalars(select(Match).order_by(Match.id)).unique())
            for m in matches:
                rows = s.execute(select(ActionLog.seq, ActionLog.seat, ActionLog.action)
                                 .where(ActionLog.match_id == m.id)
                                 .order_by(ActionLog.seq)).all()
                seqs = [r.seq for r in rows]
                if seqs != list(range(m.seq)):
                    problems.append(f"match {m.id}: seqs {seqs[:5]}... not 0..{m.seq - 1}")
                    continue
                try:
                    game = engine.Match.replay(m.seed, m.profile, [
                        (r.seat, engine.Action.from_text(r.action)) for r in rows])
                except Exception as e:  # noqa: BLE001
                    problems.append(f"match {m.id}: its log does not replay: {e}")
                    continue
                if (m.counter0, m.counter1) != game.counters:
                    problems.append(f"match {m.id}: counters {(m.counter0, m.counter1)} but its "
                                    f"log replays to {game.counters}")
                if m.state == FINISHED and m.end_reason == "played" and m.winner != game.winner:
                    problems.append(f"match {m.id}: winner {m.winner}, replay {game.winner}")
                if m.state == FINISHED and m.end_reason != "played" and game.is_over:
                    problems.append(f"match {m.id}: {m.end_reason} but its log is a played-out "
                                    "match")
                if m.state == RUNNING and m.to_act != game.to_act:
                    problems.append(f"match {m.id}: to_act {m.to_act}, replay {game.to_act}")
        return problems

    def ratings(self) -> list[str]:
        """Each finished ladder match rated once (given a few seconds to be rated)."""
        def unrated() -> list[int]:
            with self.sessions() as s:
                return list(s.scalars(select(Match.id).join(
                    LadderMatch, LadderMatch.match_id == Match.id).where(
                    Match.state == FINISHED, LadderMatch.rated_at.is_(None))))

        try:
            wait_until(lambda: not unrated(), 30, every=0.3, what="finished ladder matches rated")
        except AssertionError:
            return [f"finished ladder matches never rated: {unrated()}"]
        with self.sessions() as s:
            rated = s.scalar(select(func.count()).select_from(LadderMatch)
                             .where(LadderMatch.rated_at.is_not(None))) or 0
            matches = s.scalar(select(func.coalesce(func.sum(Rating.matches), 0))) or 0
        if matches != 2 * rated:
            return [f"ratings count {matches} match results for {rated} rated ladder matches "
                    "(each must count once for both sides)"]
        return []

    def stuck(self) -> list[str]:
        now = utcnow()
        problems = []
        with self.sessions() as s:
            for m in s.scalars(select(Match).where(Match.state == RUNNING)).unique():
                if m.deadline_at is not None and now > aware(m.deadline_at) + timedelta(
                        seconds=SLACK_S):
                    late = (now - aware(m.deadline_at)).total_seconds()
                    problems.append(f"match {m.id} stuck: seat {m.to_act} owed a move "
                                    f"{late:.0f} s past its deadline")
        return problems

    def bot_names(self) -> dict[int, str]:
        with self.sessions() as s:
            return {b.id: b.name for b in s.scalars(select(Bot))}


_expected: list[Totals] = []


def expected_totals() -> Totals:
    """The simulation's totals played in this process (once per run)."""
    if not _expected:
        a, b, deals, seed = SIM
        _expected.append(play_deals(a, b, seed, 0, deals))
    return _expected[0]
