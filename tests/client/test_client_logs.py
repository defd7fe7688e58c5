"""The kit's log lines against a real service (issue 11): connected, match started, hands,
match ended (with a time forfeit's detail), refused actions with their rule; as JSON too; and
the bot asked about several matches at once without two calls overlapping."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

import jsonschema
import pytest
from servicekit import fresh_database, play_in_threads, running_service

import engine
from client import Runner
from client.events import JsonFormatter
from examples.random_bot import RandomBot
from services.core import matches as plain

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "kit-log.schema.json").read_text()))
CANDIDATES = ["exchange", "close", "declare H", "declare S", "play AH", "play TS", "play JC"]


@pytest.fixture
def service(tmp_path, request):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


class IllegalOnce(RandomBot):
    """Answers its first turn with an action that is not legal (the kit sends what it chose)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.tried = False

    def act(self, observation):
        if not self.tried:
            self.tried = True
            legal = {str(a) for a in observation.legal_actions}
            return next(engine.Action.from_text(t) for t in CANDIDATES if t not in legal)
        return super().act(observation)


class Sleepy(RandomBot):
    def act(self, observation):
        time.sleep(1.5)
        return super().act(observation)


def events(caplog, name):
    return [r for r in caplog.records if getattr(r, "event", None) == name]


def test_a_line_for_each_event(service, caplog):
    caplog.set_level(logging.INFO, logger="bummerl.client")
    a_id, a_token = service.register("alice")
    b_id, b_token = service.register("bob")
    plain.create_match([a_id, b_id], seed=5, sessions=service.sessions, config=service.config)
    play_in_threads(service, [(IllegalOnce(1), a_token), (RandomBot(2), b_token)], matches=1)
    connected = [r.getMessage() for r in events(caplog, "connected")]
    assert any(service.server.address in m and "as alice" in m for m in connected)
    started = [r for r in events(caplog, "match_started") if r.fields["opponent"] == "bob"]
    assert len(started) == 1
    assert "vs bob, soft, move 3.0 s + bank 2.0 s" in started[0].getMessage()
    hands = events(caplog, "hand_ended")
    assert hands and all("game point" in r.getMessage() for r in hands)
    refused = events(caplog, "refused")
    assert len(refused) == 1 and refused[0].fields["rule"].startswith("R")
    assert refused[0].fields["rule"] in refused[0].getMessage()
    ended = events(caplog, "match_ended")
    assert len(ended) == 2
    assert {r.fields["won"] for r in ended} == {True, False}
    assert all("played out" in r.getMessage() and "match score" in r.getMessage()
               for r in ended)
    for record in caplog.records:  # every line --log-json would print
        SCHEMA.validate(json.loads(JsonFormatter().format(record)))
    line = json.loads(JsonFormatter().format(ended[0]))
    assert line["event"] == "match_ended" and line["level"] == "info"
    assert line["reason"] == "played out" and isinstance(line["won"], bool)
    assert line["message"] == ended[0].getMessage() and line["time"].endswith("Z")


def test_a_time_forfeit_is_reported_with_its_detail(service, caplog):
    caplog.set_level(logging.INFO, logger="bummerl.client")
    a_id, a_token = service.register("slow")
    b_id, b_token = service.register("quick")
    plain.create_match([a_id, b_id], seed=1, move_ms=200, bank_ms=100,
                       sessions=service.sessions, config=service.config)
    runners = play_in_threads(service, [(Sleepy(1), a_token), (RandomBot(2), b_token)],
                              matches=1)
    assert runners[0].stats.matches_lost == 1
    ended = [r for r in events(caplog, "match_ended") if not r.fields["won"]]
    assert len(ended) == 1
    message = ended[0].getMessage()
    assert "lost vs quick" in message and "forfeit on time" in message
    assert ended[0].fields["detail"] and ended[0].fields["detail"] in message


class OneAtATime(RandomBot):
    """Fails the test if two calls overlap; slow enough for them to overlap if allowed."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.inside = 0
        self.overlaps = 0
        self.calls = 0

    def act(self, observation):
        self.inside += 1
        self.calls += 1
        if self.inside > 1:
            self.overlaps += 1
        time.sleep(0.005)
        self.inside -= 1
        return super().act(observation)


class Concurrent(OneAtATime):
    thread_safe = True
    lock = threading.Lock()

    def act(self, observation):
        with self.lock:
            self.inside += 1
            self.calls += 1
            if self.inside > 1:
                self.overlaps += 1
        time.sleep(0.02)
        with self.lock:
            self.inside -= 1
        return self.rng.choice(observation.legal_actions)


@pytest.mark.parametrize("bot_class", [OneAtATime, Concurrent])
def test_several_matches_at_once(service, bot_class):
    me_id, me_token = service.register("multi")
    others = [service.register(f"opp{i}") for i in range(3)]
    for i, (other_id, _) in enumerate(others):
        plain.create_match([me_id, other_id], seed=10 + i, sessions=service.sessions,
                           config=service.config)
    me = bot_class(7)
    runners = [Runner(me, service.server.address, me_token, max_matches=3)]
    runners += [Runner(RandomBot(i), service.server.address, token, max_matches=1)
                for i, (_, token) in enumerate(others)]
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for r in runners:
        r.stop()
    assert not any(t.is_alive() for t in threads), "the matches did not end in time"
    assert runners[0].stats.matches_won + runners[0].stats.matches_lost == 3
    if bot_class is OneAtATime:
        assert me.overlaps == 0
    else:
        assert me.overlaps > 0  # a thread-safe bot is asked about several matches at once


@pytest.mark.parametrize("options, shown, hidden", [
    ({}, ["match_ended", "refused"], ["turn"]),
    ({"quiet": True}, ["refused"], ["match_ended", "turn"]),
    ({"verbose": True}, ["match_ended", "refused", "turn"], []),
])
def test_quiet_and_verbose(options, shown, hidden, capsys):
    from client.events import configure, event

    configure(**options)
    kit = logging.getLogger("bummerl.client")
    try:
        event(kit, logging.INFO, "match_ended", "match_ended line")
        event(kit, logging.WARNING, "refused", "refused line")
        kit.debug("turn line")
        err = capsys.readouterr().err
    finally:
        kit.handlers.clear()
        kit.propagate = True
        kit.setLevel(logging.NOTSET)
    for name in shown:
        assert f"{name} line" in err
    for name in hidden:
        assert f"{name} line" not in err


def test_json_lines(capsys):
    from client.events import configure, event

    configure(as_json=True)
    kit = logging.getLogger("bummerl.client")
    try:
        event(kit, logging.INFO, "match_started", "match %d started", 3, match_id=3,
              opponent="x")
        line = json.loads(capsys.readouterr().err.strip())
    finally:
        kit.handlers.clear()
        kit.propagate = True
        kit.setLevel(logging.NOTSET)
    assert line["event"] == "match_started" and line["match_id"] == 3
    assert line["message"] == "match 3 started" and line["opponent"] == "x"


def test_a_refused_hello_is_a_notice_line_and_the_bot_plays_on(service, caplog):
    """A client name over the Hello's limit: the service ignores the Hello and says so (a
    Notice); the kit logs it as a `notice` event naming the field and plays its match."""
    caplog.set_level(logging.INFO, logger="bummerl.client")
    a_id, a_token = service.register("alice")
    b_id, b_token = service.register("bob")
    plain.create_match([a_id, b_id], seed=5, sessions=service.sessions, config=service.config)
    runners = [Runner(RandomBot(1), service.server.address, a_token, max_matches=1,
                      client_name="c" * 300),
               Runner(RandomBot(2), service.server.address, b_token, max_matches=1)]
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for r in runners:
        r.stop()
    assert not any(t.is_alive() for t in threads), "the match was not played to its end"
    (notice,) = events(caplog, "notice")
    assert notice.levelno == logging.WARNING
    assert notice.fields["kind"] == "hello-refused"  # a plain word in --log-json (issue 29)
    SCHEMA.validate(json.loads(JsonFormatter().format(notice)))
    assert notice.fields["field"] == "hello.client" and "hello.client" in notice.getMessage()
    assert len(events(caplog, "match_ended")) == 2
