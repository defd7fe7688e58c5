"""What the kit counts and says, against a real service (issue 44): exceptions of the bot in
the summary, each refusal counted and logged once (the one that forfeits a match too), the
match's score as game points won (never "3:-1"), versions named when both seats are the same
bot, and what the connection joined as the service confirms it."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from servicekit import CONFIG, fresh_database, play_in_threads, running_service

import engine
from client import Runner
from client.__main__ import summary
from client.events import JsonFormatter
from examples.random_bot import RandomBot
from services.core import matches as plain

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "kit-log.schema.json").read_text()))
CANDIDATES = ["exchange", "close", "declare H", "declare S", "play AH", "play TS", "play JC",
              "play QD", "play KC"]


@pytest.fixture
def service(tmp_path, request):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


class Raising(RandomBot):
    """Raises on every other turn."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.calls = self.raised = 0

    def act(self, observation):
        self.calls += 1
        if self.calls % 2:
            self.raised += 1
            raise RuntimeError("a bug of the bot")
        return super().act(observation)


class Illegal(RandomBot):
    """Answers every turn with an action that is not legal."""

    def act(self, observation):
        legal = {str(a) for a in observation.legal_actions}
        return next(engine.Action.from_text(t) for t in CANDIDATES if t not in legal)


def events(caplog, name, bot=None):
    return [r for r in caplog.records if getattr(r, "event", None) == name
            and (bot is None or r.fields.get("bot") == bot)]


def valid(caplog) -> None:
    for record in caplog.records:  # every line --log-json would print
        SCHEMA.validate(json.loads(JsonFormatter().format(record)))


def test_the_summary_counts_the_bots_exceptions(service, caplog):
    caplog.set_level(logging.INFO, logger="bummerl.client")
    a_id, a_token = service.register("buggy")
    b_id, b_token = service.register("fine")
    plain.create_match([a_id, b_id], seed=3, sessions=service.sessions, config=service.config)
    bot = Raising(1)
    runners = play_in_threads(service, [(bot, a_token), (RandomBot(2), b_token)], matches=1)
    stats = runners[0].stats
    assert bot.raised >= 2 and stats.exceptions == bot.raised
    assert summary(stats).endswith(
        f", exceptions {bot.raised} (the bot's act raised on {bot.raised} turn(s): the kit "
        "played the first legal action instead)")
    assert summary(runners[1].stats) == (
        f"turns {runners[1].stats.turns}, won {runners[1].stats.matches_won}, lost "
        f"{runners[1].stats.matches_lost}, refused 0")  # (none: nothing said of them)


@pytest.mark.parametrize("matches", [1, None])
def test_each_refusal_is_counted_and_logged_once(service, caplog, matches):
    """3 illegal actions forfeit the match (CONFIG.max_illegal): 3 refusals, each logged once
    with its rule once, whether the kit leaves at the match's end (--matches 1) or stays and
    hears the last refusal after the match's end."""
    caplog.set_level(logging.INFO, logger="bummerl.client")
    assert CONFIG.max_illegal == 3
    a_id, a_token = service.register("clumsy")
    b_id, b_token = service.register("fine")
    m = plain.create_match([a_id, b_id], seed=5, sessions=service.sessions,
                           config=service.config)
    if matches:
        runners = play_in_threads(service, [(Illegal(1), a_token), (RandomBot(2), b_token)],
                                  matches=1)
    else:
        runners = [Runner(bot, service.server.address, token)
                   for bot, token in ((Illegal(1), a_token), (RandomBot(2), b_token))]
        threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while plain.get_match(m.id, sessions=service.sessions).state == "running":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(1.0)  # the last refusal, if it comes after the match's end
        for r in runners:
            r.stop()
        for t in threads:
            t.join(10)
    assert runners[0].stats.rejected == 3
    refused = events(caplog, "refused", "clumsy")
    assert len(refused) == 3, [r.getMessage() for r in refused]
    for record in refused:
        rule = record.fields["rule"]
        assert rule.startswith("R") and record.getMessage().count(rule) == 1, \
            record.getMessage()
        assert "?" not in record.fields["action"]
    assert "forfeited for illegal actions" in refused[-1].getMessage()
    assert summary(runners[0].stats).endswith("refused 3")
    valid(caplog)


def test_the_score_reads_as_game_points_won(service, caplog):
    caplog.set_level(logging.INFO, logger="bummerl.client")
    a_id, a_token = service.register("alice")
    b_id, b_token = service.register("bob")
    plain.create_match([a_id, b_id], seed=11, sessions=service.sessions, config=service.config)
    play_in_threads(service, [(RandomBot(1), a_token), (RandomBot(2), b_token)], matches=1)
    lines = events(caplog, "hand_ended") + events(caplog, "match_ended")
    assert lines
    for record in lines:
        message = record.getMessage()
        assert "counters" not in message and not re.search(r"-\d", message), message
        you, them = map(int, re.search(
            r"match score (\d+):(\d+) \(you:them; game points, 7 win\)", message).groups())
        seat = record.fields["seat"]
        score = record.fields["score"]
        assert score == [7 - c for c in record.fields["counters"]]
        assert (you, them) == (score[seat], score[1 - seat])
    for record in events(caplog, "match_ended"):
        you, them = map(int, re.search(r"match score (\d+):(\d+)",
                                       record.getMessage()).groups())
        assert (you >= 7 > them) if record.fields["won"] else (them >= 7 > you)
    valid(caplog)


def test_versions_are_named_when_both_seats_are_the_same_bot(service, caplog):
    caplog.set_level(logging.INFO, logger="bummerl.client")
    bot_id, token = service.register("mybot")
    m = plain.create_match([bot_id, bot_id], seed=7, versions=("1.0", "2.0"), origin="test",
                           sessions=service.sessions, config=service.config)
    runners = [Runner(RandomBot(seat), service.server.address, token, max_matches=1,
                      version=version) for seat, version in enumerate(("1.0", "2.0"))]
    threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    connected = sorted(r.getMessage() for r in events(caplog, "connected"))
    assert [" as mybot@1.0 " in connected[0], " as mybot@2.0 " in connected[1]] == [True, True]
    for kind in ("match_started", "match_ended"):
        opponents = sorted(r.fields["opponent"] for r in events(caplog, kind))
        assert opponents == ["mybot@1.0", "mybot@2.0"], kind
    detail = plain.get_match(m.id, sessions=service.sessions).end_detail
    assert "(mybot@1.0)" in detail and "(mybot@2.0)" in detail, detail
    ended = [r.getMessage() for r in events(caplog, "match_ended")]
    assert all("(mybot@1.0)" in e and "(mybot@2.0)" in e for e in ended), ended
    valid(caplog)


def connect_once(service, token, caplog, **options) -> logging.LogRecord:
    runner = Runner(RandomBot(1), service.server.address, token, **options)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not runner.stats.connections:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.05)
    runner.stop()
    thread.join(10)
    return events(caplog, "connected")[-1]


def test_the_connection_says_what_it_joined_as_the_service_confirms(service, caplog):
    caplog.set_level(logging.INFO, logger="bummerl.client")
    _, token = service.register("mybot")
    line = connect_once(service, token, caplog, people="casual")
    assert line.fields["joined"] == ["ladder", "challenges", "people-casual"]
    assert "the service confirms: the ladder and tournaments, challenges, people's casual " \
           "games (--people casual)" in line.getMessage()
    line = connect_once(service, token, caplog, people="rated", version="2.0",
                        challenges_only=True)
    assert line.fields["joined"] == ["challenges", "people-rated", "version-tests"]
    assert line.fields["version"] == "2.0" and " as mybot@2.0 " in line.getMessage()
    assert "challenges only: the ladder does not pair it" in line.getMessage()
    line = connect_once(service, token, caplog)
    assert line.fields["joined"] == ["ladder", "challenges"]
    assert "no people (--people casual or rated to play them)" in line.getMessage()
    valid(caplog)


def test_an_illegal_limit_of_one_is_one_refusal(tmp_path, request, caplog):
    """The forfeiting refusal alone (max_illegal 1): counted once, logged once."""
    caplog.set_level(logging.INFO, logger="bummerl.client")
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database, replace(CONFIG, max_illegal=1)) as svc:
        a_id, a_token = svc.register("clumsy")
        b_id, b_token = svc.register("fine")
        plain.create_match([a_id, b_id], seed=5, sessions=svc.sessions, config=svc.config)
        runners = play_in_threads(svc, [(Illegal(1), a_token), (RandomBot(2), b_token)],
                                  matches=1)
    assert runners[0].stats.rejected == 1
    assert len(events(caplog, "refused", "clumsy")) == 1
