"""A hosted version's life on the workers (workers.hosted), with podman and a real service on a
unix socket: an upload over gRPC is built and validated in one unrated match against a kit bot
on the host (BUMMERL_HOSTED_VALIDATION_OPPONENT), goes live, the supervisor starts its container
(a fresh token: the version is its bot's, with its version) and it plays a challenge to the end;
a service restart in the middle of a match costs it nothing; a person plays it a whole casual
game at the table; its container killed, it is started again after the backoff with the exit
recorded; exits in a row pause it with its last lines; resumed, it runs again; stopped, its
container goes. Two hosted versions of one bot play a version test to its end. Faults fail the
validation with the lines that say why: a syntax error (the build), an exception at its turn, a
process that exits at its first turn. And a round that finds another running does nothing
(the lock)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from bummerl import wire
from bummerl.v1 import (
    common_pb2,
    hosting_pb2,
    hosting_pb2_grpc,
    match_pb2,
    people_pb2,
    people_pb2_grpc,
    versiontest_pb2,
    versiontest_pb2_grpc,
)
from hostedkit import Site, challenge, played_out
from servicekit import CONFIG, auth
from sqlalchemy import select

from cli.main import main
from client import Runner
from db import hosted
from db.base import var_dir
from db.hosted import HostedVersion
from db.models import FINISHED, ORIGIN_TEST, PEOPLE_CASUAL, PLAYED, Bot, Match
from db.settings import sha256
from examples.random_bot import RandomBot
from hosting import podman
from hosting.archive import pack
from services.ops import hosting as hosting_ops
from workers import hosted as supervisor
from workers import versiontests
from workers.testing import wait_until

pytestmark = pytest.mark.podman
ROOT = Path(__file__).resolve().parents[2]
FLOWBOTS = Path(__file__).resolve().parent / "flowbots"
HOUSE_TOKEN = f"house-{uuid.uuid4().hex}"  # the workers' (a version test's matches)
WEB_TOKEN = f"web-{uuid.uuid4().hex}"  # the web's, for a person's game (PeopleService)
HOSTING = replace(CONFIG, hosting="podman", house_token_sha256=sha256(HOUSE_TOKEN),
                  web_token_sha256=sha256(WEB_TOKEN))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, base: str) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("hosted-flow")
    site = Site(folder, HOSTING)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BUMMERL_HOSTED_SOCKET", str(site.socket_dir / "service.sock"))
        env.setenv("BUMMERL_SERVICE_ADDRESS", site.server.address)
        env.setenv("BUMMERL_HOSTED_SITE", f"flow{os.getpid()}")
        env.setenv("BUMMERL_HOSTED_VALIDATION_OPPONENT", "sparring")
        env.setenv("BUMMERL_HOSTED_BACKOFF_S", "0.2")
        env.setenv("BUMMERL_VAR", str(folder / "var"))
        env.setenv("BUMMERL_HOUSE_TOKEN", HOUSE_TOKEN)
        _, token = site.register("sparring")
        sparring = Runner(RandomBot(), site.server.address, token)
        thread = threading.Thread(target=sparring.run, daemon=True)
        thread.start()
        site.sparring = token  # type: ignore[attr-defined]
        try:
            yield site
        finally:
            sparring.stop()
            thread.join(10)
            for container in podman.containers(f"bummerl.site={supervisor.site()}"):
                podman.stop(container.name, grace_s=0)
            with site.sessions() as s:
                for row in s.scalars(select(HostedVersion)):
                    if row.image and row.kind == hosted.FILES:
                        podman.remove_image(row.image)
            site.close()


def upload(site: Site, token: str, version: str, source: Path | str, entry: str,
           people: int = 0) -> int:
    stub = hosting_pb2_grpc.HostingServiceStub(site.channel)
    stub.UploadVersion(hosting_pb2.UploadVersionRequest(
        version=version, entry=entry, archive=pack(source, entry), people=people),
        metadata=auth(token), timeout=30)
    with site.sessions() as s:
        return s.scalar(select(HostedVersion.id).order_by(HostedVersion.id.desc()).limit(1))


def row_of(site: Site, version_id: int) -> HostedVersion:
    with site.sessions() as s:
        row = s.get(HostedVersion, version_id)
        assert row is not None
        s.expunge(row)
        return row


def running(name: str) -> podman.Container | None:
    found = [c for c in podman.containers(f"bummerl.site={supervisor.site()}") if c.name == name]
    return found[0] if found and not supervisor.exited(found[0]) else None


def play_a_casual_game(site: Site, opponent: str) -> None:
    """A guest plays a whole casual game against `opponent` through PeopleService (the web's
    part of /play), the first legal action each turn (a good claim when there is one)."""
    stub = people_pb2_grpc.PeopleServiceStub(site.channel)
    web = auth(WEB_TOKEN)
    guest = stub.StartGuest(people_pb2.StartGuestRequest(name="gus"), metadata=web).person
    listed = stub.ListOpponents(people_pb2.ListOpponentsRequest(), metadata=web).opponents
    assert opponent in [o.name for o in listed]
    started = stub.StartGame(people_pb2.StartGameRequest(
        person_id=guest.person_id, opponent=opponent, rated=False), metadata=web)
    match_id, seat = started.match.match_id, started.seat
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        table = stub.GetTable(people_pb2.GetTableRequest(
            person_id=guest.person_id, match_id=match_id), metadata=web).table
        if table.match.state != match_pb2.MATCH_STATE_RUNNING:
            break
        if table.on_clock != seat:
            time.sleep(0.05)
            continue
        legal = [str(wire.action_from_pb(a)) for a in table.observation.legal_actions]
        action = "claim" if table.claim_good else next(a for a in legal if a != "claim")
        stub.Act(people_pb2.ActRequest(
            person_id=guest.person_id, match_id=match_id, expected_seq=table.seq,
            action=action, request_id=f"t{table.seq}"), metadata=web)
    assert table.match.state == match_pb2.MATCH_STATE_FINISHED, table.match
    assert table.match.end_reason == match_pb2.END_REASON_PLAYED, table.match.end_detail


def test_a_version_goes_live_plays_restarts_pauses_resumes_and_stops(site: Site):
    bot_id, token = site.register("hostedbot")
    version_id = upload(site, token, "1.0", ROOT / "examples" / "random_bot.py",
                        "random_bot.py:RandomBot", people=common_pb2.ACCEPTS_PEOPLE_CASUAL)
    assert supervisor.build(version_id, sessions=site.sessions) == hosted.LIVE
    row = row_of(site, version_id)
    assert row.state == hosted.LIVE and row.build_log and row.token_hash is None
    with site.sessions() as s:
        match = s.get(Match, row.validation_match_id)
        assert match.state == FINISHED and match.end_reason == PLAYED and not match.rated
        assert {match.bot0_id, match.bot1_id} == {bot_id, s.scalar(
            select(Bot.id).where(Bot.name == "sparring"))}
    assert supervisor.build(version_id, sessions=site.sessions) is None  # done: nothing again

    # the supervisor starts it; it connects as its bot, with its version
    name = supervisor.container_name(version_id)
    assert supervisor.reconcile_once(sessions=site.sessions) == [f"started {name}"]
    assert supervisor.reconcile_once(sessions=site.sessions) == []  # running: left alone

    def connected() -> bool:
        with site.sessions() as s:
            bot = s.get(Bot, bot_id)
            return bot.connected_since is not None and bot.version == "1.0"
    wait_until(connected, 60, what="the hosted bot connected")

    with site.sessions() as s:  # and it takes people's casual games (/play lists it)
        assert s.get(Bot, bot_id).accepts_people == PEOPLE_CASUAL

    # it plays: the sparring bot challenges it, the match is played out
    played_out(site, challenge(site, site.sparring, "hostedbot"),  # type: ignore[attr-defined]
               "the challenge played out")

    # the service restarts mid-match: it costs the hosted bot nothing (it finds the new socket
    # in its mounted folder, the match goes on to its end)
    match_id = challenge(site, site.sparring, "hostedbot")  # type: ignore[attr-defined]

    def begun() -> bool:
        with site.sessions() as s:
            return s.get(Match, match_id).seq >= 4
    wait_until(begun, 60, every=0.01, what="the match under way")
    site.restart(same_port=True)
    played_out(site, match_id, "the match played out after the restart")

    # a person plays it at the table (what /play sends: PeopleService with the web's token)
    play_a_casual_game(site, "hostedbot")

    # killed: started again after the backoff, the exit recorded
    podman.podman("kill", name)
    wait_until(lambda: running(name) is None, 30, what="the container exited")
    time.sleep(0.3)  # the backoff (BUMMERL_HOSTED_BACKOFF_S)
    assert supervisor.reconcile_once(sessions=site.sessions) == [f"started {name} (restart 1)"]
    row = row_of(site, version_id)
    assert row.restarts == 1 and row.last_error.startswith("exit code 137")
    assert row.state == hosted.LIVE

    # exits in a row pause it, with its last lines
    with site.sessions() as s:
        s.get(HostedVersion, version_id).restarts = supervisor.CRASHES - 1
        s.commit()
    wait_until(lambda: running(name) is not None, 30, what="the restarted container")
    podman.podman("kill", name)
    wait_until(lambda: running(name) is None, 30, what="the container exited")
    time.sleep(supervisor.backoff_s(supervisor.CRASHES - 1) + 0.2)
    assert supervisor.reconcile_once(sessions=site.sessions) == [
        f"paused {name} after {supervisor.CRASHES} exits"]
    row = row_of(site, version_id)
    assert row.state == hosted.PAUSED and "exited 5 times" in row.reason
    assert not [c for c in podman.containers(f"bummerl.site={supervisor.site()}")
                if c.name == name]

    # resumed (its author), it runs again; stopped, its container goes
    hosting_ops.resume(token, "1.0", config=HOSTING, sessions=site.sessions)
    assert supervisor.reconcile_once(sessions=site.sessions) == [f"started {name}"]
    hosting_ops.stop(token, "1.0", config=HOSTING, sessions=site.sessions)
    assert supervisor.reconcile_once(sessions=site.sessions) == [f"removed {name}"]
    assert row_of(site, version_id).state == hosted.STOPPED


@pytest.mark.parametrize("bot, entry, words", [
    ("raising.py", "raising.py:Raising", ["raised an exception", "KeyError"]),
    ("exiting.py", "exiting.py:Exiting", ["exited (code 3)", "exiting at my first turn"]),
])
def test_a_fault_at_its_turn_fails_the_validation_with_its_lines(site: Site, bot, entry, words,
                                                                monkeypatch, capsys):
    _, token = site.register(f"faulty-{uuid.uuid4().hex[:6]}")
    version_id = upload(site, token, "1.0", FLOWBOTS / bot, entry)
    assert supervisor.build(version_id, sessions=site.sessions) == hosted.FAILED
    row = row_of(site, version_id)
    assert all(word in row.reason for word in words), row.reason
    assert row.token_hash is None and row.validation_match_id
    assert supervisor.reconcile_once(sessions=site.sessions) == []  # nothing runs it
    # its image is pruned (`bummerl admin prune-hosted`, on the site's database); a live or
    # stopped version's stays
    assert podman.image_exists(row.image)
    monkeypatch.setenv("DATABASE_URL", site.database.url)
    assert main(["admin", "prune-hosted"]) == 0
    assert f"removed {row.image}\n" in capsys.readouterr().out
    assert not podman.image_exists(row.image)
    with site.sessions() as s:
        kept = s.scalars(select(HostedVersion.image).where(
            HostedVersion.state != hosted.FAILED, HostedVersion.kind == hosted.FILES)).all()
    assert all(podman.image_exists(image) for image in kept if image)


def test_a_syntax_error_fails_the_build_with_its_line(site: Site, tmp_path: Path):
    (tmp_path / "mybot.py").write_text("from bummerl_kit import Bot\n\nclass MyBot(Bot\n")
    _, token = site.register(f"broken-{uuid.uuid4().hex[:6]}")
    version_id = upload(site, token, "0.1", tmp_path / "mybot.py", "mybot.py:MyBot")
    assert supervisor.build(version_id, sessions=site.sessions) == hosted.FAILED
    row = row_of(site, version_id)
    assert row.reason.startswith("the build failed:") and "mybot.py" in row.reason
    assert "line 3" in row.reason and row.validation_match_id is None


def test_a_version_test_between_two_hosted_versions_is_played_to_its_end(site: Site):
    bot_id, token = site.register("twoversions")
    ids = [upload(site, token, version, ROOT / "examples" / "random_bot.py",
                  "random_bot.py:RandomBot") for version in ("1.9", "2.0")]
    states = [supervisor.build(i, sessions=site.sessions) for i in ids]
    assert states == [hosted.LIVE] * 2, [row_of(site, i).reason for i in ids]
    supervisor.reconcile_once(sessions=site.sessions)
    stub = versiontest_pb2_grpc.VersionTestServiceStub(site.channel)
    test = stub.StartTest(versiontest_pb2.StartTestRequest(
        candidate="twoversions@2.0", baseline="twoversions@1.9", games=2),
        metadata=auth(token), timeout=30).test

    def over() -> bool:  # the workers' step (beat's bummerl.versiontests_tick), by hand
        versiontests.tick(sessions=site.sessions, config=HOSTING)
        state = stub.GetTest(versiontest_pb2.GetTestRequest(test_id=test.test_id),
                             metadata=auth(token), timeout=30).test.state
        return state == versiontest_pb2.TEST_STATE_CAPPED
    wait_until(over, 180, every=1.0, what="the version test played its 2 games")
    with site.sessions() as s:
        played = s.scalars(select(Match).where(Match.origin == ORIGIN_TEST)).all()
    assert len(played) == 2 and all(m.end_reason == PLAYED for m in played)
    assert all({m.version0, m.version1} == {"1.9", "2.0"} for m in played)
    for version_id in ids:
        hosting_ops.stop(token, row_of(site, version_id).version, config=HOSTING,
                         sessions=site.sessions)
    supervisor.reconcile_once(sessions=site.sessions)


def test_a_round_that_finds_another_running_does_nothing(site: Site):
    var_dir().mkdir(parents=True, exist_ok=True)
    with open(var_dir() / supervisor.LOCK_FILE, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert supervisor.reconcile_once(sessions=site.sessions) == []
