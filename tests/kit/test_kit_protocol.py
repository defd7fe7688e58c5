"""The kit and the service say, in one line, when they speak protocol versions the other does
not know (bummerl.protocol, Hello.protocol, Welcome.protocol_min/max): the installed kit, older
than the service's oldest, is refused with the one line naming both and the upgrade command and
exits non-zero; newer than the service's newest, it warns in one line and plays; an old kit that
sends no protocol is served as before the field."""

from __future__ import annotations

import dataclasses
import queue
import re
import subprocess
import threading

import grpc
import pytest
from bummerl import protocol
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2
from kitkit import Kit, installed_kit
from servicekit import CONFIG, OPERATOR, auth, fresh_database, running_service

from client import Runner
from db.models import Bot
from examples.random_bot import RandomBot

pytestmark = pytest.mark.timeout(900)  # the first test builds and installs the kit
WHEEL_URL = "http://site.test/kit/bummerl_kit-0.1.0-py3-none-any.whl"
# The installed kit's command, speaking protocol argv[1] (a kit of another version).
KIT = ("import sys\n"
       "from bummerl_kit.bummerl import protocol\n"
       "protocol.PROTOCOL = int(sys.argv[1])\n"
       "from bummerl_kit.__main__ import main\n"
       "sys.exit(main(sys.argv[2:]))\n")
BOT = "from bummerl_kit import Bot\n\nclass MyBot(Bot):\n    def act(self, observation):\n" \
      "        return observation.legal_actions[0]\n"


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


def run_kit(kit: Kit, speaks: int, address: str, token: str, folder, *flags: str
            ) -> subprocess.CompletedProcess[str]:
    (folder / "mybot.py").write_text(BOT)
    return kit.run(KIT, str(speaks), "mybot.py:MyBot", "--server", address, "--token", token,
                   *flags, cwd=folder)


def test_a_kit_older_than_the_service_is_refused_in_one_line(kit, request, tmp_path,
                                                             monkeypatch):
    monkeypatch.setattr(protocol, "OLDEST", 2)  # the service: protocols 2-3
    monkeypatch.setattr(protocol, "PROTOCOL", 3)
    config = dataclasses.replace(CONFIG, kit_url=WHEEL_URL)
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database, config) as service:
        bot_id, token = service.register("oldbot")
        done = run_kit(kit, 1, service.server.address, token, tmp_path)
        with service.sessions() as s:
            row = s.get(Bot, bot_id)
            assert row is not None  # never recorded as connected, not even for a moment
            assert (row.connected_since, row.last_seen_at, row.accepts) == (None, None, None)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: the service speaks protocol 2-3, this kit 1: upgrade with pip install "
        f"{WHEEL_URL}"], done.stderr
    assert "connected" not in done.stdout + done.stderr


def test_a_kit_newer_than_the_service_warns_in_one_line_and_plays(kit, request, tmp_path):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        me_id, me_token = service.register("newbot")
        other_id, other_token = service.register("randy")
        created = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=[me_id, other_id], seed=45), metadata=auth(OPERATOR), timeout=10)
        randy = Runner(RandomBot(45), service.server.address, other_token, max_matches=1)
        thread = threading.Thread(target=randy.run, daemon=True)
        thread.start()
        try:
            done = run_kit(kit, protocol.PROTOCOL + 1, service.server.address, me_token,
                           tmp_path, "--matches", "1")
        finally:
            thread.join(60)
            randy.stop()
        final = service.matches.GetMatch(match_pb2.GetMatchRequest(
            match_id=created.match.match_id), timeout=10).match
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    ours, theirs = protocol.PROTOCOL + 1, protocol.PROTOCOL
    warned = [line for line in done.stderr.splitlines() if "speaks protocol" in line]
    assert len(warned) == 1, output
    assert warned[0].endswith(
        f"the service at {service.server.address} speaks protocol {theirs}, this kit {ours}: "
        "it may not know what this kit adds; playing on (the kit that matches the site: its "
        "dashboard's /kit)"), warned
    assert final.state == match_pb2.MATCH_STATE_FINISHED
    assert re.search(r"^\[newbot\] turns \d+, won \d, lost \d, refused 0$", done.stdout, re.M)


def test_an_old_kit_that_sends_no_protocol_is_served_as_before(request, tmp_path):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        me_id, me_token = service.register("oldkit")
        other_id, other_token = service.register("randy")
        service.matches.CreateMatch(match_pb2.CreateMatchRequest(
            bot_ids=[me_id, other_id], seed=7), metadata=auth(OPERATOR), timeout=10)
        randy = Runner(RandomBot(7), service.server.address, other_token)
        thread = threading.Thread(target=randy.run, daemon=True)
        thread.start()
        outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        outbox.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="bummerl-python-client/0.2")))

        def requests():  # type: ignore[no-untyped-def]
            while (item := outbox.get()) is not None:
                yield item

        call = bot_pb2_grpc.BotServiceStub(service.channel).Play(
            requests(), metadata=auth(me_token), timeout=60)
        try:
            first = next(call)
            turn = next(r for r in call if r.WhichOneof("message") == "turn")
        finally:
            outbox.put(None)
            call.cancel()
            randy.stop()
            thread.join(10)
    assert first.WhichOneof("message") == "welcome", first
    assert first.welcome.bot.name == "oldkit"
    assert (first.welcome.protocol_min, first.welcome.protocol_max) == (
        protocol.OLDEST, protocol.PROTOCOL)
    assert turn.turn.observation.legal_actions
    with pytest.raises(grpc.RpcError):
        next(call)


def test_a_too_old_hello_after_the_welcome_ends_the_stream_with_the_notice(request, tmp_path,
                                                                         monkeypatch):
    """A Hello that comes after the service's wait for it (the Welcome went already)."""
    monkeypatch.setattr(protocol, "OLDEST", 2)
    monkeypatch.setattr(protocol, "PROTOCOL", 2)
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        _, token = service.register("slowkit")
        outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()

        def requests():  # type: ignore[no-untyped-def]
            while (item := outbox.get()) is not None:
                yield item

        call = bot_pb2_grpc.BotServiceStub(service.channel).Play(
            requests(), metadata=auth(token), timeout=60)
        try:
            first = next(call)  # no Hello within the wait: welcomed as a protocol-1 stream
            outbox.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="slow", protocol=1)))
            notice = next(call)
            with pytest.raises(grpc.RpcError) as ended:
                next(call)
        finally:
            outbox.put(None)
            call.cancel()
    assert first.WhichOneof("message") == "welcome"
    assert (first.welcome.protocol_min, first.welcome.protocol_max) == (2, 2)
    assert notice.notice.kind == bot_pb2.NOTICE_KIND_PROTOCOL_REFUSED
    assert notice.notice.field == "hello.protocol"
    message = ("the service speaks protocol 2, this kit 1: upgrade with pip install the wheel "
               "the site's dashboard offers at /kit")
    assert notice.notice.message == message
    assert ended.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert ended.value.details() == message


def test_a_refused_kit_does_not_replace_the_bots_playing_process(kit, request, tmp_path,
                                                                 monkeypatch):
    """Another program of the bot takes over its stream (Hello.instance), but not a refused
    one: the process that plays goes on."""
    monkeypatch.setattr(protocol, "OLDEST", 2)  # the service, and the kit in this process: 2
    monkeypatch.setattr(protocol, "PROTOCOL", 2)
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        _, token = service.register("twice")
        playing = Runner(RandomBot(3), service.server.address, token)
        thread = threading.Thread(target=playing.run, daemon=True)
        thread.start()
        try:
            for _ in range(100):
                if playing.stats.connections:
                    break
                threading.Event().wait(0.1)
            assert playing.stats.connections == 1
            done = run_kit(kit, 1, service.server.address, token, tmp_path)
            threading.Event().wait(1.0)  # a replacement's notice would have come by now
            assert done.returncode == 1, done.stdout + done.stderr
            assert playing.replaced is None and not playing.stopped
            assert thread.is_alive() and playing.stats.connections == 1
        finally:
            playing.stop()
            thread.join(10)
