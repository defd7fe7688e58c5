"""Benchmark: how soon an action reaches the dashboard's open match pages (server-sent events).

A match is played through the service's `submit_action` (one action every `--pause` s) while
`--clients` event streams of its page are open on the dashboard (waitress, in-process). For
each action and stream: the time from the action's commit to the event that shows it.
Floor, measured in the same run: rendering that live part right after the commit (the work
an event needs, without the poll wait and the stream). Database: a fresh SQLite file.
Run: `.venv/bin/python bench/web_live.py [--clients 20 --actions 60 --pause 0.1]`.
"""

from __future__ import annotations

import argparse
import http.client
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--actions", type=int, default=60)
    parser.add_argument("--pause", type=float, default=0.1)
    args = parser.parse_args()

    from db.base import make_session_factory
    from db.models import HOUSE
    from db.schema import create_all
    from services.core import hooks
    from services.core.actions import submit_action
    from services.core.matches import create_match, get_match, get_observation
    from services.ops.bots import register_bot
    from web import create_app
    from web.server import shutdown, waitress_server

    hooks.on_turn.clear()  # no workers here: the bench plays both seats
    tmp = Path(tempfile.mkdtemp(prefix="bummerl-bench-web-"))
    url = f"sqlite:///{tmp / 'web.sqlite3'}"
    sessions = make_session_factory(url)
    create_all(sessions)
    a, _ = register_bot("a", kind=HOUSE, house_strategy="random", sessions=sessions)
    b, _ = register_bot("b", kind=HOUSE, house_strategy="random", sessions=sessions)
    match_id = create_match([a.id, b.id], seed=5, sessions=sessions).id

    server = waitress_server("127.0.0.1", 0, {"DATABASE_URL": url,
                                              "MAX_STREAMS": args.clients + 4})
    threading.Thread(target=server.run, daemon=True).start()
    host, port = server.effective_host, server.effective_port
    arrivals: dict[int, list[float]] = {}
    lock = threading.Lock()
    ready = threading.Barrier(args.clients + 1)

    def client() -> None:
        conn = http.client.HTTPConnection(host, port, timeout=60)
        conn.request("GET", f"/events/matches/{match_id}")
        answer = conn.getresponse()
        ready.wait()
        buffer = b""
        while True:
            chunk = answer.read1(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                found = re.search(rb'data-seq=\\"(\d+)\\"', block)
                if found:
                    with lock:
                        arrivals.setdefault(int(found.group(1)), []).append(time.monotonic())
                if b'"final":true' in block:
                    return

    threads = [threading.Thread(target=client, daemon=True) for _ in range(args.clients)]
    for t in threads:
        t.start()
    ready.wait()
    app = create_app({"DATABASE_URL": url})  # the floor: render the live part directly
    committed: dict[int, float] = {}
    floor: list[float] = []
    import random

    from flask import render_template

    from web import queries

    rng = random.Random(1)
    for _ in range(args.actions):
        m = get_match(match_id, sessions=sessions)
        if m.state != "running":
            break
        obs, m = get_observation(match_id, m.to_act, sessions=sessions)
        plays = [x for x in obs.legal_actions if x.kind == "play"]
        submit_action(match_id, m.to_act, rng.choice(plays or list(obs.legal_actions)),
                      expected_seq=m.seq, sessions=sessions)
        committed[m.seq + 1] = time.monotonic()
        started = time.monotonic()
        with app.test_request_context(f"/matches/{match_id}"):
            render_template("_match_live.html",
                            match=queries.match_detail(app.extensions["bummerl.sessions"],
                                                       match_id))
        floor.append(time.monotonic() - started)
        time.sleep(args.pause)
    time.sleep(1.0)
    shutdown(server)
    latency = [(at - committed[seq]) * 1000 for seq, ats in arrivals.items()
               if seq in committed for at in ats]
    missing = len(committed) * args.clients - len(latency)
    floor_ms = [f * 1000 for f in floor]
    print(f"{len(committed)} actions, {args.clients} streams, one action every {args.pause} s "
          f"(SQLite; poll every 0.2 s; a shared machine)")
    print(f"{'':28}{'p50 ms':>9}{'p99 ms':>9}")
    p50, p99 = statistics.median(latency), quantile(latency, 0.99)
    f50, f99 = statistics.median(floor_ms), quantile(floor_ms, 0.99)
    print(f"{'commit -> event (bummerl)':28}{p50:9.1f}{p99:9.1f}")
    print(f"{'floor: render after commit':28}{f50:9.1f}{f99:9.1f}")
    print(f"ratio bummerl/floor: p50 {p50 / f50:.1f}x, p99 {p99 / f99:.1f}x; "
          f"events not seen (coalesced or late): {missing}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
