"""`--matches N` never leaves a running match (issue 22), with a real service and the kit as a
real process: after its Nth match it takes no new ones (the service refuses a ladder pairing
or a challenge from then on), finishes every running one, a match that arrives late included,
and says so; with nothing to play it says how to get a match; `--challenges-only` is left at
once on a service that does not confirm it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from bummerl.v1 import match_pb2
from servicekit import OPERATOR, auth, fresh_database, running_service

from client import Runner
from client.challenge import challenge
from client.errors import Unsupported
from examples.random_bot import RandomBot
from services.core import matches as plain
from services.live.play import PlaySession

ROOT = Path(__file__).resolve().parents[2]
SLOW_BOT = """
import time
from client import Bot

class Slow(Bot):
    def act(self, observation):
        time.sleep(0.05)
        return observation.legal_actions[0]
"""


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def kit(tmp_path: Path, address: str, token: str, *options: str) -> subprocess.Popen[str]:
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    return subprocess.Popen(
        [sys.executable, "-m", "client", f"{tmp_path / 'slow.py'}:Slow", "--server", address,
         "--token", token, *options],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)


def background(runner: Runner) -> threading.Thread:
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    return thread


def wait_for(check, what: str, process=None, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if process is not None:
            assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_matches_n_finishes_a_ladder_match_that_arrives_mid_run(service, tmp_path):
    """The issue's run: challenges, then `bot run --matches N`, and a ladder match meanwhile."""
    me_id, me_token = service.register("mybot")
    other_id, other_token = service.register("other")
    opponent = Runner(RandomBot(5), service.server.address, other_token)
    opponent_thread = background(opponent)
    wait_for(lambda: opponent.stats.connections, "the opponent did not connect")
    challenges = [m.match_id for m in challenge(service.channel, me_token, "other", 2)]
    bot = kit(tmp_path, service.server.address, me_token, "--matches", "2")
    try:
        wait_for(lambda: plain.get_match(challenges[0], sessions=service.sessions).seq > 4,
                 "the kit did not start playing", bot)
        # the ladder asks for a pairing now: the kit took its 2 matches, so it is refused
        with pytest.raises(grpc.RpcError) as refused:
            service.matches.CreateMatch(match_pb2.CreateMatchRequest(
                bot_ids=[other_id, me_id], ladder=True), metadata=auth(OPERATOR), timeout=10)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "mybot takes no new matches now" in refused.value.details()
        # a ladder match decided before the service heard it (made here past that check)
        late = plain.create_match([other_id, me_id], ladder=True, sessions=service.sessions,
                                  config=service.config)
        output = bot.communicate(timeout=180)[0]
    finally:
        bot.kill()
        opponent.stop()
        opponent_thread.join(10)
    assert bot.returncode == 0, output
    assert "--matches 2 reached: taking no new matches; finishing 2 running match(es)" \
        in output, output
    assert f"match {late.id} arrived after --matches 2 was reached" in output, output
    assert "3 match(es) played (--matches 2): exiting" in output, output
    assert "turns " in output and "won " in output and "Traceback" not in output
    for match_id in [*challenges, late.id]:
        final = plain.get_match(match_id, sessions=service.sessions)
        assert (final.state, final.end_reason) == ("finished", "played"), (match_id, output)
    # every line of the kit says which bot speaks
    lines = [line for line in output.splitlines() if re.match(r"\d\d:\d\d:\d\d ", line)]
    assert lines and all("[mybot]" in line or "[Slow]" in line for line in lines), output


def test_matches_n_counts_the_matches_running_when_it_connects(service):
    me_id, me_token = service.register("me")
    other_id, other_token = service.register("other")
    for seed in (1, 2, 3):
        plain.create_match([me_id, other_id], seed=seed, sessions=service.sessions,
                           config=service.config)
    opponent = Runner(RandomBot(5), service.server.address, other_token)
    me = Runner(RandomBot(6), service.server.address, me_token, max_matches=2)
    threads = [background(opponent), background(me)]
    threads[1].join(120)
    opponent.stop()
    threads[0].join(10)
    assert not threads[1].is_alive(), "the kit did not finish"
    # three were running: all three are played out, none abandoned
    assert me.stats.matches_won + me.stats.matches_lost == 3
    assert all(m.end_reason == "played"
               for m in plain.list_matches(sessions=service.sessions)[0])


def test_with_nothing_to_play_the_kit_says_how_to_get_a_match(service, tmp_path):
    _, token = service.register("lonely")
    bot = kit(tmp_path, service.server.address, token, "--matches", "1", "--challenges-only")
    try:
        time.sleep(3)  # connected, waiting
        assert bot.poll() is None
        bot.send_signal(2)  # Ctrl-C: nothing running, so it leaves at once
        output = bot.communicate(timeout=30)[0]
    finally:
        bot.kill()
    assert "connected for challenges only, so a challenge starts one" in output, output
    assert "bummerl bot challenge --vs OPPONENT" in output
    assert "stopping: taking no new matches; finishing 0 running match(es)" in output, output
    assert bot.returncode == 0


def test_challenges_only_on_a_service_that_ignores_it_is_left_at_once(service, monkeypatch):
    async def older(self, hello):  # type: ignore[no-untyped-def]
        self.greeted.set()  # an older service: the Hello's field is not read

    monkeypatch.setattr(PlaySession, "hello", older)
    _, token = service.register("careful")
    runner = Runner(RandomBot(1), service.server.address, token, challenges_only=True)
    with pytest.raises(Unsupported, match="does not know --challenges-only"):
        runner.run()
    assert runner.stats.turns == 0


def test_a_draining_kit_drains_again_after_a_restart_of_the_service(service):
    """The service restarts while the kit finishes its last match: it reconnects, says Drain
    again (no pairing can reach it on the new stream either) and finishes the match."""
    import dataclasses

    from client import Backoff
    from db.models import ACCEPTS_NONE, Bot
    from services.api.server import create_server
    from services.core import cache as game_states

    me_id, me_token = service.register("me")
    other_id, other_token = service.register("other")
    config = dataclasses.replace(service.config, move_ms=60_000)  # no forfeit while it is down
    m = plain.create_match([me_id, other_id], seed=9, sessions=service.sessions, config=config)
    address = service.server.address
    quick = Backoff(initial_s=0.1, max_s=0.5)
    me = Runner(SlowRandom(1), address, me_token, max_matches=1, backoff=quick)
    other = Runner(SlowRandom(2), address, other_token, backoff=quick)
    threads = [background(me), background(other)]
    try:
        wait_for(lambda: me.draining and plain.get_match(m.id, sessions=service.sessions).seq
                 >= 4, "the kit did not drain")
        service.server.stop(grace=0)
        game_states._cache.clear()
        time.sleep(1)
        service.server = create_server(address, sessions=service.sessions,
                                       config=config).start()

        def accepts() -> str | None:
            with service.sessions() as s:
                bot = s.get(Bot, me_id)
                assert bot is not None
                return bot.accepts

        wait_for(lambda: me.stats.connections >= 2 and accepts() == ACCEPTS_NONE,
                 "the kit did not drain its new stream")
        threads[0].join(60)
        assert not threads[0].is_alive(), "the kit did not finish"
    finally:
        me.stop()
        other.stop()
    final = plain.get_match(m.id, sessions=service.sessions)
    assert (final.state, final.end_reason) == ("finished", "played")


class SlowRandom(RandomBot):
    def act(self, observation):  # type: ignore[no-untyped-def]
        time.sleep(0.05)
        return super().act(observation)
