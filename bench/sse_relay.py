"""The floor of bench/people.py's socket tier: a bare asyncio server-sent-event relay (aiohttp).

It holds SSE streams and relays to them the events it is given, framed as the socket tier
frames them (`retry`, then `event: table` / `id:` / `data:`, a keepalive comment every 15 s),
and nothing else: no tickets, no sessions, no database, no upstream to the engine service, no
table to read or encode (the event's bytes are given to it whole).

- `GET /relay/<key>` (`text/event-stream`): a stream of the events published to `<key>`;
- `POST /publish/<key>` (body: the event's data; header `X-Event-Id`: its id): the event, to
  every stream of `<key>` open now (204);
- `GET /relay/health`: 200 `{"streams": N}`.

Run: `.venv/bin/python bench/sse_relay.py --port P` (bench/people.py --sockets starts it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections import defaultdict

from aiohttp import web

KEEPALIVE_S = 15.0


class Relay:
    def __init__(self) -> None:
        self.streams: defaultdict[str, set[asyncio.Queue[bytes]]] = defaultdict(set)
        self.count = 0


async def stream(request: web.Request) -> web.StreamResponse:
    relay: Relay = request.app["relay"]
    key = request.match_info["key"]
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store"})
    await response.prepare(request)
    await response.write(b"retry: 2000\n\n")
    relay.streams[key].add(queue)
    relay.count += 1
    try:
        with contextlib.suppress(ConnectionError):
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                await response.write(event)
    finally:
        relay.count -= 1
        relay.streams[key].discard(queue)
        if not relay.streams[key]:
            del relay.streams[key]
    return response


async def publish(request: web.Request) -> web.Response:
    relay: Relay = request.app["relay"]
    data = await request.read()
    ident = request.headers.get("X-Event-Id", "")
    event = (f"id: {ident}\n" if ident else "").encode() + b"event: table\ndata: " + data + \
        b"\n\n"
    for queue in relay.streams.get(request.match_info["key"], ()):
        queue.put_nowait(event)
    return web.Response(status=204)


async def health(request: web.Request) -> web.Response:
    return web.json_response({"streams": request.app["relay"].count})


def make_app() -> web.Application:
    app = web.Application()
    app["relay"] = Relay()
    app.router.add_get("/relay/health", health)
    app.router.add_get("/relay/{key}", stream)
    app.router.add_post("/publish/{key}", publish)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8002)
    args = parser.parse_args()
    web.run_app(make_app(), host=args.host, port=args.port, access_log=None, backlog=4096,
                print=None, shutdown_timeout=1.0)


if __name__ == "__main__":
    main()
