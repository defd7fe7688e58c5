"""A site for the events tests, all real processes: `bummerl serve` (migrating a fresh PostgreSQL
database), a Celery worker with beat on the test's corner of the real Redis, and remote bots run
by the client kit; the house bots are played by the worker. The test drives it through the
`bummerl tournament` command line (TournamentService) and checks the database, the truth."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

from bummerl.v1 import tournament_pb2, tournament_pb2_grpc
from serviceprocs import OPERATOR, ServiceProcess
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from cli.main import main as bummerl
from db.base import make_session_factory
from db.models import FINISHED, HOUSE, Match
from db.pairs import DONE, DuplicatePair
from events.scoring import Leg, pair_result
from services.ops import bots
from workers import procs
from workers.app import ROOT
from workers.testing import fresh_postgres, redis_site, wait_until

HOUSE_TOKEN = "events-house-token"


@dataclass
class Site:
    url: str
    tmp: Path
    broker_env: dict[str, str]
    service: ServiceProcess = field(init=False)
    sessions: sessionmaker[Session] = field(init=False)
    worker: subprocess.Popen | None = None
    kits: dict[str, subprocess.Popen] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env = {
            **self.broker_env, "DATABASE_URL": self.url, "BUMMERL_OPERATOR_TOKEN": OPERATOR,
            "BUMMERL_HOUSE_TOKEN": HOUSE_TOKEN, "BUMMERL_HOOKS": "workers.hooks:install",
            "BUMMERL_HEARTBEAT_S": "1", "BUMMERL_EVENTS_EVERY": "0.5",
            "BUMMERL_LADDER_EVERY": "3600", "BUMMERL_SWEEP_EVERY": "2",
            "BUMMERL_SWEEP_STALE": "6", "BUMMERL_SWEEP_MOVE_STALE": "3",
            "BUMMERL_HOUSE_MOVE_MS": "20000", "BUMMERL_WORKER_CHECK_S": "1",
            "BUMMERL_BEAT_SCHEDULE": str(self.tmp / "beat-schedule"),
            "BUMMERL_WORKER_HEARTBEAT": str(self.tmp / "worker.alive"),
        }
        self.service = ServiceProcess(self.url, self.tmp / "service.log", **self.env)
        self.env["BUMMERL_SERVICE_ADDRESS"] = self.service.address
        self.sessions = make_session_factory(self.url)

    def start_worker(self) -> None:
        self.worker = procs.start_worker(self.env, concurrency=2, beat=True,
                                         logfile=self.tmp / "worker.log", name="events")

    def kill_worker(self) -> None:
        assert self.worker is not None
        procs.kill(self.worker)  # SIGKILL of the worker, its pool and its beat

    def restart_service(self) -> None:
        self.service.kill()  # SIGKILL: no clean-up
        self.service.start()

    def add_house(self, names: list[str], strategy: str = "random") -> None:
        for name in names:
            bots.register_bot(name, kind=HOUSE, house_strategy=strategy, sessions=self.sessions)

    def add_remote(self, name: str, start: bool = True) -> None:
        _, token = bots.register_bot(name, sessions=self.sessions)
        self.tokens[name] = token or ""
        if start:
            self.start_kit(name)

    def start_kit(self, name: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "BUMMERL_BOT_TOKEN": self.tokens[name]}
        with open(self.tmp / f"{name}.log", "ab") as out:
            self.kits[name] = subprocess.Popen(
                [sys.executable, "-m", "client", "examples/simple_bot.py:SimpleBot",
                 "--server", self.service.address], cwd=ROOT, env=env, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)

    def connected(self, names: list[str]) -> bool:
        from db.base import utcnow
        from db.models import Bot
        from db.presence import is_connected

        with self.sessions() as s:
            rows = {b.name: b for b in s.scalars(select(Bot).where(Bot.name.in_(names)))}
        return all(is_connected(rows[n], 1.0, utcnow()) for n in names)

    def cli(self, *args: str) -> str:
        """`bummerl tournament ...` against the site (exit status 0 expected); its output."""
        out = io.StringIO()
        argv = ["tournament", *args, "--server", self.service.address]
        if args[0] in ("create", "withdraw", "cancel"):
            argv += ["--operator-token", OPERATOR]
        with redirect_stdout(out):
            status = bummerl(argv)
        assert status == 0, out.getvalue()
        return out.getvalue()

    def create(self, *args: str) -> int:
        """Create a tournament with the command line; its id."""
        out = self.cli("create", *args)
        return int(out.split()[1])

    def export(self, tournament_id: int) -> tournament_pb2.ExportTournamentResponse:
        assert self.service.channel is not None
        return tournament_pb2_grpc.TournamentServiceStub(self.service.channel).ExportTournament(
            tournament_pb2.ExportTournamentRequest(tournament_id=tournament_id))

    def state(self, tournament_id: int) -> int:
        return self.export(tournament_id).tournament.state

    def wait_finished(self, tournament_id: int, timeout: float) -> None:
        try:
            wait_until(lambda: self.state(tournament_id) !=
                       tournament_pb2.TOURNAMENT_STATE_RUNNING, timeout, every=0.3,
                       what=f"tournament {tournament_id} to finish")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.report(tournament_id)}") from None
        assert self.state(tournament_id) == tournament_pb2.TOURNAMENT_STATE_FINISHED

    def pairs(self, tournament_id: int) -> list[DuplicatePair]:
        with self.sessions() as s:
            rows = list(s.scalars(select(DuplicatePair).where(
                DuplicatePair.owner_id == tournament_id).order_by(DuplicatePair.round,
                                                                  DuplicatePair.board)))
            s.expunge_all()
        return rows

    def matches(self) -> dict[int, Match]:
        with self.sessions() as s:
            rows = {m.id: m for m in s.scalars(select(Match)).unique()}
            s.expunge_all()
        return rows

    def report(self, tournament_id: int) -> str:
        shown = [(p.round, p.board, p.state, p.match_a_id, p.match_b_id)
                 for p in self.pairs(tournament_id)]
        lines = [f"pairs: {shown}"]
        for log in ("service.log", "worker.log"):
            with contextlib.suppress(OSError):
                tail = (self.tmp / log).read_text(errors="replace").splitlines()[-20:]
                lines.append(f"--- {log}:\n" + "\n".join(x[:300] for x in tail))
        return "\n".join(lines)

    def stop(self) -> None:
        procs.stop_all([p for p in (self.worker, *self.kits.values()) if p is not None],
                       timeout=10)
        self.service.stop()
        self.sessions.kw["bind"].dispose()


@contextmanager
def event_site(postgres_url: str, redis_url: str, tmp: Path) -> Iterator[Site]:
    _, broker_env = redis_site(redis_url)
    with fresh_postgres(postgres_url) as url:
        site = Site(url, tmp, broker_env)
        try:
            yield site
        finally:
            site.stop()


def check_complete(site: Site, tournament_id: int, pairs_per_round: int) -> list[DuplicatePair]:
    """Every pair done with exactly its two finished legs, leg 1 made after leg 0 ended, no
    match made twice or outside a pair; the export's results and crosstable are the match
    rows'. The pairs."""
    pairs = site.pairs(tournament_id)
    matches = site.matches()
    export = site.export(tournament_id)
    assert all(p.state == DONE for p in pairs), [(p.id, p.state, p.detail) for p in pairs]
    assert dict(Counter(p.round for p in pairs)) == {
        r: pairs_per_round for r in range(1, export.tournament.rounds + 1)}
    of_event = [m for m in matches.values() if m.event_id == tournament_id]
    assert len(of_event) == 2 * len(pairs), "a leg made twice, or missing"
    assert {(m.pair_id, m.pair_leg) for m in of_event} == {
        (p.id, leg) for p in pairs for leg in (0, 1)}
    by_id = {p.pair_id: p for p in export.pairs}
    points: Counter[tuple[int, int]] = Counter()
    for p in pairs:
        leg0, leg1 = matches[p.match_a_id], matches[p.match_b_id]  # type: ignore[index]
        assert leg0.state == leg1.state == FINISHED
        assert (leg0.bot0_id, leg0.bot1_id, leg1.bot0_id) == (p.bot_a_id, p.bot_b_id, p.bot_b_id)
        assert leg0.seed == leg1.seed == p.seed
        assert leg1.created_at >= leg0.finished_at, f"pair {p.id}: legs overlapped"
        result = pair_result(Leg(leg0.winner, (leg0.counter0, leg0.counter1)),
                             Leg(leg1.winner, (leg1.counter0, leg1.counter1)))
        shown = by_id[p.id]
        assert (shown.points_a, shown.points_b, shown.game_points_a, shown.game_points_b) == \
            tuple(result[:4])
        points[(p.bot_a_id, p.bot_b_id)] += result.points_a
        points[(p.bot_b_id, p.bot_a_id)] += result.points_b
    cells = {(c.bot_id, c.opponent_id): c.points for c in export.crosstable}
    assert cells == dict(points)
    for row in export.standings:
        assert row.points == sum(v for (bot, _), v in points.items() if bot == row.bot_id) + \
            2 * row.byes
    return pairs
