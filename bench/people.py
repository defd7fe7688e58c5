"""Benchmark: N people playing house bots through the web at once.

A whole site in processes of its own, on a fresh SQLite database (or `--database-url`): the
engine service (`bummerl serve`), Celery workers playing the house seats (`--concurrency`
processes on the `moves` queue, the remote bots' house turns; `--people-concurrency` threads on
the `people` queue, the house's answers to people, as `bummerl up` runs it), and
the web (waitress, `--table-streams` table streams). In this process:

- `--people` simulated people, each an HTTP client doing what the table page does (a guest
  session, the play form, the table's event stream, its JSON, actions POSTed with the CSRF
  token), each playing house-random at one table, all at once;
- `--remote` remote gRPC bots (the client kit) playing house-random, the same house turn without
  a person (no minimum think time).

Figures:
- person: from the person's action (the POST sent) to the house bot's answer being visible (the
  event of the stream, then the table's JSON showing it, as the page does), for each action
  after which the house is to act; beside it, the house's minimum think time
  (`--min-think-ms`, BUMMERL_HOUSE_MIN_THINK_MS of the worker), and the same answer's commit
  (the action log's times);
- remote bot: from its action (its answer sent) to its next turn arriving, where the house
  acted exactly once in between (the action log tells);
- the web's cost per open table: threads, memory (RSS) and CPU of the web process, idle and
  with every table open, divided by the tables; and whether the operators' pages still answer
  (`/standings` and `/matches` timed 3 times each while the tables are open: the median).

With `--sockets` (off by default: then the web's own table feed, as above) the site has the
socket tier too (`bummerl sockets`, web.sockets, a process of its own, sharing the web's
BUMMERL_WEB_SECRET; the web points its pages at it with BUMMERL_SOCKETS_URL): a person reads the
table page's `data-live-url` and follows that stream; the answer is visible when the stream's
`table` event carrying it is read (the event is the whole table: no /api/table fetch). Then:

- `--open N`: N more people (a guest each: one running game per table), each starting a game
  against the house ("relaxed" time: nothing forfeits in a run) and opening its table's stream,
  and not playing: idle open tables beside the playing ones. Their guests and games are made as
  the web makes them, through PeopleService (StartGuest, StartGame), `--open-concurrency` at a
  time (the time it took is printed), each table's ticket signed as the web signs the page's
  (web.tickets), and their streams are held by one asyncio loop here.
- the socket process's RSS and CPU (/proc) with no stream, then with the N idle streams open
  (over `--idle-seconds`, before anyone plays), divided by N: its cost per idle open table; and
  the streams refused (503: the page would fall back to polling) or ended early (or told
  `end`/`refused` while the match runs): any of them makes the run exit 1.
- the floor, measured in the same run: a bare asyncio SSE relay (bench/sse_relay.py, aiohttp, a
  process of its own: no tickets, sessions, database or upstream, the event's bytes given to it
  whole). Every open table and every playing person holds a stream at the relay too, so it holds
  as many as the tier; every `table` event the tier delivered is POSTed by this process to the
  relay, which relays it to the same table's relay stream. Beside the tier's figures: the
  relay's RSS and CPU per idle stream (same moments, same windows), and its delivery time (the
  event POSTed -> read from its stream) beside the tier's part of the person's wait (the
  answer's commit -> its event read), each with the ratio.

- `--spectators K`: K spectators watch each playing table's match page (its live part at the
  tier, `/sockets/match/<id>`, each stream from an address of its own through a trusted proxy
  hop): the answer's commit -> the spectators' `update` event carrying it, beside the person's
  own part (the same answer, the seat's stream) in the same run, with the ratio; the tier's CPU
  while they watch is in its line.

Run: `.venv/bin/python bench/people.py --people 50 [--remote 4 --seconds 60 --concurrency 8
--broker-url redis://127.0.0.1:6379/10] [--sockets --open 2000]` (docs/web.md; the socket
tier's runs: docs/scaling.md).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import html
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HOUSE = "house-random"
RELAXED_MS = (120_000, 600_000)  # the web's "relaxed" preset: 2 min a move + 10 min bank


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def next_event(stream: Any) -> tuple[str, int | None, bytes] | None:
    """The next server-sent event of `stream` (read line by line): (name, id, data); None once
    the stream has ended. Comments and `retry` are skipped."""
    name, ident, data = "message", None, b""
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.rstrip(b"\r\n")
        if not line:
            if data:
                return name, ident, data
            name, ident = "message", None
        elif line.startswith(b"event: "):
            name = line[7:].decode()
        elif line.startswith(b"id: "):
            ident = int(line[4:])
        elif line.startswith(b"data: "):
            data = line[6:]


def ratio(value: float, floor: float) -> str:
    return f"x{value / floor:.1f}" if floor > 0 else "x-"


def proc_stats(pid: int) -> dict[str, float]:
    """Threads, RSS (MB) and CPU seconds (user + system) of process `pid` (Linux /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    return {"threads": threads, "rss_mb": rss, "cpu_s": cpu}


# --- a simulated person ---------------------------------------------------------------------
@dataclass
class Person:
    host: str
    port: int
    name: str
    cookies: dict[str, str] = field(default_factory=dict)
    csrf: str = ""
    latencies: list[float] = field(default_factory=list)
    # (seq after the person's action, wall-clock time the house's answer was visible)
    seen: list[tuple[int, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    match_id: int | None = None
    actions: int = 0
    live: str = ""  # the table page's data-live-url (--sockets)
    relay_port: int = 0  # the bare relay (--sockets): the same events, the floor
    relay_latencies: list[float] = field(default_factory=list)
    event: tuple[int | None, bytes] = (None, b"")  # the last `table` event read (id, data)
    # per spectator of this table's match page: (the update's id, the wall-clock time it was read)
    spectated: list[list[tuple[int, float]]] = field(default_factory=list)

    def connection(self, timeout: float = 60) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, conn: http.client.HTTPConnection, method: str, path: str,
                body: bytes | None = None, headers: dict[str, str] | None = None
                ) -> tuple[int, bytes, Any]:
        all_headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
                       **(headers or {})}
        conn.request(method, path, body=body, headers=all_headers)
        r = conn.getresponse()
        data = r.read()
        for value in r.headers.get_all("Set-Cookie") or []:
            k, _, rest = value.partition("=")
            self.cookies[k] = rest.split(";", 1)[0]
        found = re.search(rb'name="csrf_token" value="([^"]+)"', data) or re.search(
            rb'data-csrf="([^"]+)"', data)
        if found:
            self.csrf = found.group(1).decode()
        return r.status, data, r.headers

    def form(self, conn: http.client.HTTPConnection, path: str, data: dict[str, str]) -> Any:
        body = urllib.parse.urlencode({**data, "csrf_token": self.csrf}).encode()
        return self.request(conn, "POST", path, body,
                            {"Content-Type": "application/x-www-form-urlencoded"})

    def start(self) -> None:
        conn = self.connection()
        self.request(conn, "GET", "/play")
        status, _, headers = self.form(conn, "/guest", {"name": self.name})
        assert status == 302, f"guest: {status}"
        self.request(conn, "GET", "/play")
        status, data, headers = self.form(conn, "/play", {"opponent": HOUSE, "time": "relaxed"})
        assert status == 302, f"play: {status} {data[:200]!r}"
        self.match_id = int(headers["Location"].rsplit("/", 1)[1])
        _, page, _ = self.request(conn, "GET", f"/table/{self.match_id}")  # its CSRF token
        conn.close()
        found = re.search(rb'data-live-url="([^"]+)"', page)
        self.live = html.unescape(found.group(1).decode()) if found else ""

    def open_stream(self, host: str, port: int, path: str, cookies: bool = True) -> Any:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        headers = {"Accept": "text/event-stream"}
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request("GET", path, headers=headers)
        return conn, conn.getresponse()

    def relay_once(self, conn: http.client.HTTPConnection, stream: Any) -> None:
        """The last event the tier delivered, through the bare relay: POSTed -> read."""
        ident, data = self.event
        sent = time.monotonic()
        conn.request("POST", f"/publish/{self.name}", body=data,
                     headers={"X-Event-Id": str(ident)})
        conn.getresponse().read()
        while True:
            got = next_event(stream)
            if got is None:
                raise RuntimeError("the relay's stream ended")
            if got[0] == "table" and got[1] == ident:
                break
        self.relay_latencies.append(time.monotonic() - sent)

    def play(self, times: dict[str, float], ready: threading.Barrier) -> None:
        try:
            self.start()
        except Exception as e:  # noqa: BLE001
            self.errors.append(f"start: {e}")
            ready.wait()
            return
        ready.wait()  # every table open before anyone plays
        until = times["until"]
        api = self.connection()
        if self.live:  # the socket tier's stream (--sockets)
            url = urllib.parse.urlsplit(self.live)
            events, stream = self.open_stream(url.hostname or self.host, url.port or 80,
                                              f"{url.path}?{url.query}", cookies=False)
        else:
            events, stream = self.open_stream(self.host, self.port,
                                              f"/events/table/{self.match_id}")
        if stream.status != 200:
            self.errors.append(f"stream refused: {stream.status}")
            return
        relay = relayed = None
        if self.relay_port:
            relay, relayed = self.open_stream(self.host, self.relay_port, f"/relay/{self.name}",
                                              cookies=False)
            publish = http.client.HTTPConnection(self.host, self.relay_port, timeout=60)
            if relayed.status != 200:
                self.errors.append(f"relay stream refused: {relayed.status}")
                return
        try:
            table = self.table(api)  # the page's first state (the stream tells changes)
            while time.monotonic() < until and table["state"] == "running":
                if table["to_act"] != table["seat"]:
                    table = self.wait_change(stream, api, table["seq"])
                    continue
                sent = time.monotonic()
                body = json.dumps({"action": table["legal"][0], "seq": table["seq"]}).encode()
                status, data, _ = self.request(api, "POST", f"/api/table/{self.match_id}/act",
                                               body, {"Content-Type": "application/json",
                                                      "X-CSRFToken": self.csrf})
                if status != 200:
                    self.errors.append(f"act: {status} {data[:200]!r}")
                    table = self.table(api)
                    continue
                self.actions += 1
                table = json.loads(data)
                if table["state"] == "running" and table["to_act"] != table["seat"]:
                    after = table["seq"]
                    table = self.wait_change(stream, api, after)
                    self.latencies.append(time.monotonic() - sent)
                    self.seen.append((after, time.time()))
                    if relayed is not None:
                        self.relay_once(publish, relayed)
        except Exception as e:  # noqa: BLE001
            self.errors.append(f"play: {e!r}")
        finally:
            events.close()
            api.close()
            if relay is not None:
                relay.close()
                publish.close()

    def table(self, conn: http.client.HTTPConnection) -> dict[str, Any]:
        status, data, _ = self.request(conn, "GET", f"/api/table/{self.match_id}")
        assert status == 200, f"table: {status}"
        result: dict[str, Any] = json.loads(data)
        return result

    def wait_change(self, stream: Any, conn: http.client.HTTPConnection,
                    seq: int) -> dict[str, Any]:
        """Read the event stream until an event shows a newer seq; then the table's JSON (the
        event's own table, at the socket tier)."""
        if self.live:
            while True:
                got = next_event(stream)
                if got is None:
                    raise RuntimeError("the event stream ended")
                name, ident, data = got
                if name in ("end", "refused"):
                    raise RuntimeError(f"the stream said {name}: {data[:200]!r}")
                if name == "table":
                    table: dict[str, Any] = json.loads(data)
                    if table["seq"] > seq or table["state"] != "running":
                        self.event = (ident, data)
                        return table
        while True:
            line = stream.readline()
            if not line:
                raise RuntimeError("the event stream ended")
            if line.startswith(b"data: "):
                event = json.loads(line[6:])
                if event["seq"] > seq or event.get("final"):
                    return self.table(conn)


# --- spectators (--spectators) -------------------------------------------------------------------
def spectate(person: Person, number: int, until: float) -> None:
    """One spectator of `person`'s match page (from an address of its own, `number`, through
    the tier's trusted proxy hop): every `update` it reads, with the time, until `end` or
    `until` (monotonic)."""
    seen: list[tuple[int, float]] = []
    person.spectated.append(seen)
    conn = http.client.HTTPConnection(person.host, person.port, timeout=60)
    conn.request("GET", f"/matches/{person.match_id}")
    page = conn.getresponse().read()
    conn.close()
    found = re.search(rb'id="live-badge" data-events="([^"]+)"', page)
    if not found:
        person.errors.append("spectator: the match page is not live")
        return
    url = urllib.parse.urlsplit(html.unescape(found.group(1).decode()))
    if "/sockets/" not in url.path:
        person.errors.append(f"spectator refused: the page streams from {url.path}")
        return
    stream = http.client.HTTPConnection(url.hostname or person.host, url.port or 80, timeout=60)
    stream.request("GET", url.path, headers={
        "Accept": "text/event-stream",
        "X-Forwarded-For": f"10.{number // 62500}.{number // 250 % 250}.{number % 250 + 1}"})
    response = stream.getresponse()
    if response.status != 200:
        person.errors.append(f"spectator refused: {response.status}")
        return
    try:
        while time.monotonic() < until:
            got = next_event(response)
            if got is None or got[0] == "end":
                break
            if got[0] == "update" and got[1] is not None:
                seen.append((got[1], time.time()))
    except OSError:
        pass
    finally:
        stream.close()


def spectator_latencies(people: list[Person]) -> tuple[list[float], list[float]]:
    """Per answer of the house a spectator saw: (the answer's commit -> the spectator's update
    carrying it, the answer's commit -> the person's own table event), from the action log's
    times; an update's id is the match's seq, so it carries the answer logged at `after` once
    its id is past `after`."""
    from db.base import session_factory
    from db.models import ActionLog

    watched, own = [], []
    with session_factory()() as s:
        for p in people:
            if p.match_id is None or not p.seen or not p.spectated:
                continue
            times = {seq: (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp() for seq, t in
                     s.query(ActionLog.seq, ActionLog.created_at)
                     .filter(ActionLog.match_id == p.match_id)}
            for after, visible in p.seen:
                if after not in times:
                    continue
                answered = times[after]
                for seen in p.spectated:
                    first = next((t for ident, t in seen if ident > after), None)
                    if first is not None:
                        watched.append(first - answered)
                        own.append(visible - answered)
    return watched, own


# --- idle open tables (--open) -----------------------------------------------------------------
class OpenTables:
    """`count` people who each start a game (a guest each, "relaxed" time) and open its table's
    stream at the socket tier (and one at the bare relay), and do not play: all on one asyncio
    loop in a thread of this process. Every `table` event the tier sends is POSTed to the relay
    (the same events through the floor). `ready` is set once every table is open (or failed)."""

    def __init__(self, host: str, sockets_port: int, relay_port: int, count: int,
                 concurrency: int, service: str, web_token: str, secret: str) -> None:
        self.host, self.sockets_port, self.relay_port = host, sockets_port, relay_port
        self.service, self.web_token, self.secret = service, web_token, secret
        self.count, self.concurrency = count, concurrency
        self.opened = 0
        self.events = 0  # `table` events the tier sent them (the house's first moves)
        self.refused: list[str] = []  # streams not opened (503: the page would poll)
        self.ended: list[str] = []  # streams that ended (or said end/refused) while held
        self.failed: list[str] = []  # tables not made
        self.ready = threading.Event()
        self.made_s = 0.0  # the time to make every table and open its streams
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        if self.loop is not None and self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
        if self.thread.is_alive():
            self.thread.join(30)

    async def _main(self) -> None:
        import aiohttp
        import grpc
        from bummerl.v1 import people_pb2_grpc

        self.loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        began = time.monotonic()
        done = [0]
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=60)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout,
                                         cookie_jar=aiohttp.DummyCookieJar()) as http_:
            gate = asyncio.Semaphore(self.concurrency)

            def one_done() -> None:
                done[0] += 1
                if done[0] == self.count:
                    self.made_s = time.monotonic() - began
                    self.ready.set()

            async with grpc.aio.insecure_channel(self.service) as channel:
                stub = people_pb2_grpc.PeopleServiceStub(channel)
                tasks = [asyncio.ensure_future(self._one(http_, stub, gate, i, one_done))
                         for i in range(self.count)]
                if not tasks:
                    self.ready.set()
                await self.stopping.wait()
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _one(self, http_: Any, stub: Any, gate: asyncio.Semaphore, i: int,
                   done: Any) -> None:
        from bummerl.v1 import match_pb2, people_pb2

        from web import tickets

        key = f"open{i}"
        signalled = False
        try:
            async with gate:  # a guest and a game, as the web makes them (PeopleService)
                metadata = (("authorization", f"Bearer {self.web_token}"),)
                guest = await stub.StartGuest(people_pb2.StartGuestRequest(name=key),
                                              metadata=metadata)
                started = await stub.StartGame(people_pb2.StartGameRequest(
                    person_id=guest.person.person_id, opponent=HOUSE, profile=1,
                    time_control=match_pb2.TimeControl(move_ms=RELAXED_MS[0],
                                                        bank_ms=RELAXED_MS[1])),
                    metadata=metadata)
            match_id = started.match.match_id
            ticket = tickets.issue(self.secret, guest.person.person_id, match_id, guest.session)
            live = (f"http://{self.host}:{self.sockets_port}/sockets/table/{match_id}"
                    f"?ticket={ticket}")  # what the table page's data-live-url says
            accept = {"Accept": "text/event-stream"}
            tier = await http_.get(live, headers=accept)
            if tier.status != 200:
                self.refused.append(f"table {match_id}: {tier.status}")
                tier.release()
                return
            relay = await http_.get(f"http://{self.host}:{self.relay_port}/relay/{key}",
                                    headers=accept)
            if relay.status != 200:
                self.refused.append(f"relay {key}: {relay.status}")
                tier.release()
                return
            self.opened += 1
            done()
            signalled = True
            drain = asyncio.ensure_future(self._drain(relay, key))
            try:
                await self._hold(http_, tier, match_id, key)
            finally:
                drain.cancel()
                tier.close()
                relay.close()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001
            self.failed.append(f"{key}: {e!r}")
        finally:
            if not signalled:
                done()

    async def _hold(self, http_: Any, tier: Any, match_id: int, key: str) -> None:
        name, ident = "message", ""
        async for raw in tier.content:
            line = raw.rstrip(b"\r\n")
            if line.startswith(b"event: "):
                name = line[7:].decode()
            elif line.startswith(b"id: "):
                ident = line[4:].decode()
            elif line.startswith(b"data: "):
                if name != "table":
                    self.ended.append(f"table {match_id}: {name} {line[6:200]!r}")
                    return
                self.events += 1
                async with http_.post(f"http://{self.host}:{self.relay_port}/publish/{key}",
                                      data=line[6:], headers={"X-Event-Id": ident}) as r:
                    await r.read()
                name, ident = "message", ""
        self.ended.append(f"table {match_id}: the stream ended")

    async def _drain(self, relay: Any, key: str) -> None:
        async for _line in relay.content:
            pass
        self.ended.append(f"relay {key}: the stream ended")


def health(port: int, path: str) -> dict[str, Any]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", path)
        result: dict[str, Any] = json.loads(c.getresponse().read())
        return result
    finally:
        c.close()


def wait_health(port: int, path: str, proc: subprocess.Popen[bytes], log: Path,
                what: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if health(port, path).get("upstream", True):
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(f"{what} did not start; its log:\n{tail(log)}")
        time.sleep(0.3)


# --- the site ---------------------------------------------------------------------------------
def start_site(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    service_port, web_port = free_port(), free_port()
    url = args.database_url or f"sqlite:///{tmp / 'people.sqlite3'}"
    tokens = {"BUMMERL_OPERATOR_TOKEN": secrets.token_urlsafe(16),
              "BUMMERL_HOUSE_TOKEN": secrets.token_urlsafe(16),
              "BUMMERL_WEB_TOKEN": secrets.token_urlsafe(16),
              "BUMMERL_WEB_SECRET": secrets.token_urlsafe(32)}  # the web's, the tier's
    env = {**os.environ, "DATABASE_URL": url, "BUMMERL_BROKER_DIR": str(tmp / "broker"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp / "beat"),
           "BUMMERL_SERVICE_ADDRESS": f"127.0.0.1:{service_port}",
           "BUMMERL_HOUSE_MIN_THINK_MS": str(args.min_think_ms), **tokens}
    env.pop("REDIS_URL", None)
    env.pop("BUMMERL_BROKER_URL", None)
    if args.broker_url:
        env["BUMMERL_BROKER_URL"] = args.broker_url
    bummerl = str(ROOT / ".venv" / "bin" / "bummerl")
    logs = tmp / "logs"
    logs.mkdir()
    with open(logs / "service.log", "w") as out:
        procs = {"service": subprocess.Popen(
            [bummerl, "serve", "--address", f"127.0.0.1:{service_port}"], env=env,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)}
    deadline = time.monotonic() + 60
    while subprocess.run([bummerl, "serve", "--check", "--address",
                          f"127.0.0.1:{service_port}"], env=env, capture_output=True
                         ).returncode != 0:
        if time.monotonic() > deadline or procs["service"].poll() is not None:
            raise SystemExit(f"the service did not start; its log:\n{tail(logs / 'service.log')}")
        time.sleep(0.5)
    os.environ["DATABASE_URL"] = url
    from db.models import HOUSE as HOUSE_KIND
    from services.ops import bots

    bots.register_bot(HOUSE, kind=HOUSE_KIND, house_strategy="random")
    from workers import procs as worker_procs

    moves = "moves" if args.people_concurrency else "people,moves"
    procs["worker"] = worker_procs.start_worker(env, queues=moves, concurrency=args.concurrency,
                                                logfile=logs / "worker.log", loglevel="WARNING")
    if args.people_concurrency:  # the people's answers on workers of their own (workers.app)
        procs["people-worker"] = worker_procs.start_worker(
            env, queues="people", concurrency=args.people_concurrency, pool="threads",
            name="people",
            logfile=logs / "worker-people.log", loglevel="WARNING")
    web_env = dict(env)
    sockets_port = relay_port = 0
    if args.sockets:  # the socket tier, and the bare relay beside it (the floor)
        sockets_port, relay_port = free_port(), free_port()
        with open(logs / "sockets.log", "w") as out:
            procs["sockets"] = subprocess.Popen(
                [bummerl, "sockets", "--host", "127.0.0.1", "--port", str(sockets_port),
                 "--max-streams", str(args.max_streams)],
                env={**env, "BUMMERL_WEB_TRUSTED_PROXIES": "1"}, cwd=ROOT,  # (spectators)
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        with open(logs / "relay.log", "w") as out:
            procs["relay"] = subprocess.Popen(
                [sys.executable, str(ROOT / "bench" / "sse_relay.py"), "--port",
                 str(relay_port)], env=env, cwd=ROOT,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_health(sockets_port, "/sockets/health", procs["sockets"], logs / "sockets.log",
                    "the socket tier")
        wait_health(relay_port, "/relay/health", procs["relay"], logs / "relay.log",
                    "the relay")
        web_env["BUMMERL_SOCKETS_URL"] = f"http://127.0.0.1:{sockets_port}"
    web_config = {"DATABASE_URL": url, "TABLE_STREAMS": args.table_streams,
                  "GUEST_LIMIT": "100000 per minute", "MAX_STREAMS": 16}
    code = ("import sys, json; from web.server import waitress_server; "
            f"s = waitress_server('127.0.0.1', {web_port}, json.loads(sys.argv[1]), threads=16); "
            "s.run()")
    with open(logs / "web.log", "w") as out:
        procs["web"] = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(web_config)], env=web_env, cwd=ROOT,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", web_port, timeout=5)
            c.request("GET", "/play")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"the web did not start; its log:\n{tail(logs / 'web.log')}")
        time.sleep(0.3)
    return {"procs": procs, "service": f"127.0.0.1:{service_port}", "web_port": web_port,
            "env": env, "tokens": tokens, "url": url, "logs": logs,
            "sockets_port": sockets_port, "relay_port": relay_port}


def tail(log: Path, lines: int = 20) -> str:
    """The last lines of `log` (the folder it is in is removed at exit)."""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def stop_site(site: dict[str, Any]) -> None:
    for proc in site["procs"].values():  # every process of the site (its people-worker too)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in site["procs"].values():
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


# --- remote bots --------------------------------------------------------------------------------
class Timed:
    """A random bot that notes when each of its turns came and when it answered."""

    def __init__(self, seed: int) -> None:
        from examples.random_bot import RandomBot

        self.inner = RandomBot(seed)
        self.times: dict[int, list[tuple[float, float]]] = {}
        self.current: int | None = None

    def act(self, observation: Any) -> Any:
        came = time.monotonic()
        answer = self.inner.act(observation)
        self.times.setdefault(self.current or 0, []).append((came, time.monotonic()))
        return answer


def run_remote(site: dict[str, Any], count: int, until: float) -> list[tuple[Any, Any, int]]:
    """`count` remote bots, each playing house-random through the kit until `until`."""
    import grpc
    from bummerl.v1 import match_pb2, match_pb2_grpc

    from client import Bot, Runner
    from services.ops import bots

    house_id = None
    from db.base import session_factory
    from db.models import Bot as BotRow

    with session_factory()() as s:
        house_id = s.query(BotRow.id).filter(BotRow.name == HOUSE).scalar()
    started = []
    channel = grpc.insecure_channel(site["service"])
    stub = match_pb2_grpc.MatchServiceStub(channel)
    auth = (("authorization", f"Bearer {site['tokens']['BUMMERL_OPERATOR_TOKEN']}"),)
    for i in range(count):
        row, token = bots.register_bot(f"remote-{i}")
        assert token is not None
        timed = Timed(i)

        class Adapter(Bot):
            def __init__(self, inner: Timed) -> None:
                self.inner = inner

            def act(self, observation: Any) -> Any:
                return self.inner.act(observation)

        runner = Runner(Adapter(timed), site["service"], token, max_matches=None)
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        started.append((runner, timed, row.id, thread))
    time.sleep(2)
    for _runner, timed, bot_id, _ in started:
        reply = stub.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=[bot_id, house_id], time_control=match_pb2.TimeControl(
                move_ms=60_000, bank_ms=60_000)), metadata=auth)
        timed.current = reply.match.match_id
    while time.monotonic() < until:
        time.sleep(0.5)
    for runner, *_ in started:
        runner.stop()
    channel.close()
    return [(r, t, b) for r, t, b, _ in started]


def remote_latencies(site: dict[str, Any], remote: list[tuple[Any, Any, int]]) -> list[float]:
    """Per remote bot: its answer → its next turn, where the house acted exactly once between
    (the action log tells)."""
    from db.base import session_factory
    from db.models import ActionLog, Match

    found = []
    with session_factory()() as s:
        for _, timed, bot_id in remote:
            for match_id, times in timed.times.items():
                m = s.get(Match, match_id)
                if m is None:
                    continue
                seat = 0 if m.bot0_id == bot_id else 1
                seqs = [a.seat for a in s.query(ActionLog).filter(
                    ActionLog.match_id == match_id).order_by(ActionLog.seq)]
                mine = [i for i, who in enumerate(seqs) if who == seat]
                for k in range(min(len(mine), len(times)) - 1):
                    if mine[k + 1] - mine[k] == 2:  # exactly one house action between
                        found.append(times[k + 1][0] - times[k][1])
    return found


def split_latencies(people: list[Person]) -> tuple[list[float], list[float]]:
    """Per answer of the house to a person, from the action log's commit times: the person's
    action's commit → the house's answer's commit (the service, the queue and the worker,
    with the minimum think), and that commit → the answer visible to the person (the web:
    its poller, the event, the table's JSON)."""
    from db.base import session_factory
    from db.models import ActionLog

    house, web = [], []
    with session_factory()() as s:
        for p in people:
            if p.match_id is None or not p.seen:
                continue
            times = dict(s.query(ActionLog.seq, ActionLog.created_at)
                         .filter(ActionLog.match_id == p.match_id))
            for after, visible in p.seen:
                if after - 1 in times and after in times:
                    answered = times[after].timestamp() if times[after].tzinfo else \
                        times[after].replace(tzinfo=UTC).timestamp()
                    acted = times[after - 1].timestamp() if times[after - 1].tzinfo else \
                        times[after - 1].replace(tzinfo=UTC).timestamp()
                    house.append(answered - acted)
                    web.append(visible - answered)
    return house, web


def operator_pages(port: int, rounds: int = 3) -> dict[str, float]:
    """How long the operators' pages take while the tables are open: each page's median over
    `rounds` rounds (seconds; nan if not answered)."""
    times: dict[str, list[float]] = {"/standings": [], "/matches": []}
    for _ in range(rounds):
        for path, taken in times.items():
            began = time.monotonic()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                c.request("GET", path)
                r = c.getresponse()
                r.read()
                taken.append(time.monotonic() - began if r.status == 200 else float("nan"))
            except OSError:
                taken.append(float("nan"))  # not answered (printed as nan)
            finally:
                c.close()
    return {path: statistics.median(taken) for path, taken in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=50)
    parser.add_argument("--remote", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--concurrency", type=int, default=8,
                        help="processes of the worker on the `moves` queue")
    parser.add_argument("--people-concurrency", type=int, default=32,
                        help="threads of the worker on the `people` queue (0: none, the "
                             "`moves` worker serves it too)")
    parser.add_argument("--min-think-ms", type=int, default=700)
    parser.add_argument("--table-streams", type=int, default=0,
                        help="table streams the web holds open (default: people + 16)")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--broker-url", default=None,
                        help="Celery broker (e.g. redis://127.0.0.1:6379/10; default: the "
                             "embedded filesystem broker)")
    parser.add_argument("--sockets", action="store_true",
                        help="the tables' streams from the socket tier (bummerl sockets), "
                             "beside a bare asyncio SSE relay (the floor); default: the web's "
                             "own table feed")
    parser.add_argument("--open", type=int, default=0,
                        help="idle open tables beside the playing ones (--sockets)")
    parser.add_argument("--open-concurrency", type=int, default=16,
                        help="idle tables made at once (through PeopleService)")
    parser.add_argument("--idle-seconds", type=float, default=10,
                        help="the window the idle open tables' cost is measured over")
    parser.add_argument("--spectators", type=int, default=0,
                        help="spectators of each playing table's match page, at the socket "
                             "tier (--sockets)")
    parser.add_argument("--max-streams", type=int, default=20_000,
                        help="the socket tier's --max-streams")
    args = parser.parse_args()
    if args.open and not args.sockets:
        parser.error("--open needs --sockets")
    if args.spectators and not args.sockets:
        parser.error("--spectators needs --sockets")
    args.table_streams = args.table_streams or args.people + 16
    tmp = Path(tempfile.mkdtemp(prefix="bummerl-bench-people-"))
    atexit.register(shutil.rmtree, tmp, True)  # at exit, also on failure (issue 44)
    site = start_site(args, tmp)
    web_pid = site["procs"]["web"].pid
    failed = False
    try:
        idle = proc_stats(web_pid)
        tier_pid = relay_pid = 0
        if args.sockets:
            tier_pid, relay_pid = site["procs"]["sockets"].pid, site["procs"]["relay"].pid
            tier0, relay0 = proc_stats(tier_pid), proc_stats(relay_pid)
        people = [Person("127.0.0.1", site["web_port"], f"p{i}",
                         relay_port=site["relay_port"]) for i in range(args.people)]
        holder = {"until": 0.0}  # set once every table is open
        began = 0.0

        def go() -> None:  # the barrier's action: every table is open, the clock starts
            nonlocal began
            began = time.monotonic()
            holder["until"] = began + args.seconds

        ready = threading.Barrier(args.people + 1, action=go)
        threads = [threading.Thread(target=p.play, args=(holder, ready), daemon=True)
                   for p in people]
        opened = time.monotonic()
        for t in threads:
            t.start()
        tables = OpenTables("127.0.0.1", site["sockets_port"], site["relay_port"], args.open,
                            args.open_concurrency, site["service"],
                            site["tokens"]["BUMMERL_WEB_TOKEN"],
                            site["tokens"]["BUMMERL_WEB_SECRET"])
        if args.sockets:
            tables.start()
            tables.ready.wait()
            print(f"open tables: {tables.opened} of {args.open} made (a guest and a game each, "
                  f"through PeopleService, {args.open_concurrency} at once) and their streams open "
                  f"in {tables.made_s:.1f} s", flush=True)
            while ready.n_waiting < args.people and any(t.is_alive() for t in threads):
                time.sleep(0.1)
            print(f"{args.people} tables open in {time.monotonic() - opened:.1f} s (beside the "
                  "idle ones)", flush=True)
            time.sleep(3)  # the house's first moves, then nobody moves: idle
            tier_a, relay_a = proc_stats(tier_pid), proc_stats(relay_pid)
            held = health(site["sockets_port"], "/sockets/health")["streams"]
            time.sleep(args.idle_seconds)
            tier_b, relay_b = proc_stats(tier_pid), proc_stats(relay_pid)
        ready.wait()
        if not args.sockets:
            print(f"{args.people} tables open in {began - opened:.1f} s", flush=True)
        watchers = [threading.Thread(target=spectate, daemon=True,
                                     args=(p, i * args.spectators + k, began + args.seconds))
                    for i, p in enumerate(people) if p.match_id is not None
                    for k in range(args.spectators)]
        for t in watchers:
            t.start()
        remote_result: list[Any] = []
        remote_thread = threading.Thread(target=lambda: remote_result.extend(
            run_remote(site, args.remote, began + args.seconds)), daemon=True)
        remote_thread.start()
        time.sleep(min(5.0, args.seconds / 3))
        busy = proc_stats(web_pid)
        cpu_began = busy["cpu_s"]
        service_pid = site["procs"]["service"].pid
        service_began = proc_stats(service_pid)["cpu_s"]
        if args.sockets:
            tier_c, relay_c = proc_stats(tier_pid), proc_stats(relay_pid)
            all_held = health(site["sockets_port"], "/sockets/health")["streams"]
            relay_held = health(site["relay_port"], "/relay/health")["streams"]
        pages = operator_pages(site["web_port"])
        time.sleep(max(0.0, began + args.seconds - time.monotonic()))
        end = proc_stats(web_pid)
        service_cpu = proc_stats(service_pid)["cpu_s"] - service_began
        if args.sockets:
            tier_d, relay_d = proc_stats(tier_pid), proc_stats(relay_pid)
        for t in threads:
            t.join(30)
        for t in watchers:
            t.join(30)
        remote_thread.join(30)
        tables.stop()
        latencies = [x for p in people for x in p.latencies]
        errors = [e for p in people for e in p.errors]
        remote = remote_latencies(site, remote_result)
        elapsed = time.monotonic() - began
        feed = "the socket tier" if args.sockets else "the web"
        print(f"people: {args.people} at once against {HOUSE} through the web, "
              f"{sum(p.actions for p in people)} actions in {elapsed:.0f} s; "
              f"worker concurrency {args.concurrency} (moves) + {args.people_concurrency} "
              f"(people); minimum think {args.min_think_ms} ms; the tables' streams from "
              f"{feed}" + (f"; {args.open} idle open tables beside them" if args.open else ""))
        if latencies:
            ms = [x * 1000 for x in latencies]
            print(f"  person's action -> house answer visible: p50 {quantile(ms, .5):.0f} ms, "
                  f"p99 {quantile(ms, .99):.0f} ms, max {max(ms):.0f} ms (n={len(ms)}); "
                  f"over the minimum think: p50 +{quantile(ms, .5) - args.min_think_ms:.0f} ms, "
                  f"p99 +{quantile(ms, .99) - args.min_think_ms:.0f} ms (aim +100 / +300 ms)")
        house, web = split_latencies(people)
        if house:
            h, w = [x * 1000 for x in house], [x * 1000 for x in web]
            print(f"    of which the house (action's commit -> answer's commit): p50 "
                  f"{quantile(h, .5):.0f} ms, p99 {quantile(h, .99):.0f} ms; {feed} (answer's "
                  f"commit -> visible): p50 {quantile(w, .5):.0f} ms, p99 "
                  f"{quantile(w, .99):.0f} ms")
        relayed = [x * 1000 for p in people for x in p.relay_latencies]
        if args.sockets and house and relayed:
            print(f"    floor, the same events through a bare asyncio SSE relay "
                  f"(bench/sse_relay.py: POSTed -> read): p50 {quantile(relayed, .5):.1f} ms, "
                  f"p99 {quantile(relayed, .99):.1f} ms (n={len(relayed)}); the socket tier's "
                  f"part over it: p50 {ratio(quantile(w, .5), quantile(relayed, .5))}, p99 "
                  f"{ratio(quantile(w, .99), quantile(relayed, .99))}")
        if args.spectators:
            watched, own = spectator_latencies(people)
            if watched:
                s_ms, o_ms = [x * 1000 for x in watched], [x * 1000 for x in own]
                print(f"  spectators: {args.spectators} per playing table "
                      f"({len(watchers)} streams from as many addresses), the answer's commit -> "
                      f"their update: p50 {quantile(s_ms, .5):.0f} ms, p99 "
                      f"{quantile(s_ms, .99):.0f} ms (n={len(s_ms)}); the person's own table "
                      f"event, the same answers: p50 {quantile(o_ms, .5):.0f} ms, p99 "
                      f"{quantile(o_ms, .99):.0f} ms; ratio "
                      f"{ratio(quantile(s_ms, .5), quantile(o_ms, .5))}, "
                      f"{ratio(quantile(s_ms, .99), quantile(o_ms, .99))}")
            else:
                print("  spectators: no update carried an answer")
        if remote:
            ms = [x * 1000 for x in remote]
            print(f"  remote gRPC bot's answer -> next turn (one house move between): p50 "
                  f"{quantile(ms, .5):.0f} ms, p99 {quantile(ms, .99):.0f} ms (n={len(ms)}, "
                  f"{args.remote} bots, no minimum think)")
        per = max(1, args.people)
        window = max(0.001, elapsed - min(5.0, args.seconds / 3))
        cpu = (end["cpu_s"] - cpu_began) / window
        if not args.sockets:
            pool = 16 + 16 + 2 * args.table_streams
            print(f"  web process: waitress pool {pool} threads made at start (16 requests + 16 "
                  f"live pages + 2 x {args.table_streams} table streams: an open table holds "
                  "one while its stream is open, and one more for its page's requests)")
        print(f"  web process: idle {idle['threads']} threads, {idle['rss_mb']:.0f} MB; "
              f"{args.people} tables open {busy['threads']} threads, {busy['rss_mb']:.0f} MB, "
              f"CPU {cpu * 100:.0f}% of a core")
        print(f"  engine service process: CPU {service_cpu / window * 100:.0f}% of a core "
              "while the people play")
        print(f"  per open table: {(busy['threads'] - idle['threads']) / per:.2f} threads, "
              f"{(busy['rss_mb'] - idle['rss_mb']) * 1024 / per:.0f} kB, "
              f"{cpu * 1000 / per:.1f} ms CPU a second")
        if args.sockets:
            n = max(1, args.open)
            kb = (tier_b["rss_mb"] - tier0["rss_mb"]) * 1024 / n
            rkb = (relay_b["rss_mb"] - relay0["rss_mb"]) * 1024 / n
            tcpu = (tier_b["cpu_s"] - tier_a["cpu_s"]) / args.idle_seconds * 1000 / n
            rcpu = (relay_b["cpu_s"] - relay_a["cpu_s"]) / args.idle_seconds * 1000 / n
            print(f"  socket tier process: no stream {tier0['rss_mb']:.0f} MB; {held} idle "
                  f"streams {tier_b['rss_mb']:.0f} MB, {tier_b['threads']:.0f} threads, CPU "
                  f"{(tier_b['cpu_s'] - tier_a['cpu_s']) / args.idle_seconds * 100:.1f}% of a "
                  f"core; {all_held} streams with the people playing (health), CPU "
                  f"{(tier_d['cpu_s'] - tier_c['cpu_s']) / window * 100:.0f}% of a core; "
                  f"floor, the bare relay: {relay0['rss_mb']:.0f} MB, "
                  f"{relay_b['rss_mb']:.0f} MB, CPU "
                  f"{(relay_b['cpu_s'] - relay_a['cpu_s']) / args.idle_seconds * 100:.1f}%, "
                  f"{relay_held} streams, CPU "
                  f"{(relay_d['cpu_s'] - relay_c['cpu_s']) / window * 100:.0f}%")
            if not args.open:
                print("  per idle open table: none held (--open N holds N)")
            else:
                print(f"  per idle open table ({args.open} open, over {args.idle_seconds:.0f} s "
                      f"idle): socket tier {kb:.1f} kB, {tcpu:.4f} ms CPU a second (aim < 50 "
                      f"kB, < 0.2 ms); floor, the bare relay: {rkb:.1f} kB, {rcpu:.4f} ms; "
                      f"ratio {ratio(kb, rkb)}, {ratio(tcpu, rcpu)}")
        print("  operators' pages with every table open (median of 3): " + ", ".join(
            f"{k} {v * 1000:.0f} ms" for k, v in pages.items()) + " (aim < 200 ms)")
        refused = [e for e in errors if "refused" in e or "start" in e]
        print(f"  errors: {len(errors)} ({len(refused)} refused or not started)"
              + (f"; first: {errors[0]}" if errors else ""))
        failed = bool(refused)
        if args.sockets:
            gone = [*tables.refused, *tables.ended, *tables.failed]
            print(f"  open tables: {tables.opened} of {args.open} held; refused (503, the page "
                  f"would poll): {len(tables.refused)}, ended or degraded while held: "
                  f"{len(tables.ended)}, not made: {len(tables.failed)}; {tables.events} "
                  f"events to them" + (f"; first: {gone[0]}" if gone else ""))
            failed = failed or bool(gone) or tables.opened < args.open
        if latencies:
            print(f"  stdev {statistics.pstdev(latencies) * 1000:.0f} ms")
    finally:
        stop_site(site)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
