"""`bummerl up`: the whole site on one machine, with the ladder's standings live in the terminal.

Starts the gRPC engine service (in this process, with the workers' hooks), a Celery worker and
the beat scheduler (subprocesses), registers the house bots, and shows the standings as they
change until Ctrl-C (without a terminal: a line per finished match, then the standings). The
operator token is kept across restarts beside the database, unless one is given
(cli/tokenfile.py). The worker submits the house bots' moves to the service over gRPC with a
house token made for this run (`BUMMERL_HOUSE_TOKEN`, unless one is set) at the service's
address (`BUMMERL_SERVICE_ADDRESS`), both passed to it by environment. With no `REDIS_URL` /
`DATABASE_URL` it runs on the embedded defaults: kombu's filesystem broker and SQLite under var/.
An outside bot can join while it runs: register it with the operator token shown (piped, the
hint reads it from its file instead), then run it with the client kit; the ladder pairs it once
it is registered or active. The Prometheus metrics of the service, the workers and the
dashboard are served on one port (`--metrics`, cli/upmetrics.py).
With the dashboard on, it also builds the kit's wheel for the dashboard to serve (at /kit) when
it is missing or older than its sources (cli/kitwheel.py).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from events.levels import LEVELS

STOP_GRACE_S = 1.0  # how long the workers get to finish their tasks at a stop
UNWRAPPED = 10_000  # the console's width with no terminal: no line is ever wrapped

# The house bots every site has: bot name → house strategy (the levels: house-level-1 … 5).
HOUSE_BOTS = {"house-random": "random", "house-bully": "bully", "house-rdeep": "rdeep",
              "house-champion": "champion",
              **{level.bot_name: level.strategy for level in LEVELS}}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "up", help="run service + worker + scheduler; house bots play a ladder, standings live",
        description="Start the engine service, a Celery worker and the beat scheduler on the "
                    "configured (default: embedded) database and broker; house bots play a "
                    "ladder and the standings are shown live until Ctrl-C.")
    parser.add_argument("--address", default="127.0.0.1:50051",
                        help="host:port of the gRPC service (default: %(default)s)")
    parser.add_argument("--matches", type=int, default=int(
        os.environ.get("BUMMERL_LADDER_MATCHES", "3")),
        help="ladder matches kept going per profile (default 3)")
    parser.add_argument("--profiles", default=os.environ.get("BUMMERL_LADDER_PROFILES", "soft"),
                        help="rules profiles the ladder runs, comma-separated (default soft)")
    parser.add_argument("--web", default="127.0.0.1:8000", metavar="HOST:PORT",
                        help="where the web dashboard listens (default: %(default)s; "
                             "'off': no dashboard)")
    parser.add_argument("--sockets", default="auto", metavar="HOST:PORT",
                        help="where the socket tier serves the people's tables' live streams "
                             "(default: the dashboard's host and next port, 127.0.0.1:8001; "
                             "any free port when the dashboard's is 0; 'off': the dashboard's "
                             "own feed)")
    port = os.environ.get("BUMMERL_METRICS_PORT") or "9100"
    parser.add_argument("--metrics", metavar="HOST:PORT", default=f"127.0.0.1:{port}",
        help="where the Prometheus metrics of the service, the workers and the dashboard are "
             "served, at /metrics (default: %(default)s, the port from $BUMMERL_METRICS_PORT "
             "if set; 'off': none)")
    parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
    parser.add_argument("--duration", type=float, default=None,
                        help="stop after this many seconds (default: run until Ctrl-C)")
    parser.add_argument("--until-rated", type=int, default=None, metavar="N",
                        help="stop once N ladder matches are rated (default: run on)")
    parser.add_argument("--operator-token", default=os.environ.get("BUMMERL_OPERATOR_TOKEN", ""),
                        help="the operator token (default: $BUMMERL_OPERATOR_TOKEN, else the "
                             "one kept beside the database, made at the first start)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cli import upmetrics
    from cli.errors import console as new_console
    from cli.kitwheel import BUILD, kit_url
    from db.base import var_dir
    from db.migrate import upgrade
    from workers import app as celery_app
    from workers import procs

    # The workers report their metrics to this process (cli/upmetrics.py); none serves its own.
    os.environ.pop("BUMMERL_METRICS_PORT", None)
    console = new_console()
    if not console.is_terminal:  # a pipe or a file: a line is never cut (a command in it
        console.width = UNWRAPPED  # copied would break); tables take their natural width
        console.soft_wrap = True
    if args.web != "off" and not os.environ.get("BUMMERL_KIT_URL") and BUILD.is_file():
        # what the service names to a kit too old for it: the dashboard's wheel (cli/kitwheel)
        os.environ["BUMMERL_KIT_URL"] = kit_url(args.web)
    os.environ["BUMMERL_LADDER_MATCHES"] = str(args.matches)
    os.environ["BUMMERL_LADDER_PROFILES"] = args.profiles
    token, token_note, token_file = operator_token(args)
    if not os.environ.get("BUMMERL_HOUSE_TOKEN"):  # the workers' credential for house seats
        os.environ.pop("BUMMERL_HOUSE_TOKEN_SHA256", None)
        os.environ["BUMMERL_HOUSE_TOKEN"] = secrets.token_urlsafe(32)
    from cli.tokenfile import ensure_web_token  # the web's credential for PeopleService
    from db.base import database_url

    ensure_web_token(database_url(), var_dir())
    logs = var_dir() / "log"
    logs.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(filename=logs / "service.log", level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")

    # SIGINT (Ctrl-C, or `kill -INT` with no terminal), SIGTERM and SIGHUP (a closed terminal,
    # `kill`) all stop the site the same way, so the worker and beat subprocesses (in sessions
    # of their own) are stopped, never orphaned, and the final standings are printed. They
    # only ask `watch` to stop: an exception thrown into whatever ran when the signal came
    # (a lock held, a database call) could escape the clean-up. A second Ctrl-C interrupts.
    _stop.clear()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _ask_to_stop)
    upgrade()
    ensure_house_bots()
    from services.api.server import create_server
    from services.core import hooks

    hooks.install(os.environ.get("BUMMERL_HOOKS", "workers.hooks:install"))
    from cli.serve import cannot_bind

    hosted = hosted_socket(var_dir())
    if hosted is not None:  # for the workers that start hosted bots (docs/hosted.md)
        os.environ["BUMMERL_HOSTED_SOCKET"] = str(hosted)
        os.environ.setdefault("BUMMERL_HOSTING", "podman")  # the service takes uploads
    with cannot_bind(args.address, "--address"):
        server = create_server(args.address, hosted_socket=hosted).start()
    os.environ["BUMMERL_SERVICE_ADDRESS"] = local_address(server.address)  # for the worker
    started: list[Any] = []
    dashboard = metrics = sockets = None
    kit_build = None
    try:
        metrics, metrics_url = upmetrics.start(args.metrics)
        env = metrics.worker_env() if metrics is not None else {}
        started.append(procs.start_worker(env, queues="moves,batch",
                                          concurrency=args.concurrency, name="up",
                                          logfile=logs / "worker.log"))
        started.append(procs.start_worker(env, queues="people", concurrency=procs.PEOPLE_THREADS,
                                          pool="threads", name="up-people",
                                          logfile=logs / "worker-people.log"))
        if hosted is not None:  # hosted bots' builds, validations and supervisor
            started.append(procs.start_worker(env, queues="hosting", concurrency=2,
                                              name="up-hosting",
                                              logfile=logs / "worker-hosting.log"))
        started.append(procs.start_beat(logfile=logs / "beat.log"))
        dashboard, web_url = start_dashboard(args.web)
        sockets, sockets_url = start_sockets(args.sockets, dashboard)
        kit_note = None
        if dashboard is not None:  # the kit's wheel, for the dashboard to serve (web.kit)
            from cli.kitwheel import kit_dir, start_build

            folder = kit_dir()
            folder.mkdir(parents=True, exist_ok=True)
            kit_build, kit_note = start_build(folder, logs / "kit.log")
        header = {
            "service": server.address,
            "broker": f"embedded (filesystem, {celery_app.broker_dir()})"
            if celery_app.is_embedded() else "redis",
            "database": _safe_url(),
            "logs": str(logs),
            "token": token,
            "token_note": token_note,
            "token_file": token_file,
            "piped": not console.is_terminal,
            "command": bummerl_command(),
            "web": web_url,
            "sockets": sockets_url,
            "metrics": metrics_url,
            "kit": kit_note,
        }
        for line in header_lines(header):
            console.print(line, soft_wrap=True)  # a terminal folds it: copied, it is whole
        if not watch(header, args, started, console):
            return 1
    except KeyboardInterrupt:
        pass
    finally:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):  # nor cut the clean-up
            signal.signal(signum, signal.SIG_IGN)
        stop_processes(started, dashboard)
        if sockets is not None:
            sockets.stop()
        if hosted is not None:  # its hosted bots stop with it (the supervisor starts them again)
            stop_hosted_bots()
        if kit_build is not None and kit_build.poll() is None:
            kit_build.terminate()
            kit_build.wait(10)
        server.stop()
        if metrics is not None:
            metrics.close()
    return 0


def watch(header: dict[str, Any], args: argparse.Namespace, started: list[Any],
          console: Any) -> bool:
    """Show the live standings until the time is up, N matches are rated, a SIGTERM or
    SIGHUP came, or a process stopped (then False). Without a terminal (`bummerl up | tee
    log`, a service manager) a live table cannot redraw: a line per finished match instead,
    the standings at the end."""
    from rich.live import Live

    from cli.matchlines import FinishedMatches

    end = None if args.duration is None else time.monotonic() + args.duration
    finished = None if console.is_terminal else FinishedMatches()
    with Live(render(header, args.profiles), console=console, refresh_per_second=2,
              screen=False) if finished is None else contextlib.nullcontext() as live:
        while end is None or time.monotonic() < end:
            if _stop.wait(1):
                break
            if finished is not None:
                for line in finished.lines():
                    print(line, flush=True)
            if args.until_rated is not None and rated_count() >= args.until_rated:
                break
            if any(proc.poll() is not None for proc in started):
                print(f"error: a worker or the scheduler stopped: see the logs in "
                      f"{header['logs']}", file=sys.stderr, flush=True)
                return False
            if live is not None:
                live.update(render(header, args.profiles))
        ask_to_stop(started)  # their grace runs while the last standings are drawn
        if live is not None:
            live.update(render(header, args.profiles))
    if finished is not None:
        console.print(render(header, args.profiles))
    return True


def operator_token(args: argparse.Namespace) -> tuple[str | None, str, Path | None]:
    """The operator token to show (None: the person gave it, or gave only its SHA-256, or
    registration is open), a note on where it comes from, and the file it is kept in
    (cli/tokenfile.py; None when it is not kept)."""
    from cli.tokenfile import OPERATOR
    from db.base import database_url, var_dir

    if args.operator_token:  # the person knows it: not shown
        os.environ["BUMMERL_OPERATOR_TOKEN"] = args.operator_token
        return None, "the one given (--operator-token or $BUMMERL_OPERATOR_TOKEN)", None
    if os.environ.get("BUMMERL_OPERATOR_TOKEN_SHA256") or os.environ.get(
            "BUMMERL_OPEN_REGISTRATION"):
        return None, "", None
    path = OPERATOR.path_for(database_url(), var_dir())
    token, made = OPERATOR.keep(path)
    os.environ["BUMMERL_OPERATOR_TOKEN"] = token
    return token, f"{'new, ' if made else ''}kept in {path}", path


def bummerl_command() -> str:
    """How a person starts `bummerl` from where they are: `bummerl` when that is the one on
    the PATH, else the script of this environment (`.venv/bin/bummerl` from the repository's
    root, its full path elsewhere), else this Python running the module."""
    here = Path(os.path.abspath(sys.executable)).parent / "bummerl"  # the venv's, unresolved
    found = shutil.which("bummerl")
    if found and (not here.exists() or os.path.samefile(found, here)):
        return "bummerl"
    if here.exists():
        relative = os.path.relpath(here)
        return relative if not relative.startswith("..") else shlex.quote(str(here))
    return f"{shlex.quote(sys.executable)} -m cli.main"


def stop_processes(started: list[Any], dashboard: Any, grace: float = STOP_GRACE_S) -> None:
    """Stop the worker and beat subprocesses, and the dashboard meanwhile. Each is asked to
    stop (SIGTERM: a worker finishes the task it runs, most take milliseconds) and given
    `grace` seconds, then killed with its process group: Celery's own shutdown takes seconds
    more once its tasks are done (billiard's pool threads poll once a second). Nothing a
    clean stop keeps is lost by that: an action is applied by the service, whole or not at
    all, and the service stops after them; a task cut short is owed work the site redoes
    after a restart (the service announces the pending turns of the matches it resumes, the
    ladder's tick rates the finished matches left unrated)."""
    from workers import procs

    end = ask_to_stop(started, grace)
    if dashboard is not None:
        dashboard.stop()
    for proc in started:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, end - time.monotonic()))
    for proc in started:
        procs.kill(proc)


_asked: dict[int, float] = {}  # pid of a process asked to stop → the end of its grace


def ask_to_stop(started: list[Any], grace: float = STOP_GRACE_S) -> float:
    """SIGTERM each process not asked yet (all at once: their graces run together); when the
    last grace ends."""
    for proc in started:
        if proc.pid not in _asked and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            _asked[proc.pid] = time.monotonic() + grace
    return max((_asked.get(proc.pid, 0.0) for proc in started), default=0.0)


def stop_hosted_bots() -> None:
    """Stop the containers of this site's hosted bots (workers.hosted.site's label)."""
    from hosting import podman
    from workers.hosted import site

    try:
        for container in podman.containers(f"bummerl.site={site()}"):
            podman.stop(container.name, grace_s=2)
    except podman.PodmanError as e:
        logging.getLogger(__name__).warning("hosted bots not stopped: %s", e)


def hosted_socket(var: Path) -> Path | None:
    """The unix socket hosted bots' containers reach the service by (var/hosted/service.sock),
    where podman is installed; None where it is not, or where the path is too long for a unix
    socket (108 bytes)."""
    if shutil.which("podman") is None:
        return None
    path = var.resolve() / "hosted" / "service.sock"
    if len(str(path).encode()) >= 108:
        logging.getLogger(__name__).warning(
            "no socket for hosted bots: %s is longer than a unix socket's path may be", path)
        return None
    return path


def local_address(address: str) -> str:
    """The address a process on this machine reaches the service at (a wildcard host bound,
    e.g. 0.0.0.0:50051, is reached at 127.0.0.1:50051)."""
    host, _, port = address.rpartition(":")
    return f"127.0.0.1:{port}" if host in ("0.0.0.0", "[::]", "::", "") else address


_stop = threading.Event()  # set by SIGINT, SIGTERM or SIGHUP


def _ask_to_stop(signum: int, frame: Any) -> None:
    if signum == signal.SIGINT and _stop.is_set():  # Ctrl-C again: the person insists
        raise KeyboardInterrupt
    _stop.set()


def start_sockets(where: str, dashboard: Any) -> tuple[Any, str | None]:
    """The socket tier (web.sockets) in a thread at HOST:PORT ('auto': the dashboard's host and
    next port, or any free port when the dashboard's is 0; 'off', or no dashboard: none) and
    its URL, or None and why not. The dashboard then sends its tables there, with tickets
    signed by the secret both share."""
    if where == "off" or dashboard is None:
        return None, None
    from web.sockets.process import NotConfigured, Options, SocketTier

    web_host, web_port = dashboard.server.host, int(dashboard.server.port)
    if where == "auto":
        where = f"{web_host}:{web_port + 1 if web_port else 0}"
    host, _, port = where.rpartition(":")
    any_host = web_host in ("0.0.0.0", "::", "")  # reached by whatever name: any origin
    try:
        tier = SocketTier(Options(host or "127.0.0.1", int(port),
                                  secret=dashboard.app.secret_key,
                                  allow_origin="*" if any_host
                                  else f"http://{web_host}:{web_port}"))
        tier.start()
    except (ValueError, NotConfigured) as e:
        return None, f"not started ({where}: {e})"
    except OSError as e:
        return None, f"not started ({where} is in use or cannot be bound: {e.strerror or e})"
    dashboard.app.config["SOCKETS_URL"] = tier.url
    return tier, tier.url


def start_dashboard(where: str) -> tuple[Any, str | None]:
    """The web dashboard in a thread at HOST:PORT ('off': none) and its URL, or None and why
    not (a port in use does not stop the rest of the site)."""
    if where == "off":
        return None, None
    try:
        from web.server import Dashboard
    except ImportError as e:  # an install older than web/: bash scripts/setup refreshes it
        return None, f"not started ({e}; run bash scripts/setup)"
    host, _, port = where.rpartition(":")
    try:
        dashboard = Dashboard(host or "127.0.0.1", int(port))
    except ValueError as e:
        return None, f"not started ({where}: {e})"
    except (OSError, SystemExit):  # Werkzeug exits when it cannot bind (it says why on stderr)
        return None, f"not started ({where} is in use or cannot be bound)"
    from web.metrics import instrument

    dashboard.server.app = instrument(dashboard.server.app)  # counted for /metrics
    return dashboard.start(), dashboard.url


def rated_count() -> int:
    from sqlalchemy import func, select

    from db.base import session_factory
    from db.ratings import LadderMatch

    with session_factory()() as s:
        return s.scalar(select(func.count()).select_from(LadderMatch)
                        .where(LadderMatch.rated_at.is_not(None))) or 0


def ensure_house_bots() -> None:
    from db.models import HOUSE
    from services.core.errors import AlreadyExists
    from services.ops import bots

    for name, strategy in HOUSE_BOTS.items():
        with contextlib.suppress(AlreadyExists):
            bots.register_bot(name, kind=HOUSE, house_strategy=strategy)


def _safe_url() -> str:
    from sqlalchemy.engine import make_url

    from db.base import database_url

    return make_url(database_url()).render_as_string(hide_password=True)


def header_lines(header: dict) -> list[Any]:
    """The lines above the standings. Piped (`header["piped"]`: a log others may read), the
    join hint reads the operator token from its file instead of holding it."""
    from rich.markup import escape
    from rich.text import Text

    lines = [Text.from_markup(
        f"[bold]bummerl[/bold] service [cyan]{header['service']}[/cyan] · broker "
        f"{header['broker']} · database {header['database']} · logs {header['logs']}")]
    if header.get("web"):
        lines.append(Text.from_markup(f"dashboard [cyan]{escape(header['web'])}[/cyan]"))
    if header.get("sockets"):
        lines.append(Text.from_markup(f"tables' live streams [cyan]{escape(header['sockets'])}"
                                      "[/cyan]"))
    if header.get("metrics"):
        lines.append(Text.from_markup(f"metrics [cyan]{escape(header['metrics'])}[/cyan] "
                                      "(Prometheus: the service, the workers, the dashboard)"))
    if header.get("kit"):
        lines.append(Text(f"the bot kit ({header['web']}kit): {header['kit']}"))
    if header["token"]:
        command = header.get("command") or "bummerl"
        token = header["token"]
        if header.get("piped") and header.get("token_file"):
            token = f'"$(cat {shlex.quote(str(header["token_file"]))})"'
        lines.append(Text("join with a bot: ").append(
            f"{command} bot register NAME --server {header['service']} --operator-token "
            f"{token}", style="green").append(", then ").append(
            f"{command} bot run ...", style="green").append(" (see README)"))
    if header.get("token_note"):
        lines.append(Text(f"operator token: {header['token_note']}"))
    lines.append(Text("Ctrl-C stops everything."))
    return lines


def render(header: dict, profiles: str) -> Any:
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table

    from workers import ladder

    parts: list[Any] = []
    for profile in filter(None, (p.strip() for p in profiles.split(","))):
        table = Table(title=f"ladder standings · profile {profile}  (openskill μ ± 2σ, "
                            "ranked by μ − 3σ)", title_justify="left")
        for column, justify in (("#", "right"), ("bot", "left"), ("kind", "left"),
                                ("rating", "right"), ("μ−3σ", "right"), ("matches", "right"),
                                ("won", "right"), ("now", "right"), ("provisional", "left")):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for rank, st in enumerate(ladder.standings(profile), 1):
            kind = (st.strategy or "?" if st.kind == "house"
                    else f"remote {escape(st.version)}" if st.version else "remote")
            won = f"{st.wins / st.matches:.0%}" if st.matches else "–"
            table.add_row(str(rank), st.name, kind, f"{st.mu:.1f}±{2 * st.sigma:.1f}",
                          f"{st.ordinal:.1f}", str(st.matches), won,
                          str(st.playing) if st.playing else "",
                          "[yellow]yes[/yellow]" if st.provisional else "")
        parts.append(table)
        parts.append(ladder_line(profile))
        parts.append(running_table(profile))
    return Group(*parts)


def ladder_line(profile: str) -> Any:
    """One line under the standings: what the ladder does, or why it is idle and when the
    next match can come (`db.ladder_state`, as the dashboard's standings say it)."""
    from rich.text import Text

    from db.base import session_factory
    from db.ladder_state import ladder_state
    from db.settings import settings

    with session_factory()() as s:
        state = ladder_state(s, profile, settings().heartbeat_s)
    if not state.idle:
        return Text(f"ladder {state.reason}")
    return Text(f"ladder {state.reason}; next match {state.next_match}", style="bold yellow")


def running_table(profile: str) -> Any:
    from rich.table import Table
    from sqlalchemy import select

    from db.base import session_factory
    from db.models import Match
    from db.ratings import LadderMatch

    table = Table(title=f"ladder matches · profile {profile} (latest)", title_justify="left")
    for column in ("match", "seat 0", "seat 1", "counters", "hand", "state"):
        table.add_column(column)
    with session_factory()() as s:
        rows = s.scalars(select(Match).join(LadderMatch, LadderMatch.match_id == Match.id)
                         .where(LadderMatch.profile == profile)
                         .order_by(Match.id.desc()).limit(6)).unique()
        for m in rows:
            if m.state == "running":
                state = f"{m.bot(m.to_act).name} to act" if m.to_act is not None else "running"
            else:
                state = f"{m.bot(m.winner or 0).name} won ({m.end_reason})"
            table.add_row(str(m.id), m.bot0.name, m.bot1.name, f"{m.counter0}:{m.counter1}",
                          str(m.hand_number + 1), state)
    return table
