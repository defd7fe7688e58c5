"""A move time below the floor (services.core.bounds.MIN_MOVE_MS, docs/service.md "Time
controls") is refused everywhere a time control comes in, naming it, and nothing is made:
the service's CreateMatch, Challenge, CreateTournament and StartTest (INVALID_ARGUMENT naming
`time_control.move_ms`, also as the BadRequest field), `bummerl match create --move-ms`,
`bummerl tournament create --time-control 1+1` and `bummerl test start --time-control 1+1`
(refused before anything is sent, naming the flag). The floor itself is accepted."""

from __future__ import annotations

import grpc
import pytest
from bummerl.v1 import (
    bot_pb2,
    match_pb2,
    tournament_pb2,
    tournament_pb2_grpc,
    versiontest_pb2,
    versiontest_pb2_grpc,
)
from google.rpc import error_details_pb2, status_pb2
from servicekit import OPERATOR, auth, running_service
from sqlalchemy import func, select

from cli.main import main
from db.events import Tournament
from db.models import HOUSE, Match
from db.versiontests import VersionTest
from services.core import hooks
from services.core.bounds import MIN_MOVE_MS
from services.ops import bots

FIELD = "time_control.move_ms"


@pytest.fixture
def service(database, monkeypatch):
    monkeypatch.setattr(hooks, "on_turn", [])
    monkeypatch.setattr(hooks, "on_match_end", [])
    with running_service(database) as svc:
        bots.register_bot("house-a", kind=HOUSE, house_strategy="random",
                          sessions=svc.sessions)
        bots.register_bot("house-b", kind=HOUSE, house_strategy="random",
                          sessions=svc.sessions)
        yield svc


def made(service) -> tuple[int, int, int]:
    with service.sessions() as s:
        return tuple(s.scalar(select(func.count()).select_from(table)) or 0
                     for table in (Match, Tournament, VersionTest))


def refused_naming_the_field(call) -> None:
    with pytest.raises(grpc.RpcError) as info:
        call()
    error = info.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert error.details().startswith(f"{FIELD} must be {MIN_MOVE_MS}-"), error.details()
    assert "round trip" in error.details()
    trailers = dict(error.trailing_metadata())
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    fields = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    assert fields == [FIELD]


@pytest.mark.parametrize("move_ms", [1, MIN_MOVE_MS - 1])
def test_the_service_refuses_a_move_time_below_the_floor(service, move_ms):
    _, token = service.register("author")
    tc = match_pb2.TimeControl(move_ms=move_ms, bank_ms=1)
    operator = auth(OPERATOR)
    refused_naming_the_field(lambda: service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_names=["house-a", "house-b"], time_control=tc), metadata=operator, timeout=10))
    refused_naming_the_field(lambda: service.bots.Challenge(bot_pb2.ChallengeRequest(
        opponent="house-a", matches=1, time_control=tc), metadata=auth(token), timeout=10))
    tournaments = tournament_pb2_grpc.TournamentServiceStub(service.channel)
    refused_naming_the_field(lambda: tournaments.CreateTournament(
        tournament_pb2.CreateTournamentRequest(
            format=tournament_pb2.TOURNAMENT_FORMAT_GAUNTLET, bot_names=["house-a", "house-b"],
            time_control=tc), metadata=operator, timeout=10))
    tests = versiontest_pb2_grpc.VersionTestServiceStub(service.channel)
    refused_naming_the_field(lambda: tests.StartTest(versiontest_pb2.StartTestRequest(
        candidate="author@2.0", baseline="author@1.0", games=2, time_control=tc),
        metadata=auth(token), timeout=10))
    assert made(service) == (0, 0, 0)
    # the floor itself is a time control like any other
    reply = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_names=["house-a", "house-b"], time_control=match_pb2.TimeControl(
            move_ms=MIN_MOVE_MS)), metadata=operator, timeout=10)
    assert reply.match.time_control.move_ms == MIN_MOVE_MS


def test_the_command_line_refuses_it_naming_the_flag(service, capsys):
    _, token = service.register("author")
    server = ("--server", service.server.address)
    assert main(["tournament", "create", "--format", "gauntlet", "--bots", "house-a,house-b",
                 "--time-control", "1+1", "--operator-token", OPERATOR, *server]) == 1
    err = capsys.readouterr().err
    assert f"--time-control '1+1': a move time of 1 ms is below the floor of {MIN_MOVE_MS} ms" \
        in err and err.count("\n") == 1, err
    assert main(["test", "start", "--candidate", "author@2.0", "--baseline", "author@1.0",
                 "--time-control", "1+1", "--token", token, *server]) == 1
    err = capsys.readouterr().err
    assert "--time-control '1+1': a move time of 1 ms is below the floor" in err, err
    assert main(["match", "create", "house-a", "house-b", "--move-ms", "1",
                 "--operator-token", OPERATOR, *server]) == 1
    err = capsys.readouterr().err
    assert f"{FIELD} must be {MIN_MOVE_MS}-" in err, err
    assert made(service) == (0, 0, 0)
    assert main(["tournament", "create", "--format", "gauntlet", "--bots", "house-a,house-b",
                 "--time-control", f"{MIN_MOVE_MS}+1000", "--operator-token", OPERATOR,
                 *server]) == 0
    with service.sessions() as s:
        assert s.scalar(select(Tournament.move_ms)) == MIN_MOVE_MS
