"""The socket tier (web.sockets): a person's table pushed to the browser from the service, on
a real site (service, worker, web and the tier, tablekit.people_site), read as a browser's
EventSource reads it."""

from __future__ import annotations

import html
import json
import queue
import random
import re
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from servicekit import held_after
from tablekit import Person, people_site, wait_for

pytestmark = pytest.mark.timeout(180)


class Events:
    """One event stream, read on a thread as EventSource does: (name, id, data) in `got`."""

    def __init__(self, url: str, last_id: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        headers = {"Accept": "text/event-stream", **(headers or {})}
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
        self.response = urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                               timeout=60)
        self.got: queue.Queue[tuple[str, int | None, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        name, ident, data = "message", None, []
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("id: "):
                    ident = int(line[4:])
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    self.got.put((name, ident, json.loads("\n".join(data))))
                    name, ident, data = "message", None, []
        except (OSError, ValueError, AttributeError):  # (closed by the test)
            pass
        self.got.put(None)  # the stream ended

    def next(self, timeout: float = 30.0) -> tuple[str, int | None, Any] | None:
        return self.got.get(timeout=timeout)

    def close(self) -> None:
        self.response.close()


def live_url(person: Person, match_id: int) -> str:
    _, body, _ = person.get(f"/table/{match_id}")
    found = re.search(r'data-live-url="([^"]+)"', body)
    assert found, "the table page names no socket tier"
    return html.unescape(found.group(1))


def actions_until(events: Events, seq: int) -> list[int]:
    """The seqs of the actions the stream's `table` events carry, up to the table at `seq`."""
    actions: list[int] = []
    while not actions or actions[-1] < seq - 1:
        got = events.next()
        assert got is not None and got[0] == "table", got
        actions += [a["seq"] for a in got[2]["actions"]]
    return actions


def resumes(url: str, last: int, seq: int) -> None:
    """A stream opened at `url` with Last-Event-ID `last` sends first the table at `seq`, with
    every action from `last` on."""
    again = Events(url, last_id=last)
    try:
        name, ident, data = again.next()
        assert name == "table" and ident == seq
        assert [a["seq"] for a in data["actions"]] == list(range(last, seq))
    finally:
        again.close()


def my_turn(person: Person, match_id: int) -> dict[str, Any]:
    return wait_for(lambda: (lambda t: t if t["state"] != "running" or t["to_act"] == t["seat"]
                             else None)(person.table(match_id)), 30, "the person's turn")


def play(person: Person, match_id: int, rng: random.Random, moves: int) -> dict[str, Any]:
    table = my_turn(person, match_id)
    for _ in range(moves):
        if table["state"] != "running":
            break
        action = "claim" if table["claim_good"] else rng.choice(
            [a for a in table["legal"] if a != "claim"] or table["legal"])
        person.act(match_id, action, table["seq"])
        table = my_turn(person, match_id)
    return table


@pytest.fixture
def site(tmp_path, monkeypatch):
    with people_site(tmp_path, monkeypatch, min_think_ms=0, sockets={}) as s:
        yield s


def test_every_change_is_pushed_with_its_actions_and_only_the_seats_cards(site):
    ada = Person(site.web)
    ada.guest("ada")
    match_id = ada.start("house-random")
    events = Events(live_url(ada, match_id) + "&after=0")
    rng = random.Random(3)
    try:
        final = play(ada, match_id, rng, 200)
        assert final["state"] == "finished"
        tables: list[dict[str, Any]] = []
        while True:
            got = events.next()
            assert got is not None, "the stream ended before the match's end"
            name, ident, data = got
            if name == "end":
                break
            assert name == "table" and ident == data["seq"]
            tables.append(data)
    finally:
        events.close()
    assert tables[-1]["state"] == "finished" and tables[-1]["seed"]
    seqs = [a["seq"] for t in tables for a in t["actions"]]
    assert seqs == list(range(final["seq"])), "an action was missed or sent twice"
    for t in tables[:-1]:  # the seat's own cards, and none of the other seat's
        assert sorted(t["hand"]) == held_after(site.sessions, match_id, t["seat"], t["seq"])
        assert t["seed"] is None
    assert tables[-1] == {**final, "now": tables[-1]["now"], "actions": tables[-1]["actions"]}


def test_a_dropped_stream_resumes_from_the_last_seq_it_saw_missing_nothing(site):
    bea = Person(site.web)
    bea.guest("bea")
    match_id = bea.start("house-random")
    url = live_url(bea, match_id)
    rng = random.Random(8)
    seen = my_turn(bea, match_id)["seq"]
    first = Events(url, last_id=seen)
    table = play(bea, match_id, rng, 1)
    name, ident, data = first.next()
    assert name == "table" and [a["seq"] for a in data["actions"]][0] == seen
    last = ident
    first.close()  # dropped; the match goes on meanwhile
    table = play(bea, match_id, rng, 3)
    resumes(url, last, table["seq"])


def test_a_stream_ends_when_its_session_is_revoked(site):
    cid = Person(site.web)
    cid.signup("cid", "correct horse battery")
    match_id = cid.start("house-random")
    url = live_url(cid, match_id)
    events = Events(url)
    try:
        cid.post_form("/logout", {})
        assert wait_for(lambda: _until_end(events), 20, "the stream's end") == "end"
        with pytest.raises(urllib.error.HTTPError) as refused:  # nor can it be opened again
            Events(url)
        assert refused.value.code == 401
        assert "session has ended" in json.loads(refused.value.read())["error"]
    finally:
        events.close()


def _until_end(events: Events) -> str | None:
    try:
        got = events.next(timeout=0.5)
    except queue.Empty:
        return None
    return "end" if got is None or got[0] == "end" else None


def test_forged_expired_and_other_tables_tickets_are_refused_naming_why(site):
    dot = Person(site.web)
    dot.guest("dot")
    match_id = dot.start("house-random")
    url = live_url(dot, match_id)
    base, _, ticket = url.partition("?ticket=")
    other = base.rsplit("/", 1)[0] + f"/{match_id + 1}?ticket={ticket}"
    for bad, words in ((base + "?ticket=" + ticket[:-2] + "xx", "not one this site issued"),
                       (base + "?ticket=", "not one this site issued"),
                       (other, f"for table {match_id}, not {match_id + 1}"),
                       (base.rsplit("/", 1)[0] + "/１２?ticket=" + ticket, "is not a match id"),
                       (base.rsplit("/", 1)[0] + "/99999999999999999999?ticket=" + ticket,
                        "is not a match id")):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.parse.quote(bad, safe=":/?=&%"), timeout=10)
        assert refused.value.code in (400, 401)
        assert words in json.loads(refused.value.read())["error"]


STREAMS = 2000


@pytest.fixture
def roomy_site(tmp_path, monkeypatch):
    with people_site(tmp_path, monkeypatch, min_think_ms=0,
                     sockets={"per_session": STREAMS}) as s:
        yield s


def test_2000_streams_are_all_served_and_all_hear_the_next_change(roomy_site):
    """2,000 streams opened at once in this process (an aiohttp client): every one is
    welcomed, the tier counts them, and the next change reaches each of them."""
    import asyncio

    import aiohttp

    eve = Person(roomy_site.web)
    eve.guest("eve")
    match_id = eve.start("house-random")
    url = live_url(eve, match_id)
    seen = my_turn(eve, match_id)["seq"]

    async def run() -> tuple[list[int], list[int], int]:
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=120, sock_read=60)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            responses = await asyncio.gather(*(
                session.get(url, headers={"Last-Event-ID": str(seen)})
                for _ in range(STREAMS)))
            try:
                statuses = [r.status for r in responses]
                for r in responses:  # each welcomed: its first line is the retry
                    assert (await r.content.readline()).startswith(b"retry:")
                async with session.get(roomy_site.sockets.url + "/sockets/health") as h:
                    open_now = (await h.json())["streams"]
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, play, eve, match_id, random.Random(1), 1)

                async def first_table(r: aiohttp.ClientResponse) -> int:
                    while True:
                        line = await r.content.readline()
                        if line.startswith(b"id: "):
                            return int(line[4:])

                ids = await asyncio.wait_for(asyncio.gather(*(first_table(r)
                                                              for r in responses)), 90)
                return statuses, ids, open_now
            finally:
                for r in responses:
                    r.close()

    statuses, ids, open_now = asyncio.run(run())
    assert statuses == [200] * STREAMS
    assert open_now == STREAMS
    assert len(ids) == STREAMS and min(ids) > seen


def test_the_streams_go_on_across_a_restart_of_the_service_missing_nothing(site):
    """The service is stopped and started again on its address: the tier opens its
    FollowTables stream again and every follow resumes from the last seq it received; the
    browser's stream is never dropped."""
    from services.api.server import create_server

    fay = Person(site.web)
    fay.guest("fay")
    match_id = fay.start("house-random")
    seen = my_turn(fay, match_id)["seq"]
    events = Events(live_url(fay, match_id), last_id=seen)
    try:
        site.server.stop(grace=0)
        wait_for(lambda: not site.sockets_connected(), 10, "the tier to see the service gone")
        site.server = create_server(site.service, sessions=site.sessions,
                                    config=site.config).start()
        table = play(fay, match_id, random.Random(2), 2)
        assert actions_until(events, table["seq"]) == list(range(seen, table["seq"]))
    finally:
        events.close()


def test_a_silently_cut_link_to_the_service_is_found_and_the_tables_go_on(tmp_path, monkeypatch):
    """The tier reaches the service through a proxy that then holds every byte (a link cut
    silently: nothing arrives, nothing is closed). The tier's keepalive pings find it within
    `keepalive_s` and a half; once the link is back the streams resume, missing nothing, and
    the browser's stream was never dropped."""
    from faultproxy import BLACKHOLE, Proxy

    with people_site(tmp_path, monkeypatch, min_think_ms=0,
                     sockets={"keepalive_s": 5.0}, sockets_via=Proxy) as site:
        proxy = site.sockets_proxy
        gus = Person(site.web)
        gus.guest("gus")
        match_id = gus.start("house-random")
        seen = my_turn(gus, match_id)["seq"]
        events = Events(live_url(gus, match_id), last_id=seen)
        try:
            wait_for(site.sockets_connected, 10, "the tier's stream to the service")
            proxy.set(BLACKHOLE)
            table = play(gus, match_id, random.Random(4), 2)  # (the web reaches the service)
            wait_for(lambda: not site.sockets_connected(), 15, "the tier to find the cut")
            proxy.restore()
            assert actions_until(events, table["seq"]) == list(range(seen, table["seq"]))
        finally:
            events.close()


def test_a_stream_opened_while_the_sessions_are_read_is_not_ended():
    # the check reads the sessions of the streams open when it began; one opened meanwhile
    # (its session checked at its open) was not asked about, so it is not ended for it
    import asyncio

    from web.sockets.server import Settings, Stream, Tier

    async def run() -> tuple[Stream, Stream]:
        tier = Tier(Settings(secret="s", session_check_s=0.01), None, None)  # type: ignore[arg-type]
        old, late = Stream("old"), Stream("late")
        tier.streams.add(old)

        async def live(hashes: list[str]) -> set[str]:
            tier.streams.add(late)  # opened while the database is read
            await asyncio.sleep(0)
            return set(hashes)

        tier.live = live  # type: ignore[method-assign]
        checker = asyncio.ensure_future(tier.check_sessions())
        await asyncio.sleep(0.1)
        checker.cancel()
        return old, late

    old, late = asyncio.run(run())
    assert not old.revoked.is_set() and not late.revoked.is_set()


def test_a_stream_opened_while_the_database_is_away_is_a_503_saying_so(tmp_path):
    """The tier cannot check the ticket's session (its database does not answer): the stream
    is refused with a 503 that says why, and nothing is opened."""
    import asyncio

    import aiohttp
    from aiohttp.test_utils import TestServer
    from sqlalchemy.orm import sessionmaker

    from db.base import make_engine
    from web import tickets
    from web.sockets.server import Settings, make_app
    from web.sockets.upstream import Upstream

    away = sessionmaker(make_engine(f"sqlite:///{tmp_path / 'no-such-folder' / 'db.sqlite3'}"))
    app = make_app(Settings(secret="s"), Upstream("127.0.0.1:1", "t"), away)
    ticket = tickets.issue("s", 1, 7, "session-token")

    async def run() -> tuple[int, dict[str, Any], dict[str, Any]]:
        async with TestServer(app) as server, aiohttp.ClientSession() as http_:
            async with http_.get(server.make_url(f"/sockets/table/7?ticket={ticket}")) as r:
                body = await r.json()
                status = r.status
            async with http_.get(server.make_url("/sockets/health")) as h:
                return status, body, await h.json()

    status, body, health = asyncio.run(run())
    assert status == 503 and "database does not answer" in body["error"]
    assert health["streams"] == 0


def test_a_stream_dropped_at_one_tier_process_resumes_at_another(site):
    """Two socket processes behind one address: a browser whose stream dropped at one lands on
    the other with its Last-Event-ID, and gets every action after it (each process follows its
    own browsers' tables; nothing is shared between them but the service)."""
    from tablekit import SECRET, WEB_TOKEN, free_port

    from web.sockets.process import Options, SocketTier

    other = SocketTier(Options("127.0.0.1", free_port(), service_address=site.service,
                               web_token=WEB_TOKEN, secret=SECRET,
                               sessions=site.sessions)).start()
    try:
        hal = Person(site.web)
        hal.guest("hal")
        match_id = hal.start("house-random")
        url = live_url(hal, match_id)
        seen = my_turn(hal, match_id)["seq"]
        first = Events(url, last_id=seen)
        rng = random.Random(12)
        table = play(hal, match_id, rng, 1)
        name, last, _ = first.next()
        assert name == "table"
        first.close()
        table = play(hal, match_id, rng, 2)
        resumes(url.replace(site.sockets.url, other.url), last, table["seq"])
    finally:
        other.stop()
