"""The TournamentService over gRPC against a real service (in this process), on SQLite and
PostgreSQL: the public reads and the operator's changes; bad input (an unknown bot, too few
bots, rounds out of range, a withdrawal of a bot not in the event, a cancel of a finished event)
is refused with its status and a message naming what is wrong, and changes nothing; the events
scheduler's steps (`workers.events.step`) play a round-robin of remote kit bots to the end, and
a withdrawal and a cancel do what they say."""

from __future__ import annotations

import threading

import grpc
import pytest
from bummerl.v1 import match_pb2, tournament_pb2, tournament_pb2_grpc
from housekit import HOUSE_CONFIG, HOUSE_TOKEN
from servicekit import OPERATOR, auth, fresh_database, running_service
from sqlalchemy import func, select

from client import Runner
from db.events import Tournament, TournamentEntry
from db.models import ABORTED, HOUSE, RUNNING, Match
from db.pairs import DuplicatePair
from examples.random_bot import RandomBot
from services.ops import bots
from workers import events
from workers.service import Service
from workers.testing import wait_until

F = tournament_pb2


@pytest.fixture(params=["sqlite", "postgres"])
def site(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database, HOUSE_CONFIG) as svc:
        client = Service(svc.server.address, HOUSE_TOKEN)
        yield svc, client
        client.channel.close()


def stub(service) -> tournament_pb2_grpc.TournamentServiceStub:
    return tournament_pb2_grpc.TournamentServiceStub(service.channel)


def create(service, token: str | None = OPERATOR, **fields) -> F.CreateTournamentResponse:
    metadata = auth(token) if token else ()
    return stub(service).CreateTournament(F.CreateTournamentRequest(**fields), metadata=metadata)


def counts(service) -> tuple[int, int, int]:
    with service.sessions() as s:
        return tuple(s.scalar(select(func.count()).select_from(table)) or 0
                     for table in (Tournament, TournamentEntry, DuplicatePair))


def house(service, n: int) -> list[str]:
    names = [f"house{i}" for i in range(n)]
    for name in names:
        bots.register_bot(name, kind=HOUSE, house_strategy="random", sessions=service.sessions)
    return names


def refused(call, code: grpc.StatusCode, *words: str) -> None:
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() == code, info.value.details()
    for word in words:
        assert word in info.value.details(), info.value.details()


def test_only_the_operator_creates_and_anyone_reads(site):
    service, _ = site
    names = house(service, 3)
    refused(lambda: create(service, None, format=F.TOURNAMENT_FORMAT_ROUND_ROBIN,
                           bot_names=names), grpc.StatusCode.UNAUTHENTICATED, "operator token")
    refused(lambda: create(service, HOUSE_TOKEN, format=F.TOURNAMENT_FORMAT_ROUND_ROBIN,
                           bot_names=names), grpc.StatusCode.PERMISSION_DENIED)
    assert counts(service) == (0, 0, 0)
    made = create(service, format=F.TOURNAMENT_FORMAT_SWISS, bot_names=names, rounds=2,
                  time_control=match_pb2.TimeControl(move_ms=1500, bank_ms=4000), grace_s=5,
                  seed=99, name="spring")
    t = made.tournament
    assert (t.name, t.format, t.state, t.rounds, t.bot_count, t.seed, t.grace_s) == (
        "spring", F.TOURNAMENT_FORMAT_SWISS, F.TOURNAMENT_STATE_RUNNING, 2, 3, 99, 5)
    assert (t.time_control.move_ms, t.time_control.bank_ms) == (1500, 4000)
    assert [e.name for e in made.entries] == names
    got = stub(service).GetTournament(F.GetTournamentRequest(tournament_id=t.tournament_id))
    assert got.tournament == t and [r.name for r in got.standings] == names
    listed = stub(service).ListTournaments(F.ListTournamentsRequest())
    assert [x.tournament_id for x in listed.tournaments] == [t.tournament_id]
    assert not stub(service).ListTournaments(F.ListTournamentsRequest(
        state=F.TOURNAMENT_STATE_FINISHED)).tournaments
    refused(lambda: stub(service).WithdrawBot(F.WithdrawBotRequest(
        tournament_id=t.tournament_id, bot_id=got.entries[0].bot_id, reason="x")),
        grpc.StatusCode.UNAUTHENTICATED)


def test_bad_input_is_refused_naming_what_is_wrong_and_changes_nothing(site):
    service, _ = site
    names = house(service, 4)
    rr = F.TOURNAMENT_FORMAT_ROUND_ROBIN
    cases = [
        (dict(format=rr, bot_names=[*names[:2], "nobody"]), grpc.StatusCode.NOT_FOUND,
         "nobody"),
        (dict(format=rr, bot_ids=[1, 2, 999]), grpc.StatusCode.NOT_FOUND, "999"),
        (dict(format=rr, bot_names=names[:1]), grpc.StatusCode.INVALID_ARGUMENT, "2 to 64"),
        (dict(format=rr, bot_names=[names[0], names[0]]), grpc.StatusCode.INVALID_ARGUMENT,
         "twice"),
        (dict(format=F.TOURNAMENT_FORMAT_SWISS, bot_names=names, rounds=4),
         grpc.StatusCode.INVALID_ARGUMENT, "1 to 3"),
        (dict(format=F.TOURNAMENT_FORMAT_SWISS, bot_names=names),
         grpc.StatusCode.INVALID_ARGUMENT, "rounds"),
        (dict(format=rr, bot_names=names, rounds=2), grpc.StatusCode.INVALID_ARGUMENT,
         "Swiss"),
        (dict(bot_names=names), grpc.StatusCode.INVALID_ARGUMENT, "format"),
        (dict(format=rr, bot_names=names, concurrency=65), grpc.StatusCode.INVALID_ARGUMENT,
         "concurrency"),
        (dict(format=rr, bot_names=names, grace_s=4000), grpc.StatusCode.INVALID_ARGUMENT,
         "grace_s"),
        (dict(format=rr, bot_names=names, name="x" * 81), grpc.StatusCode.INVALID_ARGUMENT,
         "name"),
        (dict(format=rr, bot_names=names, bot_ids=[1, 2]), grpc.StatusCode.INVALID_ARGUMENT,
         "not both"),
    ]
    for fields, code, word in cases:
        refused(lambda fields=fields: create(service, **fields), code, word)
    assert counts(service) == (0, 0, 0)
    t = create(service, format=rr, bot_names=names[:3]).tournament
    before = counts(service)
    ops = stub(service)
    refused(lambda: ops.GetTournament(F.GetTournamentRequest(tournament_id=77)),
            grpc.StatusCode.NOT_FOUND, "77")
    refused(lambda: ops.WithdrawBot(F.WithdrawBotRequest(
        tournament_id=t.tournament_id, bot_id=4, reason="gone"), metadata=auth(OPERATOR)),
        grpc.StatusCode.NOT_FOUND, "bot 4 is not in")
    refused(lambda: ops.WithdrawBot(F.WithdrawBotRequest(
        tournament_id=t.tournament_id, bot_id=1), metadata=auth(OPERATOR)),
        grpc.StatusCode.INVALID_ARGUMENT, "reason")
    refused(lambda: ops.CancelTournament(F.CancelTournamentRequest(
        tournament_id=t.tournament_id, reason="r" * 501), metadata=auth(OPERATOR)),
        grpc.StatusCode.INVALID_ARGUMENT, "reason")
    assert counts(service) == before
    with service.sessions.begin() as s:
        s.get(Tournament, t.tournament_id).state = "finished"
    refused(lambda: ops.CancelTournament(F.CancelTournamentRequest(
        tournament_id=t.tournament_id, reason="late"), metadata=auth(OPERATOR)),
        grpc.StatusCode.FAILED_PRECONDITION, "finished")
    refused(lambda: ops.WithdrawBot(F.WithdrawBotRequest(
        tournament_id=t.tournament_id, bot_id=1, reason="late"), metadata=auth(OPERATOR)),
        grpc.StatusCode.FAILED_PRECONDITION, "finished")
    with service.sessions() as s:
        assert s.get(Tournament, t.tournament_id).cancelled_reason is None
        assert all(e.withdrawn_at is None for e in s.scalars(select(TournamentEntry)))


def play(service, tokens: list[str]) -> list[Runner]:
    runners = [Runner(RandomBot(i), service.server.address, token)
               for i, token in enumerate(tokens)]
    for runner in runners:
        threading.Thread(target=runner.run, daemon=True).start()
    wait_until(lambda: all(r.stats.connections for r in runners), 30, what="bots connected")
    return runners


def test_steps_play_a_round_robin_to_the_end_and_the_export_matches_the_rows(site):
    service, client = site
    ids, tokens = zip(*(service.register(f"kit{i}") for i in range(4)), strict=True)
    runners = play(service, list(tokens))
    try:
        t = create(service, format=F.TOURNAMENT_FORMAT_ROUND_ROBIN, bot_ids=list(ids),
                   concurrency=2, seed=5).tournament
        wait_until(lambda: events.step(t.tournament_id, service.sessions, client) ==
                   "finished", 120, every=0.1, what="the round-robin to finish")
    finally:
        for runner in runners:
            runner.stop()
    export = stub(service).ExportTournament(F.ExportTournamentRequest(
        tournament_id=t.tournament_id))
    assert export.tournament.state == F.TOURNAMENT_STATE_FINISHED
    assert len(export.pairs) == 6 and all(p.state == F.PAIR_STATE_DONE for p in export.pairs)
    with service.sessions() as s:
        matches = {m.id: m for m in s.scalars(select(Match)).unique()}
    assert len(matches) == 12
    for p in export.pairs:
        leg0, leg1 = matches[p.match_a_id], matches[p.match_b_id]
        assert (leg0.bot0_id, leg1.bot0_id) == (p.bot_a_id, p.bot_b_id)
        assert leg1.created_at >= leg0.finished_at  # never both legs at once
        wins_a = int(leg0.winner == 0) + int(leg1.winner == 1)
        assert (p.points_a, p.points_b) == (wins_a, 2 - wins_a)
    # The crosstable: each bot's row against each other bot, from the pairs' match rows.
    cells = {(c.bot_id, c.opponent_id): c for c in export.crosstable}
    assert len(cells) == 12
    for row in export.standings:
        assert row.points == sum(c.points for (b, _), c in cells.items() if b == row.bot_id)
        assert row.pairs == 3
    assert sum(r.points for r in export.standings) == 12


def test_a_withdrawal_forfeits_open_pairs_and_a_cancel_voids_the_rest(site):
    service, client = site
    names = house(service, 4)
    t = create(service, format=F.TOURNAMENT_FORMAT_ROUND_ROBIN, bot_names=names,
               concurrency=4).tournament
    events.step(t.tournament_id, service.sessions, client)  # pairs every round, starts two
    ops = stub(service)
    got = ops.GetTournament(F.GetTournamentRequest(tournament_id=t.tournament_id))
    assert len(got.pairs) == 6 and got.tournament.paired_rounds == 3
    playing = [p for p in got.pairs if p.state == F.PAIR_STATE_PLAYING]
    assert len(playing) == 2 and all(p.match_a_id and not p.match_b_id for p in playing)
    gone = playing[0].bot_a_id
    reply = ops.WithdrawBot(F.WithdrawBotRequest(tournament_id=t.tournament_id, bot_id=gone,
                                                 reason="crashed"), metadata=auth(OPERATOR))
    assert len(reply.forfeited_pair_ids) == 3  # a bot of 4 has 3 pairs, none decided yet
    got = ops.GetTournament(F.GetTournamentRequest(tournament_id=t.tournament_id))
    for p in got.pairs:
        if gone in (p.bot_a_id, p.bot_b_id):
            mine = F.PAIR_FORFEIT_BOT_A if p.bot_a_id == gone else F.PAIR_FORFEIT_BOT_B
            assert (p.state, p.forfeit) == (F.PAIR_STATE_FORFEITED, mine)
            assert "crashed" in p.detail
    with service.sessions() as s:
        aborted = s.scalars(select(Match).where(Match.state == ABORTED)).unique().all()
        assert [m.pair_id for m in aborted] == [playing[0].pair_id]
    refused(lambda: ops.WithdrawBot(F.WithdrawBotRequest(
        tournament_id=t.tournament_id, bot_id=gone, reason="again"), metadata=auth(OPERATOR)),
        grpc.StatusCode.FAILED_PRECONDITION, "already")
    row = next(r for r in got.standings if r.bot_id == gone)
    assert row.withdrawn and row.forfeits == 3 and row.points == 0
    # Cancel: the rest is void, the running leg aborted, and no step makes anything again.
    reply = ops.CancelTournament(F.CancelTournamentRequest(
        tournament_id=t.tournament_id, reason="enough"), metadata=auth(OPERATOR))
    assert reply.tournament.state == F.TOURNAMENT_STATE_CANCELLED
    assert len(reply.voided_pair_ids) == 3
    assert events.step(t.tournament_id, service.sessions, client) == "cancelled"
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(Match)
                        .where(Match.state == RUNNING)) == 0
        states = sorted(p.state for p in s.scalars(select(DuplicatePair)))
    assert states == ["forfeited"] * 3 + ["void"] * 3


def test_the_ladder_does_not_pair_a_remote_bot_while_its_event_pair_is_playing(site):
    service, client = site
    (a, token_a), (b, token_b) = service.register("kit-a"), service.register("kit-b")
    (h,) = [bots.register_bot("house-x", kind=HOUSE, house_strategy="random",
                              sessions=service.sessions)[0].id]
    runners = play(service, [token_a, token_b])
    try:
        t = create(service, format=F.TOURNAMENT_FORMAT_GAUNTLET, bot_ids=[a, b]).tournament
        events.step(t.tournament_id, service.sessions, client)
        ladder = match_pb2.CreateMatchRequest(bot_ids=[a, h], ladder=True)
        refused(lambda: service.matches.CreateMatch(ladder, metadata=auth(HOUSE_TOKEN)),
                grpc.StatusCode.FAILED_PRECONDITION, "kit-a is playing duplicate pair")
        wait_until(lambda: events.step(t.tournament_id, service.sessions, client) ==
                   "finished", 60, every=0.1, what="the gauntlet to finish")
        # Once its pair is decided, the ladder may pair it again.
        made = service.matches.CreateMatch(ladder, metadata=auth(HOUSE_TOKEN)).match
        assert list(made.bot_ids) == [a, h]
    finally:
        for runner in runners:
            runner.stop()


def test_the_command_line_names_what_is_wrong(site, capsys):
    from cli.main import main as bummerl

    service, _ = site
    house(service, 2)
    server = ["--server", service.server.address]
    assert bummerl(["tournament", "create", "--format", "gauntlet", "--bots", "house0,ghost",
                    "--operator-token", OPERATOR, *server]) == 1
    assert "no bot named 'ghost'" in capsys.readouterr().err
    assert bummerl(["tournament", "create", "--format", "gauntlet", "--bots", "house0,house1",
                    "--time-control", "fast", "--operator-token", OPERATOR, *server]) == 1
    assert "'fast' is not a time (MOVE[+BANK]" in capsys.readouterr().err
    assert bummerl(["tournament", "create", "--format", "gauntlet", "--bots", "house0,house1",
                    *server]) == 1
    assert "operator token" in capsys.readouterr().err
    assert counts(service) == (0, 0, 0)
    assert bummerl(["tournament", "create", "--format", "gauntlet", "--bots", "house0,house1",
                    "--time-control", "1.5s+4000", "--operator-token", OPERATOR, *server]) == 0
    assert "tournament 1 created" in capsys.readouterr().out
    with service.sessions() as s:
        t = s.get(Tournament, 1)
        assert (t.move_ms, t.bank_ms, t.format, t.rounds) == (1500, 4000, "gauntlet", 1)
    assert bummerl(["tournament", "withdraw", "1", "nobody", "--operator-token", OPERATOR,
                    *server]) == 1
    assert "no bot named 'nobody' in tournament 1" in capsys.readouterr().err


def test_a_tournament_match_end_sends_its_tournament_a_step(site):
    from services.core import actions

    service, client = site
    names = house(service, 2)
    t = create(service, format=F.TOURNAMENT_FORMAT_GAUNTLET, bot_names=names).tournament
    events.step(t.tournament_id, service.sessions, client)
    with service.sessions() as s:
        leg = s.scalars(select(Match)).unique().one()
    other = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
        bot_names=names), metadata=auth(OPERATOR)).match
    sent: list[int] = []
    assert events.after_match(other.match_id, sent.append, service.sessions) is None
    actions.abort_match(leg.id, "testing", sessions=service.sessions)
    assert events.after_match(leg.id, sent.append, service.sessions) == t.tournament_id
    assert sent == [t.tournament_id]
    stub(service).CancelTournament(F.CancelTournamentRequest(
        tournament_id=t.tournament_id, reason="over"), metadata=auth(OPERATOR))
    assert events.after_match(leg.id, sent.append, service.sessions) is None  # not running
    assert sent == [t.tournament_id]
