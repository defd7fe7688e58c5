"""Benchmark: hosted bots (issue 46) beside a remote bot measured in the same run.

    .venv/bin/python bench/hosted.py [--bots 50] [--rounds 6] [--per-round 2]
                                     [--idle-seconds 10] [--parallel 4] [--spinners 1]
                                     [--db sqlite|postgres]
    .venv/bin/python bench/hosted.py --quick   (the test's: 2 bots, 1 round, 1 s idle)

A real engine service in this process (`services.api.server.create_server`) on a fresh
database (an SQLite file, or `--db postgres`: a fresh database on 127.0.0.1:5432, dropped
after), listening on a loopback port (the remote bots) and on a unix socket whose folder is
mounted into the containers (the hosted bots, hosting.sandbox), with podman. The bot is the
same everywhere: examples/random_bot.py's RandomBot. The remote bot is the kit run on the host
(`python -m client examples/random_bot.py:RandomBot`, a process of its own, over TCP); the
hosted bot is the same file uploaded (HostingService.UploadVersion), built on the cached kit
base image and validated by workers.hosted.build (called here the moment the upload returns:
on a site a worker on the queue `hosting` picks it up), then started by the supervisor's round
(workers.hosted.reconcile_once). Every match is against one opponent, `sparring`: the kit's
RandomBot in another process on the host. Figures, each beside its peer and the ratio:

1. upload -> its validation match over, -> live; live -> connected; live -> its first ladder
   match over; upload -> that match started (created) and over. Once the hosted bot is
   connected the ladder's tick runs (workers.ladder.tick: what beat's `bummerl.ladder_tick`
   runs on a worker, pairing the connected bots; on a site it comes every BUMMERL_LADDER_EVERY
   s), with only sparring and the bot connected: it pairs the two. Peers: a remote bot's
   challenge and `python -m client --matches 1` started, to that match's end (the validation
   match's kind); another remote bot's `python -m client --matches 1`, from its process
   started to connected and to its first ladder match started and over (the same tick once
   it is connected, it and sparring alone connected);
2. idle, connected: the hosted bot's memory (RSS of the container's processes, and the
   container's cgroup with its page cache from `podman stats`) and CPU (ms a second, from
   /proc schedstat, ns), beside the remote bot's process in the same window;
3. turn gap: from the turn sent to the answer received, the service's own clock (an action's
   time less the previous action's, in the `actions` table: think_ms, to the microsecond),
   for each action of the bot's seat, in `--rounds` rounds of `--per-round` matches against
   sparring, hosted and remote in turn (the order alternating): p50 and p99;
4. `--bots` N hosted bots at once: N registered bots, each its own token, N containers of the
   one built image started by hosting.podman.start (`--parallel` at a time): the time until
   every one is connected (bots.connected_since; peer: one hosted bot's live -> connected),
   their memory and idle CPU in all (peer: N times the one idle hosted bot's), and the turn
   gap of one of them playing while the N-1 others idle, beside the same bot's after the
   others are stopped;
5. `--spinners` K hosted bots spinning the CPU (bench/bots/spin_bot.py: its act never returns;
   each container held to its CPU quota, hosting.sandbox.Limits): in `--rounds` rounds, K new
   containers start, sparring challenges each (1 match, a move time of SPIN_MOVE_MS), and once
   they spin the remote bot plays `--per-round` matches against sparring; then the spinners'
   matches end (on time) and the containers are stopped. Interleaved with rounds of 0 spinning
   (the order alternating), the floor: the remote bot's turn gap p50 and p99 with K spinning
   beside 0, the CPU the spinners got while the remote played beside their quota, and how
   many of their matches were forfeited on time.

Every container and image it made is removed at the end, also when it fails or is
interrupted (the base image stays: it is the cache). The machine's load shows in every figure:
the load average is printed at the start and at the end; compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bummerl.v1 import (  # noqa: E402
    bot_pb2,
    bot_pb2_grpc,
    hosting_pb2,
    hosting_pb2_grpc,
    match_pb2,
)
from sqlalchemy import or_, select  # noqa: E402
from sqlalchemy.orm import Session, sessionmaker  # noqa: E402

from db import hosted  # noqa: E402
from db.base import aware, make_session_factory  # noqa: E402
from db.hosted import HostedVersion  # noqa: E402
from db.models import FINISHED, FORFEIT_TIMEOUT, PLAYED, ActionLog, Bot, Match  # noqa: E402
from db.schema import create_all  # noqa: E402
from db.settings import Settings, sha256  # noqa: E402
from hosting import podman  # noqa: E402
from hosting.archive import pack  # noqa: E402
from hosting.sandbox import Limits  # noqa: E402
from services.api.server import Server, create_server  # noqa: E402
from services.ops import bots  # noqa: E402

T = TypeVar("T")
BOT_FILE = ROOT / "examples" / "random_bot.py"
ENTRY = "random_bot.py:RandomBot"
SPIN_FILE = ROOT / "bench" / "bots" / "spin_bot.py"
SPIN_ENTRY = "spin_bot.py:SpinBot"
SPIN_MOVE_MS = 2000  # the spinners' matches' move time (bank 1 ms): they forfeit after it
POSTGRES = os.environ.get("BUMMERL_BENCH_POSTGRES_URL",
                          "postgresql+psycopg://postgres@127.0.0.1:5432/test")
WAIT_S = 180.0  # the longest any one step may take


# --- measuring processes and containers ---------------------------------------------------------
def rss_mb(pids: list[int], field: str = "VmRSS") -> float:
    """The resident memory of `pids`, in MB (MiB; /proc's VmRSS, or RssAnon: the private part,
    without the files mapped, which processes of one image share)."""
    total = 0
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text()
        found = re.search(rf"{field}:\s+(\d+)", status)
        total += int(found.group(1)) if found else 0
    return total / 1024


def available_mb() -> float:
    """The machine's MemAvailable (/proc/meminfo), in MB (MiB)."""
    found = re.search(r"MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text())
    return int(found.group(1)) / 1024 if found else float("nan")


def cpu_ns(pids: list[int]) -> int:
    """The CPU time (ns) every thread of `pids` ran so far (/proc schedstat)."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def container_pids(name: str) -> list[int]:
    """The host pids of every process in the container `name` (its cgroup's list; its first
    process where that cannot be read)."""
    pid = int(podman.podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip())
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        for folder in ([f"/sys/fs/cgroup/{c}{path}" for c in controllers.split(",")]
                       if controllers else [f"/sys/fs/cgroup{path}"]):
            procs = Path(folder) / "cgroup.procs"
            try:
                found = [int(p) for p in procs.read_text().split()]
            except OSError:
                continue
            if found:
                return found
    return [pid]


UNITS = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1 << 20,
         "GiB": 1 << 30}


def cgroup_mb(names: list[str]) -> float:
    """The memory of the containers `names` as their cgroups count it (with page cache;
    `podman stats`), in MB (MiB)."""
    import json

    rows = json.loads(podman.podman("stats", "--no-stream", "--format", "json", *names,
                                    timeout=120).stdout or "[]")
    total = 0.0
    for row in rows:
        found = re.match(r"([\d.]+)\s*([A-Za-z]+)", row["mem_usage"])
        if found:
            total += float(found.group(1)) * UNITS.get(found.group(2), 1)
    return total / (1 << 20)


@dataclass
class Idle:
    rss_mb: float  # resident memory
    anon_mb: float  # of which private (not a mapped file)
    cpu_ms_s: float  # ms of CPU a second


def idle(groups: dict[str, Callable[[], list[int]]], seconds: float) -> dict[str, Idle]:
    """Memory and CPU of each group of processes over the same `seconds`."""
    pids = {name: find() for name, find in groups.items()}
    before = {name: cpu_ns(p) for name, p in pids.items()}
    started = time.perf_counter()
    time.sleep(seconds)
    elapsed = time.perf_counter() - started
    return {name: Idle(rss_mb(p), rss_mb(p, "RssAnon"), (cpu_ns(p) - before[name]) / 1e6 / elapsed)
            for name, p in pids.items()}


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered \
        else float("nan")


def wait_until(condition: Callable[[], T], what: str, timeout: float = WAIT_S,
               every: float = 0.05) -> T:
    end = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > end:
            raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)
    return value


# --- the site --------------------------------------------------------------------------------
class Site:
    """The service in this process on `url`, on a loopback port and a unix socket; the kit
    processes it started; the containers (labelled with `self.label`) and images it made."""

    def __init__(self, url: str, tmp: Path, site: str) -> None:
        self.tmp = tmp
        create_all(url)
        self.sessions: sessionmaker[Session] = make_session_factory(url)
        self.site = site
        self.label = f"bummerl.site={self.site}"
        self.socket_dir = Path(f"/tmp/bummerl-{site}")  # short: a socket's path is <108 bytes
        house = f"house-{uuid.uuid4().hex}"  # the workers' token: the ladder's CreateMatch
        self.server: Server = create_server(
            "127.0.0.1:0", sessions=self.sessions,
            config=Settings(hosting="podman", house_token_sha256=sha256(house)),
            hosted_socket=self.socket_dir / "service.sock").start()
        self.channel = grpc.insecure_channel(self.server.address)
        os.environ.update({
            "BUMMERL_HOSTED_SOCKET": str(self.socket_dir / "service.sock"),
            "BUMMERL_SERVICE_ADDRESS": self.server.address, "BUMMERL_HOSTED_SITE": self.site,
            "BUMMERL_HOSTED_VALIDATION_OPPONENT": "sparring", "BUMMERL_VAR": str(tmp / "var"),
            "BUMMERL_HOUSE_TOKEN": house})
        self.processes: list[subprocess.Popen[bytes]] = []
        self.images: list[str] = []
        self.ticked = False  # the ladder ran: this process has the workers' channel open

    def register(self, name: str) -> tuple[int, str]:
        bot, token = bots.register_bot(name, sessions=self.sessions)
        assert token is not None
        return bot.id, token

    def kit(self, token: str, name: str, *args: str) -> subprocess.Popen[bytes]:
        """The kit on the host playing RandomBot as the bot of `token` (its output in a file)."""
        out = open(self.tmp / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        process = subprocess.Popen(
            [sys.executable, "-m", "client", f"{BOT_FILE}:RandomBot", "--server",
             self.server.address, "-q", *args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            env={**{k: v for k, v in os.environ.items() if k != "BUMMERL_HOUSE_TOKEN"},
                 "BUMMERL_TOKEN": token})
        out.close()
        self.processes.append(process)
        return process

    def connected(self, bot_id: int) -> datetime | None:
        with self.sessions() as s:
            bot = s.get(Bot, bot_id)
            return aware(bot.connected_since) if bot else None

    def all_connected(self, bot_ids: list[int]) -> bool:
        with self.sessions() as s:
            return s.scalar(select(Bot.id).where(Bot.id.in_(bot_ids),
                                                 Bot.connected_since.is_(None)).limit(1)) is None

    def challenge(self, token: str, opponent: str, count: int, move_ms: int = 0) -> list[int]:
        """`count` matches of the bot of `token` against `opponent` (`move_ms`: their move time,
        with a bank of 1 ms; 0: the service's time control)."""
        control = match_pb2.TimeControl(move_ms=move_ms, bank_ms=1) if move_ms else None
        reply = bot_pb2_grpc.BotServiceStub(self.channel).Challenge(
            bot_pb2.ChallengeRequest(opponent=opponent, matches=count, time_control=control),
            metadata=(("authorization", f"Bearer {token}"),), timeout=30)
        return [m.match_id for m in reply.matches]

    def over(self, match_ids: list[int]) -> bool:
        with self.sessions() as s:
            return s.scalar(select(Match.id).where(Match.id.in_(match_ids),
                                                   Match.state != FINISHED).limit(1)) is None

    def play(self, sparring: str, opponent: str, count: int) -> list[int]:
        """`count` matches of sparring against `opponent`, to their end; their ids."""
        ids = self.challenge(sparring, opponent, count)
        wait_until(lambda: self.over(ids), f"the matches {ids} against {opponent} to end")
        return ids

    def ladder(self, bot_id: int, since: float) -> tuple[float, float, float]:
        """The ladder's tick (`workers.ladder.tick`: what beat's `bummerl.ladder_tick` runs on a
        worker, pairing the connected bots) once, which must pair the bot `bot_id`; its first
        ladder match to its end. When that match was created and when it finished (the
        service's clock), in s after `since` (a time.time()), and how long the tick took."""
        from workers import ladder

        began = time.perf_counter()
        self.ticked = True
        started = ladder.tick(sessions=self.sessions)
        took = time.perf_counter() - began
        ids = [m for made in started.values() for m in made]
        with self.sessions() as s:
            mine = s.scalars(select(Match).where(Match.id.in_(ids), or_(
                Match.bot0_id == bot_id, Match.bot1_id == bot_id)).order_by(Match.id)).first()
            if mine is None:
                why = {p: ladder.report_idle(p, self.sessions).reason for p in started}
                raise RuntimeError(f"the ladder's tick did not pair bot {bot_id}: it started "
                                   f"{started}; {why}")
            match_id = mine.id
        wait_until(lambda: self.over([match_id]), f"the ladder match {match_id} to end")
        with self.sessions() as s:
            match = s.get(Match, match_id)
            assert match is not None and match.finished_at is not None
            return (aware(match.created_at).timestamp() - since,
                    aware(match.finished_at).timestamp() - since, took)

    def gaps(self, bot_id: int, match_ids: list[int]) -> tuple[list[float], int]:
        """The bot's turn gaps (ms) in the matches, and how many of them it did not play out."""
        found: list[float] = []
        with self.sessions() as s:
            matches = s.scalars(select(Match).where(Match.id.in_(match_ids))).all()
            spoilt = sum(m.end_reason != PLAYED for m in matches)
            for m in matches:
                seat = 0 if m.bot0_id == bot_id else 1
                previous = aware(m.created_at)
                for action in s.scalars(select(ActionLog).where(
                        ActionLog.match_id == m.id).order_by(ActionLog.seq)):
                    at = aware(action.created_at)
                    if action.seat == seat:
                        found.append((at - previous).total_seconds() * 1000)
                    previous = at
        return found, spoilt

    def close(self) -> None:
        """Stop what it started and remove the containers and images it made."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        try:
            names = [c.name for c in podman.containers(self.label)]
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: podman.stop(n, grace_s=0), names))
            with self.sessions() as s:
                self.images += [i for i in s.scalars(select(HostedVersion.image)) if i]
            for image in dict.fromkeys(self.images):
                podman.remove_image(image)
        finally:
            self.channel.close()
            if self.ticked:  # closed before the service stops (else gRPC logs its goaway)
                from workers.service import service

                service().channel.close()
            self.server.stop(grace=0)
            self.sessions.kw["bind"].dispose()
            shutil.rmtree(self.socket_dir, ignore_errors=True)


@contextmanager
def database(kind: str, tmp: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tmp / 'bench.sqlite3'}"
        return
    from workers.testing import fresh_postgres

    with fresh_postgres(POSTGRES) as url:
        yield url


# --- the figures ----------------------------------------------------------------------------
def ratio(value: float, peer: float) -> str:
    return f"{value / peer:.2f}x" if peer > 0 else "n/a"


def row(label: str, value: float, peer: float, unit: str, note: str) -> None:
    digits = 1 if unit in ("s", "MB") else 2
    print(f"{label:<38} {value:>10.{digits}f} {unit:<5} {peer:>10.{digits}f} {unit:<5} "
          f"{ratio(value, peer):>8}  {note}", flush=True)


@dataclass
class First:
    """Figure 1's times (s), and what the later figures use."""

    times: dict[str, float]
    hosted_id: int
    remote_id: int
    remote_pid: int
    version_id: int
    image: str


def first_match(site: Site, sparring: str) -> First:
    """Figure 1: the hosted bot from upload to its first ladder match over, beside the remote
    bot's same steps; and the ids and tokens the later figures use. At each ladder tick only
    sparring and the bot measured are connected, so the tick pairs the two."""
    times: dict[str, float] = {}
    # the remote peer of the validation match: its challenge, then its kit for one match
    first_id, first_token = site.register("remote-first")
    start = time.perf_counter()
    (match_id,) = site.challenge(first_token, "sparring", 1)
    process = site.kit(first_token, "remote-first", "--matches", "1")
    wait_until(lambda: site.over([match_id]), "the remote bot's first match to end")
    times["remote_first"] = time.perf_counter() - start
    process.wait(30)
    wait_until(lambda: site.connected(first_id) is None, "the remote bot to leave")

    # the remote peer of the first ladder match: its process started, connected, the tick
    ladder_id, ladder_token = site.register("remote-ladder")
    wall, start = time.time(), time.perf_counter()
    process = site.kit(ladder_token, "remote-ladder", "--matches", "1")
    wait_until(lambda: site.connected(ladder_id), "the remote bot to connect")
    times["remote_connected"] = time.perf_counter() - start
    times["remote_ladder_started"], times["remote_ladder"], times["remote_tick"] = \
        site.ladder(ladder_id, wall)
    process.wait(30)
    wait_until(lambda: site.connected(ladder_id) is None, "the remote bot to leave")

    from workers import hosted as supervisor

    hosted_id, hosted_token = site.register("hosted")
    wall, start = time.time(), time.perf_counter()
    hosting_pb2_grpc.HostingServiceStub(site.channel).UploadVersion(
        hosting_pb2.UploadVersionRequest(version="1.0", entry=ENTRY,
                                         archive=pack(BOT_FILE, ENTRY)),
        metadata=(("authorization", f"Bearer {hosted_token}"),), timeout=30)
    with site.sessions() as s:
        version_id = s.scalar(select(HostedVersion.id).where(HostedVersion.bot_id == hosted_id))
    assert version_id is not None, "the upload left no version"
    state = supervisor.build(version_id, sessions=site.sessions)
    times["live"] = time.perf_counter() - start
    with site.sessions() as s:
        row_ = s.get(HostedVersion, version_id)
        assert row_ is not None
        if state != hosted.LIVE:
            raise RuntimeError(f"the hosted version is {state}, not live: {row_.reason}")
        image = row_.image or ""
        site.images.append(image)
        match = s.get(Match, row_.validation_match_id)
        assert match is not None and match.finished_at is not None
        times["built"] = aware(match.created_at).timestamp() - wall
        times["validated"] = aware(match.finished_at).timestamp() - wall
    wait_until(lambda: site.connected(hosted_id) is None, "the validation container to leave")

    # live: the supervisor's round starts its container; once connected, the ladder's tick
    start = time.perf_counter()
    supervisor.reconcile_once(sessions=site.sessions)
    wait_until(lambda: site.connected(hosted_id), "the hosted bot to connect")
    times["hosted_connected"] = time.perf_counter() - start
    times["hosted_ladder_started"], times["hosted_ladder"], times["hosted_tick"] = \
        site.ladder(hosted_id, wall)

    # the remote bot of figures 2, 3 and 5 (connected for challenges: the ladder has no tick)
    remote_id, remote_token = site.register("remote")
    site.kit(remote_token, "remote")
    wait_until(lambda: site.connected(remote_id), "the remote bot to connect")
    return First(times, hosted_id, remote_id, site.processes[-1].pid, version_id, image)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=50,
                        help="hosted bots at once (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=6,
                        help="rounds of turn-gap matches (default %(default)s)")
    parser.add_argument("--per-round", type=int, default=2,
                        help="matches a round for each bot (default %(default)s)")
    parser.add_argument("--idle-seconds", type=float, default=10.0,
                        help="the idle window memory and CPU are measured over (default "
                             "%(default)s)")
    parser.add_argument("--parallel", type=int, default=4,
                        help="containers started at a time (default %(default)s)")
    parser.add_argument("--spinners", type=int, default=1,
                        help="hosted bots spinning the CPU beside the remote bot's matches "
                             "(default %(default)s: one takes its quota, half a core)")
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--quick", action="store_true",
                        help="the smallest run: --bots 2 --rounds 1 --per-round 1 "
                             "--idle-seconds 1")
    args = parser.parse_args(argv)
    if args.quick:
        args.bots, args.rounds, args.per_round, args.idle_seconds = 2, 1, 1, 1.0
    if args.bots < 2 or min(args.rounds, args.per_round, args.parallel, args.spinners) < 1 \
            or args.idle_seconds <= 0 or args.per_round > 20:
        parser.error("--bots must be at least 2, --rounds, --parallel, --spinners and "
                     "--per-round (at most 20) at least 1, --idle-seconds above 0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up on a kill too
    if not podman.available():
        print("podman does not answer here (Debian: apt-get install podman runc)",
              file=sys.stderr)
        return 2
    started = time.perf_counter()
    base_cached = podman.image_exists(f"{podman.BASE_NAME}:{podman.kit_hash()}")
    base = podman.ensure_base()
    site_name = f"bench{uuid.uuid4().hex[:8]}"
    print(f"hosted bots beside a remote bot, both examples/random_bot.py's RandomBot against "
          f"one kit opponent; {args.db}, podman {podman.podman('--version').stdout.split()[-1]}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at the start (a shared "
          f"machine); base {base} "
          + ("cached" if base_cached else
             f"built first in {time.perf_counter() - started:.0f} s (not in the figures)")
          + f"; its containers and images named {site_name}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bummerl-bench-hosted-"))
    try:
        with database(args.db, tmp) as url:
            site = Site(url, tmp, site_name)
            try:
                run(site, args)
            finally:
                site.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load {os.getloadavg()[0]:.2f} at the end; {time.perf_counter() - started:.0f} s in "
          f"all; every container and image it made ({site_name}) removed", flush=True)
    return 0


def run(site: Site, args: argparse.Namespace) -> None:
    sparring_id, sparring = site.register("sparring")
    site.kit(sparring, "sparring")
    wait_until(lambda: site.connected(sparring_id), "sparring to connect")
    first = first_match(site, sparring)
    t, hosted_id, remote_id = first.times, first.hosted_id, first.remote_id
    from workers import hosted as supervisor

    hosted_name = supervisor.container_name(first.version_id)
    print(f"{'':<38} {'hosted':>16} {'remote (peer)':>16} {'ratio':>8}", flush=True)
    peer = "peer: its challenge, then `python -m client --matches 1` started, to its end"
    row("upload -> validation match over", t["validated"], t["remote_first"], "s",
        f"(its image built {t['built']:.1f} s after the upload, on the cached base; {peer})")
    row("upload -> live", t["live"], t["remote_first"], "s", "(the same peer)")
    row("live -> connected", t["hosted_connected"], t["remote_connected"], "s",
        "(the supervisor's round starts its container; peer: its process started)")
    ladder = ("the ladder's tick (workers.ladder.tick) called once it is connected pairs it "
              "with sparring")
    row("live -> first ladder match over", t["hosted_ladder"] - t["live"], t["remote_ladder"],
        "s", f"({ladder}; peer: its process started, `python -m client --matches 1`)")
    row("upload -> first ladder match started", t["hosted_ladder_started"],
        t["remote_ladder_started"], "s",
        f"(the match created, the service's clock; the tick took {t['hosted_tick']:.2f} s / "
        f"{t['remote_tick']:.2f} s; peer: process started -> the same)")
    row("upload -> first ladder match over", t["hosted_ladder"], t["remote_ladder"], "s",
        "(peer: process started -> first ladder match over)")

    # 2. idle, connected, in the same window
    time.sleep(1.0)
    found = idle({"hosted": lambda: container_pids(hosted_name),
                  "remote": lambda: [first.remote_pid]}, args.idle_seconds)
    one = found["hosted"]
    row("idle memory (RSS)", one.rss_mb, found["remote"].rss_mb, "MB",
        f"(the container's processes, of which private {one.anon_mb:.1f} MB / "
        f"{found['remote'].anon_mb:.1f} MB; its cgroup with page cache: "
        f"{cgroup_mb([hosted_name]):.1f} MB)")
    row("idle CPU", one.cpu_ms_s, found["remote"].cpu_ms_s, "ms/s",
        f"(connected, no match, the same {args.idle_seconds:g} s)")

    # 3. turn gaps, hosted and remote in turn
    gaps: dict[str, list[float]] = {"hosted": [], "remote": []}
    spoilt = 0
    for r in range(args.rounds):
        for name in (("hosted", "remote") if r % 2 == 0 else ("remote", "hosted")):
            ids = site.play(sparring, name, args.per_round)
            found_gaps, bad = site.gaps(hosted_id if name == "hosted" else remote_id, ids)
            gaps[name] += found_gaps
            spoilt += bad
    note = (f"(turn sent -> answer in, the service's clock; {len(gaps['hosted'])} / "
            f"{len(gaps['remote'])} turns, {args.rounds} rounds of {args.per_round} matches "
            f"each against sparring, in turn; matches not played out: {spoilt})")
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        row(f"turn gap {label}", quantile(gaps["hosted"], q), quantile(gaps["remote"], q), "ms",
            note if q == 0.5 else "")

    fleet(site, args, sparring, base_image=first.image, one=one,
          one_connect=t["hosted_connected"], hosted_name=hosted_name, before=gaps["hosted"])
    spinning(site, args, sparring, remote_id)


def fleet(site: Site, args: argparse.Namespace, sparring: str, *, base_image: str, one: Idle,
          one_connect: float, hosted_name: str, before: list[float]) -> None:
    """Figure 4: `args.bots` hosted bots of one image at once. The turn gap with 0 others is
    taken before them (`before`: the first hosted bot's, figure 3) and after them (one of them,
    once the others are stopped), so that a load of the machine that comes and goes during
    the run shows in both."""
    n = args.bots
    podman.stop(hosted_name, grace_s=0)  # the earlier hosted bot leaves: N are hosted now
    registered = [site.register(f"fleet-{i}") for i in range(n)]
    names = [f"{site.site}-fleet-{i}" for i in range(n)]
    limits = Limits.from_env()

    def start(i: int) -> None:
        podman.start(names[i], base_image, registered[i][1], site.socket_dir, limits,
                     {"bummerl.site": site.site, "bummerl.bench": "fleet"})

    available = available_mb()
    began = time.perf_counter()
    with ThreadPoolExecutor(args.parallel) as pool:
        list(pool.map(start, range(n)))
    launched = time.perf_counter() - began
    ids = [bot_id for bot_id, _ in registered]
    wait_until(lambda: site.all_connected(ids), f"all {n} hosted bots to connect", 600, 0.1)
    connected = time.perf_counter() - began
    row(f"{n} hosted: start -> all connected", connected, one_connect, "s",
        f"(podman run of all {n} took {launched:.1f} s, {args.parallel} at a time; peer: one "
        "hosted bot's live -> connected)")
    time.sleep(1.0)
    found = idle({name: partial(container_pids, name) for name in names}, args.idle_seconds)
    memory = sum(f.rss_mb for f in found.values())
    cpu = sum(f.cpu_ms_s for f in found.values())
    anon = sum(f.anon_mb for f in found.values())
    row(f"{n} hosted: idle memory (RSS) in all", memory, n * one.rss_mb, "MB",
        f"(peer: {n} x the one idle hosted bot; private {anon:.0f} MB; their cgroups with page "
        f"cache: {cgroup_mb(names):.0f} MB; the machine's MemAvailable fell "
        f"{available - available_mb():.0f} MB)")
    row(f"{n} hosted: idle CPU in all", cpu, n * one.cpu_ms_s, "ms/s",
        f"(peer: {n} x the one idle hosted bot; {os.cpu_count()} cores = "
        f"{1000 * (os.cpu_count() or 1)} ms/s)")

    def gaps_of(playing: str) -> tuple[list[float], int]:
        all_gaps: list[float] = []
        spoilt = 0
        for _ in range(args.rounds):
            match_ids = site.play(sparring, playing, args.per_round)
            found_gaps, bad = site.gaps(ids[0], match_ids)
            all_gaps += found_gaps
            spoilt += bad
        return all_gaps, spoilt

    crowded, bad_crowded = gaps_of("fleet-0")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda name: podman.stop(name, grace_s=0), names[1:]))
    after, bad_alone = gaps_of("fleet-0")
    alone = before + after
    note = (f"(one of them with {n - 1} others idle; peer: 0 others, the first hosted bot "
            f"before (p50 {quantile(before, 0.5):.2f} ms) and the same one once the others are "
            f"stopped (p50 {quantile(after, 0.5):.2f} ms); {len(crowded)} / {len(alone)} turns; "
            f"not played out: {bad_crowded + bad_alone})")
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        row(f"{n} hosted: turn gap {label}", quantile(crowded, q), quantile(alone, q), "ms",
            note if q == 0.5 else "")


def spinning_now(names: list[str], seconds: float = 0.3) -> bool:
    """Whether every container of `names` runs a CPU a tenth of a core or more (a kit waiting
    for its turn takes a few ms a second)."""
    pids = [container_pids(name) for name in names]
    before = [cpu_ns(p) for p in pids]
    time.sleep(seconds)
    return all((cpu_ns(p) - b) / 1e9 / seconds >= 0.1 for p, b in zip(pids, before, strict=True))


@dataclass
class SpinRound:
    """One round of figure 5 with spinners."""

    ids: list[int]  # the remote bot's matches
    cpu_ms_s: float  # the spinners' CPU in all while the remote played
    forfeited: int  # of their matches, forfeited on time by the spinner
    total: int  # their matches
    through: int  # of them, still running when the remote's matches were over


def spin_round(site: Site, args: argparse.Namespace, sparring: str, image: str,
               limits: Limits, r: int) -> SpinRound:
    """`args.spinners` containers of the spinning bot start, sparring challenges each, and once
    they spin the remote bot plays its matches; then their matches end and they are stopped."""
    k = args.spinners
    names = [f"{site.site}-spin-{r}-{i}" for i in range(k)]
    registered = [site.register(f"spin-{r}-{i}") for i in range(k)]
    spinner_ids = [bot_id for bot_id, _ in registered]

    def start(i: int) -> None:
        podman.start(names[i], image, registered[i][1], site.socket_dir, limits,
                     {"bummerl.site": site.site, "bummerl.bench": "spin"})

    try:
        with ThreadPoolExecutor(args.parallel) as pool:
            list(pool.map(start, range(k)))
        wait_until(lambda: site.all_connected(spinner_ids), f"the {k} spinning bots to connect")
        spins = [m for i in range(k)
                 for m in site.challenge(sparring, f"spin-{r}-{i}", 1, SPIN_MOVE_MS)]
        wait_until(lambda: spinning_now(names), "the spinning bots to spin", 60, 0)
        pids = [p for name in names for p in container_pids(name)]
        before, began = cpu_ns(pids), time.perf_counter()
        ids = site.play(sparring, "remote", args.per_round)
        cpu = (cpu_ns(pids) - before) / 1e6 / (time.perf_counter() - began)
        through = sum(not site.over([m]) for m in spins)
        wait_until(lambda: site.over(spins), "the spinning bots' matches to end")
        with site.sessions() as s:
            forfeited = sum(
                m.end_reason == FORFEIT_TIMEOUT
                and m.forfeit_seat == (0 if m.bot0_id in spinner_ids else 1)
                for m in s.scalars(select(Match).where(Match.id.in_(spins))))
    finally:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda name: podman.stop(name, grace_s=0), names))
    return SpinRound(ids, cpu, forfeited, len(spins), through)


def spinning(site: Site, args: argparse.Namespace, sparring: str, remote_id: int) -> None:
    """Figure 5: the remote bot's turn gap beside `args.spinners` hosted bots spinning the CPU,
    in rounds interleaved with rounds of none (the floor), the order alternating."""
    k = args.spinners
    limits = Limits.from_env()
    image = f"localhost/{site.site}-spin/bot:latest"
    site.images.append(image)
    built = podman.build_version(image, pack(SPIN_FILE, SPIN_ENTRY), SPIN_ENTRY)
    if not built.ok:
        raise RuntimeError(f"the spinning bot's image did not build:\n{built.log}")
    gaps: dict[int, list[float]] = {0: [], k: []}
    spoilt = 0
    rounds: list[SpinRound] = []
    for r in range(args.rounds):
        for count in ((0, k) if r % 2 == 0 else (k, 0)):
            if count == 0:
                ids = site.play(sparring, "remote", args.per_round)
            else:
                rounds.append(spin_round(site, args, sparring, image, limits, r))
                ids = rounds[-1].ids
            found_gaps, bad = site.gaps(remote_id, ids)
            gaps[count] += found_gaps
            spoilt += bad
    print(f"{'the remote bot beside:':<38} {f'{k} spinning':>16} {'none (peer)':>16} "
          f"{'ratio':>8}", flush=True)
    note = (f"(the remote bot's turn gaps beside {k} hosted bot(s) spinning the CPU, each held "
            f"to {limits.cpus:g} core; peer: beside none; {len(gaps[k])} / {len(gaps[0])} "
            f"turns, {args.rounds} rounds of {args.per_round} matches each, in turn; not played "
            f"out: {spoilt})")
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        row(f"{k} spinning: remote turn gap {label}", quantile(gaps[k], q), quantile(gaps[0], q),
            "ms", note if q == 0.5 else "")
    row(f"{k} spinning: their CPU in all", sum(x.cpu_ms_s for x in rounds) / len(rounds),
        k * limits.cpus * 1000, "ms/s",
        f"(while the remote played; peer: their quota, {k} x {limits.cpus:g} core)")
    total = sum(x.total for x in rounds)
    print(f"{f'{k} spinning: forfeited on time':<38} {sum(x.forfeited for x in rounds):>10} of "
          f"{total} matches (theirs, a move time of {SPIN_MOVE_MS} ms; still running when the "
          f"remote's matches were over: {sum(x.through for x in rounds)} of {total})",
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
