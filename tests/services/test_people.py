"""PeopleService (issue 30) on a real service, SQLite and PostgreSQL: people sign up, log in or
play as guests; a person plays a whole Bummerl against house-random through GetTable/Act only;
illegal actions are refused with the rule and change nothing; nobody reads or acts at another
person's seat; the table holds exactly what the seat's observation holds; rated games alternate
seats; the deal's commitment is sha256(seed) and the seed is shown only after the end."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from contextlib import redirect_stdout
from pathlib import Path

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import bot_pb2, common_pb2, match_pb2, people_pb2
from peoplekit import HOUSE_TOKEN, WEB, code_of, house_bot, people_service
from servicekit import OPERATOR, auth
from sqlalchemy import select

import engine
from cli.main import main as bummerl
from db.models import ActionLog, Hand, Match
from db.people import PeopleRating
from db.ratings import LadderMatch, Rating
from services.core.errors import InvalidArgument
from services.ops import tournaments, versiontests
from workers import ladder, moves
from workers.people import rate_people_match

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def people(database, monkeypatch):
    with people_service(database, monkeypatch) as p:
        yield p


def start(people, person_id: int, opponent: str = "house-random", rated: bool = False,
          profile=common_pb2.PROFILE_SOFT) -> people_pb2.StartGameResponse:  # type: ignore[no-untyped-def]
    return people.stub.StartGame(people_pb2.StartGameRequest(
        person_id=person_id, opponent=opponent, rated=rated, profile=profile), metadata=WEB)


def engine_observation(sessions, match_id: int, seat: int) -> engine.Observation:  # type: ignore[no-untyped-def]
    """The seat's observation rebuilt with the engine alone from the row's seed and log."""
    with sessions() as s:
        m = s.get(Match, match_id)
        first = s.scalar(select(Hand).where(Hand.match_id == match_id, Hand.number == 0))
        log = list(s.scalars(select(ActionLog).where(ActionLog.match_id == match_id)
                             .order_by(ActionLog.seq)))
    game = engine.Match.replay(m.seed, m.profile,
                               [(a.seat, engine.Action.from_text(a.action)) for a in log],
                               first_dealer=first.dealer)
    return game.observe(seat)


def test_register_login_and_guest(people):
    alice = people.register("alice")
    assert alice.display_name == "@alice" and not alice.guest and alice.bot_id
    logged = people.stub.Login(people_pb2.LoginRequest(name="ALICE", password="correct horse"),
                               metadata=WEB).person
    assert logged.person_id == alice.person_id
    wrong = people_pb2.LoginRequest(name="alice", password="wrong password")
    unknown = people_pb2.LoginRequest(name="nobody", password="correct horse")
    for request in (wrong, unknown):
        with pytest.raises(grpc.RpcError) as caught:
            people.stub.Login(request, metadata=WEB)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert caught.value.details() == "wrong name or password"
    assert code_of(lambda: people.register("Alice")) == grpc.StatusCode.ALREADY_EXISTS
    assert code_of(lambda: people.register("a b")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: people.register("bob", "short")) == grpc.StatusCode.INVALID_ARGUMENT
    guest = people.guest("alice")  # guests may share a name: their seat holders differ
    assert guest.guest and guest.display_name.startswith("@alice~guest-")
    # the web's token only
    request = people_pb2.StartGuestRequest(name="carol")
    assert code_of(lambda: people.stub.StartGuest(request)) == grpc.StatusCode.UNAUTHENTICATED
    assert code_of(lambda: people.stub.StartGuest(request, metadata=auth(OPERATOR))) == \
        grpc.StatusCode.PERMISSION_DENIED
    # a guest plays casual only
    house_bot(people.service.sessions)
    assert code_of(lambda: start(people, guest.person_id, rated=True)) == \
        grpc.StatusCode.FAILED_PRECONDITION


def test_a_person_plays_a_whole_match_against_house_random(people):
    house_bot(people.service.sessions)
    guest = people.guest("gus")
    opponents = people.stub.ListOpponents(people_pb2.ListOpponentsRequest(),
                                          metadata=WEB).opponents
    assert [o.name for o in opponents] == ["house-random"]
    started = start(people, guest.person_id)
    match_id, seat = started.match.match_id, started.seat
    rng = random.Random(7)
    acts = 0
    table = people.my_turn(guest.person_id, match_id)
    while table.match.state == match_pb2.MATCH_STATE_RUNNING:
        assert table.on_clock == seat, "the house bot did not answer"
        # the table is exactly the seat's observation (nothing more), built by the engine
        expected = engine_observation(people.service.sessions, match_id, seat)
        assert table.observation == wire.observation_to_pb(expected)
        assert table.commitment == started.commitment and table.seed == 0
        legal = [str(a) for a in expected.legal_actions]
        claim = "claim" in legal and expected.points >= 66
        assert table.claim_good == claim
        if table.observation.tricks:
            assert table.last_trick == table.observation.tricks[-1]
        action = "claim" if claim else rng.choice([a for a in legal if a != "claim"] or legal)
        reply = people.act(guest.person_id, table, action)
        assert reply.seq == table.seq and not reply.duplicate
        acts += 1
        table = people.my_turn(guest.person_id, match_id)
    assert table.match.state == match_pb2.MATCH_STATE_FINISHED
    assert table.match.end_reason == match_pb2.END_REASON_PLAYED, table.match.end_detail
    assert min(table.game_points_needed) <= 0 and acts > 5 and table.hands
    assert table.seed_revealed and table.seed != 0
    assert hashlib.sha256(str(table.seed).encode()).hexdigest() == started.commitment
    with people.service.sessions() as s:
        m = s.get(Match, match_id)
        assert (m.origin, m.rated, m.seed) == ("people", False, table.seed)
        assert m.bot(seat).name == guest.display_name


def test_an_illegal_action_is_refused_with_the_rule_and_changes_nothing(people):
    house_bot(people.service.sessions)
    alice = people.register("alice")
    started = start(people, alice.person_id)
    table = people.my_turn(alice.person_id, started.match.match_id)
    obs = table.observation
    # a card the seat does not hold
    foreign = next(str(c) for c in engine.ALL_CARDS if str(c) not in obs.hand)
    with pytest.raises(grpc.RpcError) as caught:
        people.act(alice.person_id, table, f"play {foreign}")
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    rule = dict(caught.value.trailing_metadata()).get("bummerl-rule")
    assert rule and rule.startswith("R"), caught.value.details()
    assert caught.value.details().startswith(rule)  # the message names the rule first
    after = people.table(alice.person_id, started.match.match_id)
    assert after.seq == table.seq and after.observation == table.observation
    # a stale seq is ABORTED, nonsense INVALID_ARGUMENT
    legal = str(wire.action_from_pb(obs.legal_actions[0]))
    stale = people_pb2.ActRequest(person_id=alice.person_id, match_id=started.match.match_id,
                                  expected_seq=table.seq + 5, action=legal, request_id="x")
    assert code_of(lambda: people.stub.Act(stale, metadata=WEB)) == grpc.StatusCode.ABORTED
    assert code_of(lambda: people.act(alice.person_id, table, "dance")) == \
        grpc.StatusCode.INVALID_ARGUMENT
    assert people.table(alice.person_id, started.match.match_id).seq == table.seq


def test_a_second_person_can_neither_read_nor_act_at_the_first_ones_table(people):
    house_bot(people.service.sessions)
    alice, mallory = people.register("alice"), people.guest("mallory")
    started = start(people, alice.person_id)
    table = people.my_turn(alice.person_id, started.match.match_id)
    assert code_of(lambda: people.table(mallory.person_id, started.match.match_id)) == \
        grpc.StatusCode.PERMISSION_DENIED
    legal = str(wire.action_from_pb(table.observation.legal_actions[0]))
    assert code_of(lambda: people.act(mallory.person_id, table, legal)) == \
        grpc.StatusCode.PERMISSION_DENIED
    assert code_of(lambda: people.stub.Resign(people_pb2.ResignRequest(
        person_id=mallory.person_id, match_id=started.match.match_id), metadata=WEB)) == \
        grpc.StatusCode.PERMISSION_DENIED
    assert people.table(alice.person_id, started.match.match_id).seq == table.seq


def test_a_table_of_an_unknown_person_or_match_is_not_found_naming_it(people):
    house_bot(people.service.sessions)
    alice = people.guest("alice")
    started = start(people, alice.person_id)
    for person_id, match_id, named in ((alice.person_id, 9999, "no match with id 9999"),
                                       (8888, started.match.match_id, "no person with id 8888"),
                                       (8888, 9999, "no person with id 8888")):
        with pytest.raises(grpc.RpcError) as refused:
            people.table(person_id, match_id)
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        assert named in refused.value.details()
    table = people.table(alice.person_id, started.match.match_id)
    assert table.names[1 - table.seat] == "house-random"
    assert table.names[table.seat].startswith("@alice~guest")
    assert table.opponent_connected and not table.rated and table.can_resign


def test_rated_games_alternate_seats_with_fresh_seeds(people):
    house_bot(people.service.sessions)
    alice = people.register("alice")
    seats, commitments = [], set()
    for _ in range(4):
        started = people.stub.StartGame(people_pb2.StartGameRequest(
            person_id=alice.person_id, opponent="house-random", rated=True,
            time_control=match_pb2.TimeControl(max_illegal=1)), metadata=WEB)
        seats.append(started.seat)
        commitments.add(started.commitment)
        assert started.match.seed == 0  # secret while running
        resign = people_pb2.ResignRequest(person_id=alice.person_id,
                                          match_id=started.match.match_id)
        with pytest.raises(grpc.RpcError) as refused:  # rated: no resigning
            people.stub.Resign(resign, metadata=WEB)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        # end it: one illegal action forfeits (max_illegal 1)
        table = people.my_turn(alice.person_id, started.match.match_id)
        foreign = next(str(c) for c in engine.ALL_CARDS if str(c) not in table.observation.hand)
        with pytest.raises(grpc.RpcError) as illegal:
            people.act(alice.person_id, table, f"play {foreign}")
        assert illegal.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        over = people.table(alice.person_id, started.match.match_id)
        assert over.match.end_reason == match_pb2.END_REASON_FORFEIT_ILLEGAL
        assert hashlib.sha256(str(over.seed).encode()).hexdigest() == started.commitment
    assert seats == [0, 1, 0, 1] and len(commitments) == 4


def test_a_casual_game_can_be_resigned_and_shows_its_seed(people):
    house_bot(people.service.sessions)
    gus = people.guest("gus")
    started = start(people, gus.person_id)
    resigned = people.stub.Resign(people_pb2.ResignRequest(
        person_id=gus.person_id, match_id=started.match.match_id), metadata=WEB).table
    assert resigned.match.state == match_pb2.MATCH_STATE_FINISHED
    assert resigned.match.end_reason == match_pb2.END_REASON_RESIGNED
    assert resigned.match.winner == 1 - started.seat and resigned.on_clock == -1
    assert hashlib.sha256(str(resigned.seed).encode()).hexdigest() == started.commitment


def test_a_suspended_person_is_refused(people, capsys):
    house_bot(people.service.sessions)
    alice = people.register("alice")
    started = start(people, alice.person_id)
    table = people.my_turn(alice.person_id, started.match.match_id)
    common = ["--server", people.service.server.address, "--operator-token", OPERATOR]
    assert bummerl(["admin", "suspend", "@alice", "abusive names", *common]) == 0
    assert f"suspended person {alice.bot_id} (@alice)" in capsys.readouterr().out  # issue 44
    assert bummerl(["admin", "bots", "--suspended", *common]) == 0
    assert "person" in capsys.readouterr().out
    assert people.stub.GetPerson(people_pb2.GetPersonRequest(person_id=alice.person_id),
                                 metadata=WEB).person.suspended
    assert code_of(lambda: start(people, alice.person_id)) == grpc.StatusCode.FAILED_PRECONDITION
    legal = str(wire.action_from_pb(table.observation.legal_actions[0]))
    with pytest.raises(grpc.RpcError) as caught:
        people.act(alice.person_id, table, legal)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "abusive names" in caught.value.details()
    assert bummerl(["admin", "reinstate", "@alice", *common]) == 0
    assert people.act(alice.person_id, table, legal).seq == table.seq


def test_an_invite_seats_the_first_person_who_accepts_it(people):
    host, friend, late = people.register("host"), people.guest("friend"), people.guest("late")
    code = people.stub.CreateInvite(people_pb2.CreateInviteRequest(person_id=host.person_id),
                                    metadata=WEB).code
    own = people_pb2.AcceptInviteRequest(person_id=host.person_id, code=code)
    assert code_of(lambda: people.stub.AcceptInvite(own, metadata=WEB)) == \
        grpc.StatusCode.FAILED_PRECONDITION
    accepted = people.stub.AcceptInvite(people_pb2.AcceptInviteRequest(
        person_id=friend.person_id, code=code), metadata=WEB)
    second = people_pb2.AcceptInviteRequest(person_id=late.person_id, code=code)
    assert code_of(lambda: people.stub.AcceptInvite(second, metadata=WEB)) == \
        grpc.StatusCode.FAILED_PRECONDITION
    match_id = accepted.match.match_id
    names = set(accepted.match.bot_names)
    assert names == {host.display_name, friend.display_name}
    host_table = people.table(host.person_id, match_id)
    friend_table = people.table(friend.person_id, match_id)
    assert {host_table.seat, friend_table.seat} == {0, 1}
    assert friend_table.seat == accepted.seat
    assert not set(host_table.observation.hand) & set(friend_table.observation.hand)
    assert code_of(lambda: people.table(late.person_id, match_id)) == \
        grpc.StatusCode.PERMISSION_DENIED
    # whoever is to act plays; the other is refused (R3.1: not their turn)
    to_act = host_table if host_table.on_clock == host_table.seat else friend_table
    waiting = friend_table if to_act is host_table else host_table
    ids = {host_table.seat: host.person_id, friend_table.seat: friend.person_id}
    legal = str(wire.action_from_pb(to_act.observation.legal_actions[0]))
    with pytest.raises(grpc.RpcError) as caught:
        people.act(ids[waiting.seat], waiting, legal)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert people.act(ids[to_act.seat], to_act, legal).seq == to_act.seq


def play_out(people, person_id: int, match_id: int, seed: int = 3) -> people_pb2.Table:  # type: ignore[no-untyped-def]
    """The person plays random legal actions (claims when good) to the end of the match."""
    rng = random.Random(seed)
    table = people.my_turn(person_id, match_id)
    while table.match.state == match_pb2.MATCH_STATE_RUNNING:
        assert table.on_clock == table.seat, "the opponent did not answer"
        legal = [str(wire.action_from_pb(a)) for a in table.observation.legal_actions]
        action = "claim" if table.claim_good else rng.choice(
            [a for a in legal if a != "claim"] or legal)
        people.act(person_id, table, action)
        table = people.my_turn(person_id, match_id)
    return table


def test_a_remote_kit_bot_that_accepts_people_is_offered_and_plays_a_person(people):
    """`bummerl bot run ... --people rated|casual`, as processes: offered to people (for what
    each accepts), and one plays a rated game with a person."""
    svc = people.service
    _, shy_token = svc.register("shy")
    _, kit_token = svc.register("kitbot")
    _, casual_token = svc.register("casualbot")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kits = [subprocess.Popen(
        [sys.executable, "-m", "cli.main", "bot", "run", "examples/random_bot.py:RandomBot",
         "--server", svc.server.address, "--token", token, "--matches", "1", *more],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for token, more in ((shy_token, []), (kit_token, ["--people", "rated"]),
                            (casual_token, ["--people", "casual"]))]
    try:
        deadline = time.monotonic() + 30
        names: list[str] = []
        while time.monotonic() < deadline:
            opponents = people.stub.ListOpponents(people_pb2.ListOpponentsRequest(),
                                                  metadata=WEB).opponents
            names = [o.name for o in opponents]
            if {"kitbot", "casualbot"} <= set(names):
                break
            time.sleep(0.1)
        assert names == ["casualbot", "kitbot"]  # the bot without --people is never offered
        assert [o.accepts for o in opponents] == [common_pb2.ACCEPTS_PEOPLE_CASUAL,
                                                  common_pb2.ACCEPTS_PEOPLE_RATED]
        alice = people.register("alice")
        assert code_of(lambda: start(people, alice.person_id, "shy")) == \
            grpc.StatusCode.FAILED_PRECONDITION
        assert code_of(lambda: start(people, alice.person_id, "casualbot", rated=True)) == \
            grpc.StatusCode.FAILED_PRECONDITION  # casual only
        started = start(people, alice.person_id, "kitbot", rated=True)
        table = people.table(alice.person_id, started.match.match_id)
        assert table.rated and table.opponent_connected
        over = play_out(people, alice.person_id, started.match.match_id)
        assert over.match.end_reason == match_pb2.END_REASON_PLAYED, over.match.end_detail
        output = kits[1].communicate(timeout=30)[0]  # --matches 1: it played alice, and ends
        assert kits[1].returncode == 0, output
        # gone: the table says so, and it is no longer offered, once the service has seen its
        # stream close (the process's exit reaches the server a moment later, longer under load)
        deadline = time.monotonic() + 10
        while True:
            after = people.table(alice.person_id, started.match.match_id)
            offered = [o.name for o in people.stub.ListOpponents(
                people_pb2.ListOpponentsRequest(), metadata=WEB).opponents]
            if not after.opponent_connected or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert not after.opponent_connected
        assert offered == ["casualbot"]
    finally:
        for kit in kits:
            kit.terminate()
            kit.communicate(timeout=30)


def test_a_house_bot_answering_a_person_takes_at_least_its_minimum_think_time(people,
                                                                              monkeypatch):
    monkeypatch.setenv("BUMMERL_HOUSE_MIN_THINK_MS", "400")
    house_bot(people.service.sessions)
    gus = people.guest("gus")
    started = start(people, gus.person_id)
    rng = random.Random(1)
    for _ in range(8):
        table = people.my_turn(gus.person_id, started.match.match_id)
        if table.match.state != match_pb2.MATCH_STATE_RUNNING:
            break
        legal = [str(wire.action_from_pb(a)) for a in table.observation.legal_actions]
        people.act(gus.person_id, table, rng.choice([a for a in legal if a != "claim"]))
    people.my_turn(gus.person_id, started.match.match_id)
    with people.service.sessions() as s:
        log = list(s.scalars(select(ActionLog).where(
            ActionLog.match_id == started.match.match_id).order_by(ActionLog.seq)))
    house_seat = 1 - started.seat
    # each house answer to a person's action: its think time (from the person's action)
    answers = [a.think_ms for before, a in zip(log, log[1:], strict=False)
               if a.seat == house_seat and before.seat != house_seat]
    assert len(answers) >= 3 and all(ms is not None and ms >= 400 for ms in answers), answers


def test_rated_games_move_the_peoples_pool_and_never_the_bots_ladder_rating(people):
    sessions = people.service.sessions
    bot_id = house_bot(sessions)
    with sessions.begin() as s:  # the bot's ladder rating, as the ladder left it
        s.add(Rating(bot_id=bot_id, profile="soft", mu=31.0, sigma=2.5, matches=40, wins=30))
    alice = people.register("alice")
    started = people.stub.StartGame(people_pb2.StartGameRequest(
        person_id=alice.person_id, opponent="house-random", rated=True,
        time_control=match_pb2.TimeControl(max_illegal=1)), metadata=WEB)
    table = people.my_turn(alice.person_id, started.match.match_id)
    foreign = next(str(c) for c in engine.ALL_CARDS if str(c) not in table.observation.hand)
    assert code_of(lambda: people.act(alice.person_id, table, f"play {foreign}")) == \
        grpc.StatusCode.FAILED_PRECONDITION  # she forfeits: the bot wins
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        person = people.stub.GetPerson(people_pb2.GetPersonRequest(person_id=alice.person_id),
                                       metadata=WEB).person
        if person.HasField("rating"):
            break
        time.sleep(0.05)
    assert person.rating.games == 1 and person.rating.mu < 25.0  # openskill starts at 25
    [house] = people.stub.ListOpponents(people_pb2.ListOpponentsRequest(),
                                        metadata=WEB).opponents
    assert house.rating.games == 1 and house.rating.mu > 25.0 and (house.won, house.lost) == (1, 0)
    with sessions() as s:
        ladder = s.scalar(select(Rating).where(Rating.bot_id == bot_id))
        assert (ladder.mu, ladder.sigma, ladder.matches) == (31.0, 2.5, 40)
        assert s.scalar(select(Rating).where(Rating.bot_id == alice.bot_id)) is None
    assert not rate_people_match(started.match.match_id, sessions)  # once
    # a casual game is never rated
    gus = people.guest("gus")
    casual = start(people, gus.person_id)
    people.stub.Resign(people_pb2.ResignRequest(person_id=gus.person_id,
                                                match_id=casual.match.match_id), metadata=WEB)
    assert not rate_people_match(casual.match.match_id, sessions)
    assert not people.stub.GetPerson(people_pb2.GetPersonRequest(person_id=gus.person_id),
                                     metadata=WEB).person.HasField("rating")


def test_person_seats_are_left_out_of_the_ladder_standings_tournaments_and_tests(people):
    sessions = people.service.sessions
    house_bot(sessions)
    house_bot(sessions, "house-bully", "bully")
    alice = people.register("alice")
    with sessions() as s:
        eligible = {b.name for b in ladder.eligible_bots(s, "soft")}
    assert eligible == {"house-random", "house-bully"}
    # a rated game with a person: no ladder row, so the ladder's standings never list a person
    started = start(people, alice.person_id, rated=True)
    with sessions() as s:
        assert s.get(LadderMatch, started.match.match_id) is None
    assert "@alice" not in {row.name for row in ladder.standings("soft", sessions)}
    with pytest.raises(InvalidArgument, match="people do not play tournaments"):
        tournaments.create_tournament(tournaments.NewTournament(
            format="round-robin", bot_names=["house-random", "@alice"]), sessions=sessions)
    for candidate, baseline in (("@alice", "house-random"), ("house-bully", "@alice")):
        with pytest.raises(InvalidArgument, match="people do not play version tests"):
            versiontests.start_test(OPERATOR, candidate, baseline, sessions=sessions,
                                    config=people.service.config)


def test_games_with_people_export_and_replay_and_their_seed_checks_the_commitment(
        people, tmp_path, capsys):
    house_bot(people.service.sessions)
    alice, gus = people.register("alice"), people.guest("gus")
    played = start(people, alice.person_id)
    over = play_out(people, alice.person_id, played.match.match_id)
    resigned = start(people, gus.person_id)
    people.stub.Resign(people_pb2.ResignRequest(person_id=gus.person_id,
                                                match_id=resigned.match.match_id), metadata=WEB)
    path = tmp_path / "games.jsonl"
    common = ["--server", people.service.server.address]
    with path.open("w") as out, redirect_stdout(out):  # bummerl games export --match ID
        for match_id in (played.match.match_id, resigned.match.match_id):
            assert bummerl(["games", "export", "--match", str(match_id), *common]) == 0
    records = {r["match_id"]: r for r in map(json.loads, path.read_text().splitlines())}
    assert set(records) == {played.match.match_id, resigned.match.match_id}
    for started in (played, resigned):
        record = records[started.match.match_id]
        assert record["origin"] == "people"
        # anyone can check the deal: the commitment shown before the game is sha256(seed)
        assert hashlib.sha256(str(record["seed"]).encode()).hexdigest() == started.commitment
        names = {b["name"] for b in record["bots"]}  # display names only: no private data
        assert names in ({"@alice", "house-random"}, {gus.display_name, "house-random"})
        assert "password" not in json.dumps(record) and "scrypt" not in json.dumps(record)
    assert records[resigned.match.match_id]["result"]["end_reason"] == "resigned"
    assert over.seed == records[played.match.match_id]["seed"]
    capsys.readouterr()
    assert bummerl(["replay", str(path)]) == 0
    checked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(checked) == 2 and all(c["verified"] for c in checked), checked


def test_a_bot_cannot_challenge_a_person(people):
    _, token = people.service.register("pushy")
    alice = people.register("alice")
    with pytest.raises(grpc.RpcError) as caught:
        people.service.bots.Challenge(bot_pb2.ChallengeRequest(opponent=alice.display_name),
                                      metadata=auth(token))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "is a person" in caught.value.details()


def test_oversized_fields_are_refused_naming_the_field(people):
    for call, request, field in (
            (people.stub.Login, people_pb2.LoginRequest(name="a" * 21, password="x"), "name"),
            (people.stub.RegisterPerson,
             people_pb2.RegisterPersonRequest(name="bob", password="p" * 201), "password")):
        with pytest.raises(grpc.RpcError) as caught:
            call(request, metadata=WEB)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in caught.value.details()
    with pytest.raises(grpc.RpcError) as caught:
        people.stub.Act(people_pb2.ActRequest(person_id=1, match_id=1, action="play " * 10),
                        metadata=WEB)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "action" in caught.value.details()


def test_house_bots_are_listed_strongest_first(people):
    sessions = people.service.sessions
    ids = {name: house_bot(sessions, name, strategy)
           for name, strategy in (("house-random", "random"), ("house-bully", "bully"),
                                  ("house-rdeep", "rdeep"))}
    with sessions.begin() as s:  # ladder ratings only: the order before any game with people
        s.add(Rating(bot_id=ids["house-rdeep"], profile="soft", mu=30.0, sigma=1.0))
        s.add(Rating(bot_id=ids["house-bully"], profile="soft", mu=26.0, sigma=1.0))
        s.add(Rating(bot_id=ids["house-random"], profile="soft", mu=20.0, sigma=1.0))
        s.add(Rating(bot_id=ids["house-random"], profile="sharp", mu=40.0, sigma=1.0))

    def names(profile=common_pb2.PROFILE_SOFT) -> list[str]:  # type: ignore[no-untyped-def]
        return [o.name for o in people.stub.ListOpponents(
            people_pb2.ListOpponentsRequest(profile=profile), metadata=WEB).opponents]

    assert names() == ["house-rdeep", "house-bully", "house-random"]
    assert names(common_pb2.PROFILE_SHARP)[0] == "house-random"
    # a rating against people (another scale of opponents, and few games) is not mixed in:
    # house-random, rated high by people it beat, stays below the stronger bots
    with sessions.begin() as s:
        s.add(PeopleRating(bot_id=ids["house-random"], mu=35.0, sigma=1.0, games=9, wins=9))
    assert names() == ["house-rdeep", "house-bully", "house-random"]
    # bots with no ladder rating yet come after those with one: the house levels by their
    # measured strength (events.levels), then by name
    for name in ("house-level-1", "house-level-5", "house-level-3", "house-aaa"):
        house_bot(sessions, name, name.removeprefix("house-"))
    assert names() == ["house-rdeep", "house-bully", "house-random", "house-level-5",
                       "house-level-3", "house-level-1", "house-aaa"]


def test_failed_log_ins_lock_no_name(people):
    """The service locks no name however many log-ins failed (anyone could lock anyone out
    then): the web throttles failures per name and address, and per address."""
    me = people.register("lockless")
    wrong = people_pb2.LoginRequest(name="lockless", password="wrong password")
    for _ in range(15):
        assert code_of(lambda: people.stub.Login(wrong, metadata=WEB)) == \
            grpc.StatusCode.UNAUTHENTICATED
    assert people.stub.Login(people_pb2.LoginRequest(name="LOCKLESS", password="correct horse"),
                             metadata=WEB).person.person_id == me.person_id


def test_a_log_in_hashes_once_whether_the_name_is_known_or_not(people, monkeypatch):
    """One password check (one scrypt) and no hash made, for a known name (right or wrong
    password) as for an unknown one: time does not tell names apart."""
    from services.ops import people as people_ops

    people.register("hashcount")
    calls = {"check": 0, "make": 0}
    real_check, real_make = people_ops.check_password_hash, people_ops.generate_password_hash

    def check(*args):  # type: ignore[no-untyped-def]
        calls["check"] += 1
        return real_check(*args)

    def make(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["make"] += 1
        return real_make(*args, **kwargs)

    monkeypatch.setattr(people_ops, "check_password_hash", check)
    monkeypatch.setattr(people_ops, "generate_password_hash", make)
    people_ops._dummy_hash()  # (made once per process, by its first log-in)
    for name, password in (("hashcount", "correct horse"), ("hashcount", "wrong password"),
                           ("nobody-here", "correct horse"), ("", "x")):
        calls.update(check=0, make=0)
        try:
            people.stub.Login(people_pb2.LoginRequest(name=name, password=password),
                              metadata=WEB)
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAUTHENTICATED
        assert calls == {"check": 1, "make": 0}, (name, password)


def test_known_and_unknown_names_take_the_same_time(people):
    """A wrong log-in takes the same time, within 20 %, for a known and an unknown name: the
    fastest of 7 interleaved attempts each (the least disturbed by the machine's other load; a
    second hash for unknown names doubles every attempt, the fastest too), measured again up
    to 3 times when the machine's load happens to make them differ."""
    people.register("timed")
    for _ in range(3):
        times: dict[str, list[float]] = {"timed": [], "untimed": []}
        for _ in range(7):
            for name in times:
                started = time.perf_counter()
                assert code_of(lambda name=name: people.stub.Login(people_pb2.LoginRequest(
                    name=name, password="wrong password"), metadata=WEB)) == \
                    grpc.StatusCode.UNAUTHENTICATED
                times[name].append(time.perf_counter() - started)
        known, unknown = (min(t) for t in times.values())
        if max(known, unknown) / min(known, unknown) < 1.2:
            break
    assert max(known, unknown) / min(known, unknown) < 1.2, (known, unknown)


def test_sessions_are_issued_and_revoked_by_the_service(people):
    """Login, RegisterPerson and StartGuest each issue a new session; Logout revokes one (once),
    LogoutEverywhere all, ChangePassword all and issues a new one; the table keeps hashes."""
    from db.people import PersonSession, live_session

    answer = people.stub.RegisterPerson(people_pb2.RegisterPersonRequest(
        name="sessions", password="correct horse"), metadata=WEB)
    login = people.stub.Login(people_pb2.LoginRequest(name="sessions", password="correct horse"),
                              metadata=WEB)
    guest = people.stub.StartGuest(people_pb2.StartGuestRequest(name="visitor"), metadata=WEB)
    tokens = [answer.session, login.session, guest.session]
    assert len(set(tokens)) == 3 and all(len(t) >= 40 for t in tokens)
    sessions = people.service.sessions
    with sessions() as s:
        assert [live_session(s, t) for t in tokens] == [answer.person.person_id] * 2 + [
            guest.person.person_id]
        stored = {r.token_sha256 for r in s.query(PersonSession)}
    assert stored == {hashlib.sha256(t.encode()).hexdigest() for t in tokens}
    assert people.stub.Logout(people_pb2.LogoutRequest(session=login.session),
                              metadata=WEB).revoked
    assert not people.stub.Logout(people_pb2.LogoutRequest(session=login.session),
                                  metadata=WEB).revoked
    assert not people.stub.Logout(people_pb2.LogoutRequest(session="made-up"),
                                  metadata=WEB).revoked
    again = people.stub.Login(people_pb2.LoginRequest(name="sessions", password="correct horse"),
                              metadata=WEB).session
    changed = people.stub.ChangePassword(people_pb2.ChangePasswordRequest(
        person_id=answer.person.person_id, old_password="correct horse",
        new_password="battery staple"), metadata=WEB)
    assert changed.revoked == 2
    with sessions() as s:
        assert [live_session(s, t) for t in (answer.session, again, changed.session)] == [
            None, None, answer.person.person_id]
    with sessions() as s:  # a new session cleared the person's revoked ones
        assert s.query(PersonSession).filter_by(person_id=answer.person.person_id).count() == 1
    assert people.stub.LogoutEverywhere(people_pb2.LogoutEverywhereRequest(
        person_id=answer.person.person_id), metadata=WEB).revoked == 1
    for request, code in (
            (people_pb2.ChangePasswordRequest(person_id=answer.person.person_id,
                                              old_password="correct horse",
                                              new_password="another one"),
             grpc.StatusCode.UNAUTHENTICATED),
            (people_pb2.ChangePasswordRequest(person_id=answer.person.person_id,
                                              old_password="battery staple", new_password="short"),
             grpc.StatusCode.INVALID_ARGUMENT),
            (people_pb2.ChangePasswordRequest(person_id=guest.person.person_id,
                                              old_password="", new_password="long enough"),
             grpc.StatusCode.FAILED_PRECONDITION)):
        assert code_of(lambda r=request: people.stub.ChangePassword(r, metadata=WEB)) == code
    assert code_of(lambda: people.stub.Logout(people_pb2.LogoutRequest(session="x"))) == \
        grpc.StatusCode.UNAUTHENTICATED  # the web's token opens it, as every call


def house_id(match_id: int, seat: int, seq: int) -> str:
    """The request id the house bot submits its move at `seq` with (the attacker at its best:
    as if it knew the house token its ids are made with)."""
    return moves.house_request_id(match_id, seat, seq, HOUSE_TOKEN)


def test_a_person_cannot_squat_the_house_bots_next_request_id(people):
    """Issue 44: a person who sends its card with the request id the house bot will use for
    its next move blocks nothing: idempotency is keyed by (match, seat, request id), so the
    person's move lands, the house bot's next move lands, and nobody forfeits."""
    house_bot(people.service.sessions)
    gus = people.guest("gus")
    started = start(people, gus.person_id)
    match_id, seat = started.match.match_id, started.seat
    rng = random.Random(5)
    squatted = None
    for _ in range(40):  # until the person leads a trick: the house answers at the next seq
        table = people.my_turn(gus.person_id, match_id)
        assert table.match.state == match_pb2.MATCH_STATE_RUNNING, table.match.end_detail
        legal = [str(wire.action_from_pb(a)) for a in table.observation.legal_actions]
        plays = [a for a in legal if a.startswith("play ")]
        if table.observation.lead_card or not plays:
            people.act(gus.person_id, table, rng.choice([a for a in legal if a != "claim"]))
            continue
        squatted = house_id(match_id, 1 - seat, table.seq + 1)
        played = rng.choice(plays)
        reply = people.act(gus.person_id, table, played, request_id=squatted)
        assert reply.seq == table.seq and not reply.duplicate  # the attacker's move lands
        break
    assert squatted is not None, "the person never led a trick"
    after = people.my_turn(gus.person_id, match_id, timeout=15)
    assert after.match.state == match_pb2.MATCH_STATE_RUNNING, after.match.end_detail
    assert after.seq >= reply.seq + 2 and after.on_clock == seat, \
        "the house bot's next move did not land"
    with people.service.sessions() as s:
        rows = {(a.seq, a.seat): a.request_id for a in s.scalars(
            select(ActionLog).where(ActionLog.match_id == match_id))}
        m = s.get(Match, match_id)
        assert (m.state, m.illegal0, m.illegal1) == ("running", 0, 0)
    assert rows[(reply.seq, seat)] == squatted
    assert (reply.seq + 1, 1 - seat) in rows
    # a retry by the person with its id still answers its own move, nothing is applied again
    again = people.stub.Act(people_pb2.ActRequest(
        person_id=gus.person_id, match_id=match_id, expected_seq=reply.seq,
        action=played, request_id=squatted), metadata=WEB)
    assert again.duplicate and again.seq == reply.seq



def test_a_game_that_ends_last_is_rated_before_the_service_and_database_go(database,
                                                                          monkeypatch):
    """The rating's thread is joined when `people_service` ends (issue 44: it ran on into the
    schema's drop and deadlocked with it): here it takes a second, and the block is left as
    soon as the game ended."""
    import workers.people

    rated: list[bool] = []
    began = threading.Event()
    real = workers.people.rate_people_match

    def slow(match_id: int, sessions) -> None:  # type: ignore[no-untyped-def]
        began.set()
        time.sleep(1.0)
        rated.append(real(match_id, sessions))

    monkeypatch.setattr(workers.people, "rate_people_match", slow)
    with people_service(database, monkeypatch) as people:
        house_bot(people.service.sessions)
        alice = people.register("alice")
        started = people.stub.StartGame(people_pb2.StartGameRequest(
            person_id=alice.person_id, opponent="house-random", rated=True,
            time_control=match_pb2.TimeControl(max_illegal=1)), metadata=WEB)
        table = people.my_turn(alice.person_id, started.match.match_id)
        foreign = next(str(c) for c in engine.ALL_CARDS
                       if str(c) not in table.observation.hand)
        assert code_of(lambda: people.act(alice.person_id, table, f"play {foreign}")) == \
            grpc.StatusCode.FAILED_PRECONDITION  # she forfeits: the game ends, rated
        # (on PostgreSQL the end's hook may come a moment after the answer: the rating has
        # begun before the block is left, as a game's end comes before a service stops)
        assert began.wait(30), "the game's end was never rated"
    assert rated == [True]
