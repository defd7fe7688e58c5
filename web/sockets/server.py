"""The socket tier's HTTP server (aiohttp): the table and match streams, and its health.

- `GET /sockets/table/<match id>?ticket=T` (`text/event-stream`): 400 for a bad id, 401 for a
  bad, expired or revoked ticket, 503 past `max_streams` or `per_session` streams (this
  process is full) or while the database cannot be read (the page falls back to reloading its
  table every 2 s); then `retry`,
  and an event `table` (id: its seq; data: the table's JSON, `web.tableview.table_json` plus
  `now` and `actions`) whenever the table changes; `refused` (data: {"error"}) if the service
  refuses the follow; `end` once the match is over or the session is revoked. A comment every
  `keepalive_s`; the stream ends after `stream_s` (the browser reconnects, with Last-Event-ID).
- `GET /sockets/match/<match id>` (`text/event-stream`, no ticket: the match page is public):
  400 for a bad id, 404 for no such match, 429 (Retry-After) past `per_address` streams from
  one client address (behind `trusted_proxies`, the one X-Forwarded-For names), 503 past
  `max_streams` or `max_matches` (the page then takes the web's own stream); then `retry`,
  and an event `update` (id: the match's seq; data: {"html": {element id: HTML}, "final"}, as
  the web's `/events/matches/<id>` sends it: web.sockets.spectate) at once and whenever the
  match changes; `end` after the final one. Keepalives and `stream_s` as above.
- `GET /sockets/health`: 200 `{"streams": N, "spectators": N, "matches": N,
  "upstream": true|false}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from sqlalchemy.orm import Session, sessionmaker

from db.people import live_session_hashes
from web import tickets
from web.sockets.spectate import Snapshot, Spectators, Viewer
from web.sockets.upstream import Follow, Upstream
from web.tableview import stamped, table_json

log = logging.getLogger(__name__)
MAX_ID = 2**31 - 1


@dataclass
class Settings:
    secret: str  # the web's SECRET_KEY: tickets are signed with it
    allow_origin: str | None = None  # the web's origin, when the page is served from another
    max_streams: int = 20_000  # streams open at once in this process
    per_session: int = 16  # streams open at once per session (tabs)
    per_address: int = 32  # spectators' streams open at once per client address (no session)
    # proxies in front whose X-Forwarded-For names the client (BUMMERL_WEB_TRUSTED_PROXIES, as
    # the web's): 0 takes the connection's own address
    trusted_proxies: int = 0
    # matches followed at once (a WatchMatch stream each, on the web's credential): the service
    # admits 5,000 per address for it (BUMMERL_MAX_WEB_WATCH_STREAMS), room for two processes
    max_matches: int = 2000
    keepalive_s: float = 15.0
    stream_s: float = 600.0
    session_check_s: float = 2.0  # how often the open streams' sessions are checked


@dataclass(eq=False)
class Stream:
    session: str  # the SHA-256 of its session's token
    revoked: asyncio.Event = field(default_factory=asyncio.Event)


class Tier:
    """One socket process: its upstream, its open streams and their sessions."""

    def __init__(self, settings: Settings, upstream: Upstream,
                 sessions: sessionmaker[Session], spectators: Spectators | None = None
                 ) -> None:
        self.settings = settings
        self.upstream = upstream
        self.spectators = spectators
        self.sessions = sessions
        self.streams: set[Stream] = set()
        self.per_session: Counter[str] = Counter()
        self.per_address: Counter[str] = Counter()  # spectators' streams per client address
        self.checker: asyncio.Task[None] | None = None

    async def live(self, hashes: list[str]) -> set[str]:
        def read() -> set[str]:
            with self.sessions() as s:
                return live_session_hashes(s, hashes)

        return await asyncio.get_running_loop().run_in_executor(None, read)

    async def check_sessions(self) -> None:
        """End the streams whose session was revoked (or expired), every `session_check_s`."""
        while True:
            await asyncio.sleep(self.settings.session_check_s)
            if not self.streams:
                continue
            # only the streams asked about are judged: one opened while the database is read
            # was not asked about (its session was checked at its open)
            streams = list(self.streams)
            try:
                live = await self.live(sorted({s.session for s in streams}))
            except Exception as e:  # noqa: BLE001  (the database may be away: next round)
                log.warning("sockets: cannot check the streams' sessions: %s", e)
                continue
            for stream in streams:
                if stream.session not in live:
                    stream.revoked.set()


TIER = web.AppKey("tier", Tier)  # the app's one Tier


def _error(status: int, message: str, retry_after: int | None = None) -> web.Response:
    headers = {"Cache-Control": "no-store"}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return web.json_response({"error": message}, status=status, headers=headers)


def _event(name: str, data: Any, ident: int | None = None) -> bytes:
    head = f"id: {ident}\n" if ident is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _state(response: Any) -> dict[str, Any]:
    state = stamped(table_json(response.table))
    state["actions"] = [{"seq": a.seq, "seat": a.seat, "action": a.action}
                        for a in response.actions]
    return state


def _after(request: web.Request) -> int:
    text = request.headers.get("Last-Event-ID") or request.query.get("after") or "0"
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else 0


async def table_stream(request: web.Request) -> web.StreamResponse:
    tier: Tier = request.app[TIER]
    settings = tier.settings
    text = request.match_info["match_id"]
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) <= MAX_ID:
        return _error(400, f"{text[:40]!r} is not a match id")
    match_id = int(text)
    try:
        person_id, session = tickets.read(settings.secret, request.query.get("ticket", ""),
                                          match_id)
    except tickets.BadTicket as e:
        return _error(401, str(e))
    try:
        live = await tier.live([session])
    except Exception as e:  # noqa: BLE001  (the database may be away: say so, open nothing)
        log.warning("sockets: cannot check a stream's session: %s", e)
        return _error(503, "the session cannot be checked now (the database does not answer): "
                           "the table reloads itself meanwhile")
    if session not in live:
        return _error(401, "the ticket's session has ended: sign in again")
    if len(tier.streams) >= settings.max_streams:
        return _error(503, f"too many table streams here (at most {settings.max_streams})")
    if tier.per_session[session] >= settings.per_session:
        return _error(503, f"this session follows {settings.per_session} tables already")
    stream = Stream(session)
    tier.streams.add(stream)
    tier.per_session[session] += 1
    follow = tier.upstream.follow(person_id, match_id, _after(request))
    try:
        return await _serve(request, tier, stream, follow)
    finally:
        tier.upstream.stop(follow)
        tier.streams.discard(stream)
        tier.per_session[session] -= 1
        if tier.per_session[session] <= 0:
            del tier.per_session[session]


async def _open_stream(request: web.Request, settings: Settings) -> web.StreamResponse:
    """An event stream's answer, its headers sent and the browser's reconnect delay told."""
    headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-store",
               "X-Accel-Buffering": "no"}
    if settings.allow_origin:
        headers["Access-Control-Allow-Origin"] = settings.allow_origin
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    await response.write(b"retry: 2000\n\n")
    return response


async def _serve(request: web.Request, tier: Tier, stream: Stream, follow: Follow
                 ) -> web.StreamResponse:
    settings = tier.settings
    response = await _open_stream(request, settings)
    loop = asyncio.get_running_loop()
    until = loop.time() + settings.stream_s
    with contextlib.suppress(ConnectionError):
        while True:
            left = until - loop.time()
            if left <= 0:
                break
            update = asyncio.ensure_future(follow.take())
            revoked = asyncio.ensure_future(stream.revoked.wait())
            done, _ = await asyncio.wait({update, revoked}, return_when=asyncio.FIRST_COMPLETED,
                                         timeout=min(left, settings.keepalive_s))
            if update not in done:
                update.cancel()
            if revoked not in done:
                revoked.cancel()
            if revoked in done:
                await response.write(_event("end", {"reason": "the session has ended"}))
                break
            if update not in done:
                await response.write(b": keepalive\n\n")
                continue
            got = update.result()
            if got.refused:
                await response.write(_event("refused", {"error": got.refused}))
                break
            await response.write(_event("table", _state(got), got.table.seq))
            if got.ended:
                await response.write(_event("end", {"reason": "the match is over"}))
                break
    return response


def client_address(request: web.Request, trusted_proxies: int) -> str:
    """The client's address: the connection's, or behind `trusted_proxies` proxies the one
    X-Forwarded-For gives that many hops from its end (as werkzeug's ProxyFix takes it for the
    web); a header with fewer hops than that is not trusted."""
    hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",")
            if h.strip()]
    if trusted_proxies > 0 and len(hops) >= trusted_proxies:
        return hops[-trusted_proxies]
    return request.remote or ""


async def match_stream(request: web.Request) -> web.StreamResponse:
    tier: Tier = request.app[TIER]
    spectators = tier.spectators
    text = request.match_info["match_id"]
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) <= MAX_ID:
        return _error(400, f"{text[:40]!r} is not a match id")
    if spectators is None:
        return _error(404, "this socket tier has no spectators' streams")
    settings = tier.settings
    if len(tier.streams) + spectators.viewers >= settings.max_streams:
        return _error(503, f"too many streams here (at most {settings.max_streams})")
    address = client_address(request, settings.trusted_proxies)
    if tier.per_address[address] >= settings.per_address:
        return _error(429, f"this address follows {settings.per_address} match pages already",
                      retry_after=10)
    match_id = int(text)
    if match_id not in spectators.watches and len(spectators.watches) >= settings.max_matches:
        return _error(503, f"too many matches followed here (at most {settings.max_matches})")
    tier.per_address[address] += 1
    viewer = spectators.join(match_id)
    try:
        first = await viewer.take()
        if first is None:
            return _error(404, f"no match with id {match_id}")
        return await _spectate(request, tier, viewer, first)
    finally:
        spectators.leave(match_id, viewer)
        tier.per_address[address] -= 1
        if tier.per_address[address] <= 0:
            del tier.per_address[address]


async def _spectate(request: web.Request, tier: Tier, viewer: Viewer, first: Snapshot
                    ) -> web.StreamResponse:
    settings = tier.settings
    response = await _open_stream(request, settings)
    loop = asyncio.get_running_loop()
    until = loop.time() + settings.stream_s
    snapshot = first  # every snapshot is the whole live part: a resume misses nothing
    with contextlib.suppress(ConnectionError):
        while True:
            await response.write(f"id: {snapshot.seq}\nevent: update\n"
                                 f"data: {snapshot.data}\n\n".encode())
            if snapshot.final:
                await response.write(_event("end", {"reason": "the match is over"}))
                break
            while (left := until - loop.time()) > 0:
                try:
                    got = await asyncio.wait_for(viewer.take(),
                                                 min(left, settings.keepalive_s))
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                if got is not None:
                    snapshot = got
                    break
            else:
                break
    return response


async def health(request: web.Request) -> web.Response:
    tier: Tier = request.app[TIER]
    spectators = tier.spectators
    return web.json_response({
        "streams": len(tier.streams), "upstream": tier.upstream.connected.is_set(),
        "spectators": spectators.viewers if spectators else 0,
        "matches": len(spectators.watches) if spectators else 0})


def make_app(settings: Settings, upstream: Upstream, sessions: sessionmaker[Session],
             spectators: Spectators | None = None) -> web.Application:
    """The socket tier's aiohttp app (its upstream starts with it and stops with it)."""
    app = web.Application()
    tier = Tier(settings, upstream, sessions, spectators)
    app[TIER] = tier
    app.router.add_get("/sockets/table/{match_id}", table_stream)
    app.router.add_get("/sockets/match/{match_id}", match_stream)
    app.router.add_get("/sockets/health", health)

    async def lifetime(app: web.Application):  # type: ignore[no-untyped-def]
        upstream.start()
        tier.checker = asyncio.ensure_future(tier.check_sessions())
        yield
        tier.checker.cancel()
        if spectators is not None:
            await spectators.close()
        await upstream.close()

    app.cleanup_ctx.append(lifetime)
    return app
