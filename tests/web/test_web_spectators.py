"""The socket tier's spectators (web.sockets.spectate): a match page's live part pushed from
the tier on a real site (service, worker, web and the tier, tablekit.people_site), read as the
page's EventSource reads it, against the deal the engine replays from the database."""

from __future__ import annotations

import html
import json
import random
import re
import socket
import urllib.error
import urllib.request
from typing import Any

import pytest
from sqlalchemy import select
from tablekit import Person, people_site, wait_for
from test_web_sockets import Events, my_turn, play

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def site(tmp_path, monkeypatch):
    with people_site(tmp_path, monkeypatch, min_think_ms=0, sockets={}) as s:
        yield s


def events_url(site: Any, match_id: int) -> str:
    """The stream the match page's live badge names (at the tier, when the web has one)."""
    status, body, headers = Person(site.web).get(f"/matches/{match_id}")
    assert status == 200
    found = re.search(r'id="live-badge" data-events="([^"]+)"', body)
    assert found, "the match page is not live"
    assert site.sockets.url in headers["Content-Security-Policy"]  # connect-src allows it
    return html.unescape(found.group(1))


def hidden_after(sessions: Any, match_id: int, seq: int) -> set[str]:
    """The cards in either seat's hand after the match's first `seq` actions that no spectator
    may see (by the engine alone, from the seed and the log): all but the hand's trump card
    (face up, or "trump card was") and a card taken in an exchange, which the page shows."""
    import engine
    from db.models import ActionLog, Hand, Match

    with sessions() as s:
        m = s.get(Match, match_id)
        first = s.scalar(select(Hand).where(Hand.match_id == match_id, Hand.number == 0))
        log = list(s.scalars(select(ActionLog).where(ActionLog.match_id == match_id,
                                                     ActionLog.seq < seq)
                             .order_by(ActionLog.seq)))
    game = engine.Match.replay(m.seed, m.profile,
                               [(a.seat, engine.Action.from_text(a.action)) for a in log],
                               first_dealer=first.dealer)
    views = [game.observe(seat) for seat in (0, 1)]
    held = {str(c) for v in views for c in v.hand}
    public = {str(views[0].trump_card), *(str(e.taken) for e in views[0].exchanges)}
    return held - public


def shown_cards(data: dict[str, Any]) -> set[str]:
    return {c for part in data["html"].values() for c in re.findall(r'data-card="(..)"', part)}


def logged_seqs(data: dict[str, Any]) -> list[int]:
    return sorted(int(n) for n in re.findall(r'<span class="seq">(\d+)</span>',
                                             data["html"]["live-match"]))


def drop(events: Events) -> None:
    """Close the stream now, as a tab closed (Events.close waits for its reader's next line)."""
    events.response.fp.raw._sock.shutdown(socket.SHUT_RDWR)
    events.close()


def watch_streams(site: Any) -> int:
    """The WatchMatch streams open at the service (the public's and the web's credential's)."""
    limits = site.server.bots.streams.limits
    with limits._lock:
        return sum(n for key, n in limits._open.items()
                   if key.startswith(("watch:", "watch-web:")))


def until(events: Events, seq: int) -> tuple[str, int | None, Any]:
    """The stream's update at `seq` (the updates before it skipped)."""
    while True:
        got = events.next()
        assert got is not None and got[0] == "update", got
        if got[1] == seq:
            return got


def health(site: Any) -> dict[str, Any]:
    with urllib.request.urlopen(site.sockets.url + "/sockets/health", timeout=10) as r:
        found: dict[str, Any] = json.loads(r.read())
    return found


def test_a_spectator_sees_each_change_in_public_and_the_stream_ends_with_the_match(site):
    ada = Person(site.web)
    ada.guest("ada")
    match_id = ada.start("house-random")
    url = events_url(site, match_id)
    assert url == f"{site.sockets.url}/sockets/match/{match_id}"
    events = Events(url)
    try:
        final = play(ada, match_id, random.Random(3), 200)
        assert final["state"] == "finished"
        updates: list[tuple[int, dict[str, Any]]] = []
        while True:
            got = events.next()
            assert got is not None, "the stream ended before the match's end"
            name, ident, data = got
            if name == "end":
                break
            assert name == "update" and ident is not None
            updates.append((ident, data))
        assert events.next() is None, "the stream goes on after its end"
    finally:
        events.close()
    ids = [ident for ident, _ in updates]
    assert ids == sorted(ids) and len(set(ids)) > 3, ids  # changes, as they came
    assert ids[-1] == final["seq"] and updates[-1][1]["final"]
    for seq, data in updates[:-1]:  # while the hand is in play: no card in hand, no stock
        assert not data["final"]
        assert f'data-seq="{seq}"' in data["html"]["live-match"]
        assert not shown_cards(data) & hidden_after(site.sessions, match_id, seq), (
            seq, _around(data, shown_cards(data) & hidden_after(site.sessions, match_id, seq)))
        assert logged_seqs(data) == list(range(seq))
    # the last is what the web's own stream (and a reload) renders of the finished match
    web = Events(f"{site.web}/events/matches/{match_id}")
    try:
        name, _, data = web.next()
    finally:
        web.close()
    last = updates[-1][1]
    assert name == "update" and data["final"]
    assert _timeless(data) == _timeless(last)


def _around(data, cards):  # type: ignore[no-untyped-def]
    text = " ".join(data["html"].values())
    return [text[max(0, text.find(f'data-card="{c}"') - 300):text.find(f'data-card="{c}"') + 40]
            for c in cards]


def _timeless(data: dict[str, Any]) -> dict[str, Any]:
    return {k: re.sub(r'data-now="[^"]*"', "", v) for k, v in data["html"].items()}


def test_viewers_of_one_match_share_one_subscription_and_a_resume_misses_nothing(site):
    bea = Person(site.web)
    bea.guest("bea")
    match_id = bea.start("house-random")
    url = events_url(site, match_id)
    rng = random.Random(8)
    seen = my_turn(bea, match_id)["seq"]
    viewers = [Events(url) for _ in range(5)]
    try:
        firsts = [v.next() for v in viewers]
        assert {(f[0], f[1]) for f in firsts} == {("update", seen)}
        wait_for(lambda: health(site)["spectators"] == 5, 10, "the five viewers")
        assert health(site)["matches"] == 1  # one WatchMatch stream for the five
        assert watch_streams(site) == 1  # (as the service counts them)
        table = play(bea, match_id, rng, 1)
        lasts = [until(v, table["seq"]) for v in viewers]  # one render, the same for each
        assert len({json.dumps(n) for n in lasts}) == 1  # (its time stamp too)
        last = table["seq"]
    finally:
        for v in viewers:
            drop(v)
    wait_for(lambda: health(site)["matches"] == 0 == watch_streams(site), 10,
             "the subscription's end")
    table = play(bea, match_id, rng, 3)  # dropped meanwhile; the match goes on
    again = Events(url, last_id=last)
    try:
        name, ident, data = again.next()
        assert name == "update" and ident == table["seq"] > last
        assert logged_seqs(data) == list(range(table["seq"]))  # every action, those missed too
    finally:
        drop(again)


VIEWERS = 500


@pytest.fixture
def proxied_site(tmp_path, monkeypatch):
    """A site whose tier sits behind one proxy (as on Kubernetes, behind the Ingress): the
    client's address is the one X-Forwarded-For names."""
    with people_site(tmp_path, monkeypatch, min_think_ms=0,
                     sockets={"trusted_proxies": 1, "per_address": 2}) as s:
        yield s


def test_500_viewers_of_one_match_are_one_subscription_and_all_hear_the_next_change(
        proxied_site):
    """500 spectators' streams opened at once (an aiohttp client), each from an address of
    its own: one WatchMatch stream at the service, one render per change, and each of them gets
    it."""
    site = proxied_site
    import asyncio

    import aiohttp

    eve = Person(site.web)
    eve.guest("eve")
    match_id = eve.start("house-random")
    url = events_url(site, match_id)
    seen = my_turn(eve, match_id)["seq"]

    async def ident(r: aiohttp.ClientResponse) -> int:
        while True:
            line = await r.content.readline()
            if line.startswith(b"id: "):
                return int(line[4:])

    async def run() -> tuple[list[int], list[int], dict[str, Any], int]:
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=120, sock_read=60)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            responses = await asyncio.gather(*(
                session.get(url, headers={"X-Forwarded-For": f"10.0.{i // 250}.{i % 250 + 1}"})
                for i in range(VIEWERS)))
            try:
                firsts = await asyncio.gather(*(ident(r) for r in responses))
                loop = asyncio.get_running_loop()
                open_now = await loop.run_in_executor(None, health, site)
                streams = await loop.run_in_executor(None, watch_streams, site)
                await loop.run_in_executor(None, play, eve, match_id, random.Random(1), 1)
                nexts = await asyncio.wait_for(asyncio.gather(*(ident(r) for r in responses)),
                                               90)
                return firsts, nexts, open_now, streams
            finally:
                for r in responses:
                    r.close()

    firsts, nexts, open_now, streams = asyncio.run(run())
    assert firsts == [seen] * VIEWERS
    assert open_now["spectators"] == VIEWERS and open_now["matches"] == 1 and streams == 1
    assert min(nexts) > seen  # (a slow one may get a later render: the latest, never older)


def test_the_spectators_go_on_across_a_restart_of_the_service_missing_nothing(site):
    """The service is stopped and started again on its address: the tier opens the match's
    WatchMatch stream again from the last seq it heard of; the browser's stream is never
    dropped and its next update has every action."""
    from services.api.server import create_server

    fay = Person(site.web)
    fay.guest("fay")
    match_id = fay.start("house-random")
    seen = my_turn(fay, match_id)["seq"]
    events = Events(events_url(site, match_id))
    try:
        assert events.next()[:2] == ("update", seen)
        site.server.stop(grace=0)
        site.server = create_server(site.service, sessions=site.sessions,
                                    config=site.config).start()
        table = play(fay, match_id, random.Random(2), 2)
        while True:
            name, ident, data = events.next()
            assert name == "update"
            if ident == table["seq"]:
                break
        assert logged_seqs(data) == list(range(table["seq"]))
        assert health(site)["matches"] == 1
    finally:
        drop(events)


def test_one_address_opens_a_few_match_streams_at_once(proxied_site):
    """Match streams need no session, so one client address may hold `per_address` (here 2)
    at once: one more is a 429 with Retry-After, naming the limit; another address is not
    held back; behind the trusted proxy only its hop counts (a forged hop before it changes
    nothing); a stream closed frees its place."""
    site = proxied_site
    ann = Person(site.web)
    ann.guest("ann")
    url = events_url(site, ann.start("house-random"))

    def stream(*hops: str) -> Events:
        return Events(url, headers={"X-Forwarded-For": ", ".join(hops)})

    def refused(*hops: str) -> urllib.error.HTTPError:
        request = urllib.request.Request(url, headers={"X-Forwarded-For": ", ".join(hops)})
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=10)
        return info.value

    held = [stream("203.0.113.5"), stream("203.0.113.5")]
    try:
        for s in held:
            assert s.next()[0] == "update"
        over = refused("203.0.113.5")
        assert over.code == 429 and over.headers["Retry-After"] == "10"
        assert "this address follows 2 match pages already" in json.loads(over.read())["error"]
        assert refused("198.51.100.1", "203.0.113.5").code == 429  # the forged first hop
        other = stream("203.0.113.6")
        assert other.next()[0] == "update"
        drop(other)
        drop(held.pop())
        wait_for(lambda: health(site)["spectators"] == 1, 10, "the closed stream's end")
        held.append(stream("203.0.113.5"))
        assert held[-1].next()[0] == "update"
    finally:
        for s in held:
            drop(s)


@pytest.fixture
def small_site(tmp_path, monkeypatch):
    with people_site(tmp_path, monkeypatch, min_think_ms=0, sockets={"max_matches": 1}) as s:
        yield s


def test_no_such_match_is_a_404_a_full_tier_a_503_and_the_web_streams_meanwhile(small_site):
    site = small_site
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{site.sockets.url}/sockets/match/999999", timeout=10)
    assert missing.value.code == 404
    assert "no match with id 999999" in json.loads(missing.value.read())["error"]
    wait_for(lambda: health(site)["matches"] == 0, 10, "the subscription's end")
    cid, dot = Person(site.web), Person(site.web)
    cid.guest("cid")
    dot.guest("dot")
    first, second = cid.start("house-random"), dot.start("house-random")
    followed = Events(events_url(site, first))
    try:
        assert followed.next()[0] == "update"
        _, body, _ = Person(site.web).get(f"/matches/{second}")  # the page's fallback
        assert f'data-fallback="/events/matches/{second}"' in body
        with pytest.raises(urllib.error.HTTPError) as full:  # one match at most: the page
            urllib.request.urlopen(events_url(site, second), timeout=10)  # takes the web's
        assert full.value.code == 503
        assert "at most 1" in json.loads(full.value.read())["error"]
        again = Events(events_url(site, first))  # the followed one takes more viewers
        assert again.next()[0] == "update"
        drop(again)
    finally:
        drop(followed)
    site.web_app.config["SOCKETS_URL"] = None  # a web without a tier: its own stream only
    _, body, _ = Person(site.web).get(f"/matches/{second}")
    assert f'data-events="/events/matches/{second}">' in body
