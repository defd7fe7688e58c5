"""Every error code of the service, over a real gRPC server; duplicate and stale submits."""

from __future__ import annotations

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import bot_pb2, common_pb2, match_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from servicekit import OPERATOR, auth, fresh_database, running_service

import engine
from services.core import matches as plain


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def code_of(call, *args, **kwargs) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.RpcError) as info:
        call(*args, **kwargs)
    error = info.value
    trailing = {k: v for k, v in (error.trailing_metadata() or ())}
    return error.code(), error.details(), trailing


@pytest.fixture
def match(service):
    """A running match (seed 3) of two registered bots: (match id, seat to act, tokens)."""
    a_id, a_token = service.register("alice")
    b_id, b_token = service.register("bob")
    m = plain.create_match([a_id, b_id], seed=3, sessions=service.sessions,
                           config=service.config)
    return m.id, m.to_act, (a_token, b_token)


def submit(service, match_id, seat, token, action, seq, request_id=""):
    return service.matches.SubmitAction(match_pb2.SubmitActionRequest(
        match_id=match_id, seat=seat, expected_seq=seq, action=wire.action_to_pb(action),
        request_id=request_id), metadata=auth(token))


def legal(match_id, seq=0):
    game = engine.Match(3, "soft")
    return game.legal_actions()


def illegal_play(game: engine.Match) -> engine.Action:
    holding = set(game.observe(game.to_act).hand)
    card = next(c for c in engine.ALL_CARDS if c not in holding)
    return engine.Action.play(card)


def test_unauthenticated(service, match):
    match_id, seat, _ = match
    code, details, _ = code_of(service.matches.GetObservation,
                               match_pb2.GetObservationRequest(match_id=match_id, seat=seat))
    assert code == grpc.StatusCode.UNAUTHENTICATED and "authorization" in details
    code, details, _ = code_of(
        service.matches.SubmitAction, match_pb2.SubmitActionRequest(match_id=match_id),
        metadata=auth("not-a-token"))
    assert code == grpc.StatusCode.UNAUTHENTICATED and "unknown token" in details
    code, _, _ = code_of(service.matches.CreateMatch, match_pb2.CreateMatchRequest())
    assert code == grpc.StatusCode.UNAUTHENTICATED
    code, _, _ = code_of(service.bots.RegisterBot, bot_pb2.RegisterBotRequest(name="x"))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    stream = service.bots.Play(iter([]), metadata=auth("wrong"))
    code, _, _ = code_of(lambda: list(stream))
    assert code == grpc.StatusCode.UNAUTHENTICATED


def test_permission_denied(service, match):
    match_id, seat, tokens = match
    mine, theirs = tokens[seat], tokens[1 - seat]
    # a bot may only see and act for its own seat
    code, details, _ = code_of(
        service.matches.GetObservation,
        match_pb2.GetObservationRequest(match_id=match_id, seat=seat), metadata=auth(theirs))
    assert code == grpc.StatusCode.PERMISSION_DENIED and f"seat {seat}" in details
    action = legal(match_id)[0]
    code, _, _ = code_of(submit, service, match_id, seat, theirs, action, 0)
    assert code == grpc.StatusCode.PERMISSION_DENIED
    # only the operator creates matches and registers bots
    code, details, _ = code_of(service.matches.CreateMatch,
                               match_pb2.CreateMatchRequest(bot_ids=[1, 2]), metadata=auth(mine))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "operator" in details
    code, _, _ = code_of(service.bots.RegisterBot, bot_pb2.RegisterBotRequest(name="x"),
                         metadata=auth(mine))
    assert code == grpc.StatusCode.PERMISSION_DENIED


def test_register_with_operator_token_returns_token_once(service):
    reply = service.bots.RegisterBot(bot_pb2.RegisterBotRequest(name="newbie"),
                                     metadata=auth(OPERATOR))
    assert reply.token and reply.bot.name == "newbie"
    got = service.bots.GetBot(bot_pb2.GetBotRequest(bot_id=reply.bot.bot_id))
    assert got.bot.name == "newbie" and got.bot.kind == bot_pb2.BOT_KIND_REMOTE
    # the token is stored hashed only
    from db.models import Bot

    with service.sessions() as session:
        stored = session.get(Bot, reply.bot.bot_id)
        assert stored.token_hash != reply.token and reply.token not in stored.token_hash
    code, _, _ = code_of(service.bots.RegisterBot, bot_pb2.RegisterBotRequest(name="newbie"),
                         metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.ALREADY_EXISTS


def test_not_found(service, match):
    match_id, seat, tokens = match
    code, details, _ = code_of(service.matches.GetMatch, match_pb2.GetMatchRequest(match_id=999))
    assert code == grpc.StatusCode.NOT_FOUND and "999" in details
    code, _, _ = code_of(service.matches.GetObservation,
                         match_pb2.GetObservationRequest(match_id=999, seat=0),
                         metadata=auth(tokens[0]))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _, _ = code_of(service.bots.GetBot, bot_pb2.GetBotRequest(bot_id=999))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _, _ = code_of(service.matches.CreateMatch,
                         match_pb2.CreateMatchRequest(bot_ids=[1, 999]), metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.NOT_FOUND
    stream = service.matches.WatchMatch(match_pb2.WatchMatchRequest(match_id=999))
    code, _, _ = code_of(lambda: list(stream))
    assert code == grpc.StatusCode.NOT_FOUND


def test_invalid_argument(service, match):
    match_id, seat, tokens = match
    op = auth(OPERATOR)
    for request in (match_pb2.CreateMatchRequest(bot_ids=[1]),
                    match_pb2.CreateMatchRequest(bot_ids=[1, 1]),
                    match_pb2.CreateMatchRequest(bot_ids=[1, 2], seed=-5)):
        code, _, _ = code_of(service.matches.CreateMatch, request, metadata=op)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _, _ = code_of(service.bots.RegisterBot, bot_pb2.RegisterBotRequest(name="no spaces"),
                         metadata=op)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, details, _ = code_of(service.matches.SubmitAction, match_pb2.SubmitActionRequest(
        match_id=match_id, seat=seat, action=common_pb2.Action()), metadata=auth(tokens[seat]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "kind" in details
    code, _, _ = code_of(service.matches.SubmitAction, match_pb2.SubmitActionRequest(
        match_id=match_id, seat=seat,
        action=common_pb2.Action(kind=common_pb2.ACTION_KIND_PLAY, card="ZZ")),
        metadata=auth(tokens[seat]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _, _ = code_of(service.matches.GetObservation,
                         match_pb2.GetObservationRequest(match_id=match_id, seat=2),
                         metadata=auth(tokens[0]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _, _ = code_of(service.matches.ListMatches,
                         match_pb2.ListMatchesRequest(page_token="garbage"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _, _ = code_of(service.matches.ListMatches,
                         match_pb2.ListMatchesRequest(page_size=1000))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_failed_precondition_cites_the_rule(service, match):
    match_id, seat, tokens = match
    game = engine.Match(3, "soft")
    # not this seat's turn
    other = 1 - seat
    code, details, trailing = code_of(submit, service, match_id, other, tokens[other],
                                      game.legal_actions()[0], 0)
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details.startswith("R3.1") and trailing["bummerl-rule"] == "R3.1"
    # an illegal action names the rule it breaks, and changes nothing
    bad = illegal_play(game)
    code, details, trailing = code_of(submit, service, match_id, seat, tokens[seat], bad, 0)
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert trailing["bummerl-rule"] == "R3.1" and "not in your hand" in details
    assert "illegal action 1" in details
    # the rich status (google.rpc.Status) carries the rule and what is left
    with pytest.raises(grpc.RpcError) as info:
        submit(service, match_id, seat, tokens[seat], bad, 0)
    status = rpc_status.from_call(info.value)
    assert status is not None and status.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    error_info = error_details_pb2.ErrorInfo()
    failure = error_details_pb2.PreconditionFailure()
    assert status.details[0].Unpack(error_info) and status.details[1].Unpack(failure)
    assert error_info.metadata["rule"] == "R3.1" and error_info.metadata["illegal_left"] == "1"
    assert failure.violations[0].subject == "R3.1"
    m = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id)).match
    assert m.seq == 0 and m.state == match_pb2.MATCH_STATE_RUNNING


def test_repeated_illegal_actions_forfeit_the_match(service, match):
    match_id, seat, tokens = match
    bad = illegal_play(engine.Match(3, "soft"))
    for _ in range(service.config.max_illegal):
        code, details, _ = code_of(submit, service, match_id, seat, tokens[seat], bad, 0)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "forfeits the match" in details
    m = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id)).match
    assert m.state == match_pb2.MATCH_STATE_FINISHED
    assert m.end_reason == match_pb2.END_REASON_FORFEIT_ILLEGAL
    assert m.forfeit_seat == seat and m.winner == 1 - seat and "illegal" in m.end_detail
    # a finished match refuses further actions, citing R9.1
    action = engine.Match(3, "soft").legal_actions()[0]
    code, details, trailing = code_of(submit, service, match_id, seat, tokens[seat], action, 0)
    assert code == grpc.StatusCode.FAILED_PRECONDITION and trailing["bummerl-rule"] == "R9.1"


def test_duplicate_submit_applies_once_and_stale_is_aborted(service, match):
    match_id, seat, tokens = match
    game = engine.Match(3, "soft")
    action = game.legal_actions()[0]
    first = submit(service, match_id, seat, tokens[seat], action, 0, request_id="req-1")
    assert first.seq == 0 and not first.duplicate and first.match.seq == 1
    again = submit(service, match_id, seat, tokens[seat], action, 0, request_id="req-1")
    assert again.seq == 0 and again.duplicate and again.match.seq == 1
    # the same request id for another action is a client bug
    game.apply(seat, action)
    other = next(a for a in engine.Match(3, "soft").legal_actions() if a != action)
    code, _, _ = code_of(submit, service, match_id, seat, tokens[seat], other, 0, "req-1")
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    # a seat's own request id reused at the current seq for another action is caught too
    # (the other seat's ids are its own: see test_a_seats_request_ids_are_its_own)
    nxt = game.to_act
    follow = game.legal_actions()[0]
    assert submit(service, match_id, nxt, tokens[nxt], follow, 1, "req-n").seq == 1
    game.apply(nxt, follow)
    now, used = game.to_act, {seat: "req-1", nxt: "req-n"}[game.to_act]
    code, details, _ = code_of(submit, service, match_id, now, tokens[now],
                               game.legal_actions()[0], 2, used)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and used in details
    # a stale expected_seq is refused: nothing applies twice
    code, details, _ = code_of(submit, service, match_id, now, tokens[now],
                               game.legal_actions()[0], 0, "req-2")
    assert code == grpc.StatusCode.ABORTED and "stale" in details
    m = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id))
    assert m.match.seq == 2 and sum(len(h.actions) for h in m.hands) == 2


@pytest.mark.parametrize("path", ["live", "database"])
def test_a_seats_request_ids_are_its_own(service, match, path):
    """Issue 44: idempotency is keyed by (match, seat, request id). Bot A, on its turn, uses the
    id bot B will use next (B names its ids by match and seq, as a naive client does): both
    moves land, nobody forfeits; a retry by either seat answers its own move, never the other's.
    `path`: the live rows in memory (the fast path), or every submit read from the database."""
    from services.core import cache

    match_id, a, tokens = match
    b = 1 - a
    game = engine.Match(3, "soft")

    def send(seat, action, seq, request_id):
        if path == "database":
            cache.forget_rows()
        return submit(service, match_id, seat, tokens[seat], action, seq, request_id)

    squat = f"{match_id}:1"  # B's id for its move at seq 1
    a_action = game.legal_actions()[0]
    first = send(a, a_action, 0, squat)
    assert first.seq == 0 and not first.duplicate
    game.apply(a, a_action)
    assert game.to_act == b
    b_action = game.legal_actions()[0]
    second = send(b, b_action, 1, squat)  # B's own move with its own id: it lands
    assert second.seq == 1 and not second.duplicate and second.match.seq == 2
    game.apply(b, b_action)
    # retries: each seat's id answers its own move
    assert (lambda r: (r.seq, r.duplicate))(send(b, b_action, 1, squat)) == (1, True)
    assert (lambda r: (r.seq, r.duplicate))(send(a, a_action, 0, squat)) == (0, True)
    # one seat's id never answers for the other: the other's submit with it is stale (as any
    # submit at an old seq), neither the first seat's duplicate nor an error naming its move
    c = game.to_act
    c_action = game.legal_actions()[0]
    assert send(c, c_action, 2, "only-c").seq == 2
    code, details, _ = code_of(send, 1 - c, c_action, 2, "only-c")
    assert code == grpc.StatusCode.ABORTED and "stale" in details
    reply = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id))
    assert reply.match.seq == 3 and reply.match.state == match_pb2.MATCH_STATE_RUNNING
    assert [(x.seq, x.seat) for h in reply.hands for x in h.actions] == [(0, a), (1, b), (2, c)]


def test_concurrent_duplicate_submits_apply_once(service, match):
    from concurrent.futures import ThreadPoolExecutor

    match_id, seat, tokens = match
    action = engine.Match(3, "soft").legal_actions()[0]

    def attempt(i):
        try:
            return submit(service, match_id, seat, tokens[seat], action, 0, f"r{i % 2}")
        except grpc.RpcError as e:
            return e.code()

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(attempt, range(16)))
    applied = [r for r in results if not isinstance(r, grpc.StatusCode) and not r.duplicate]
    assert len(applied) == 1
    assert all(r == grpc.StatusCode.ABORTED or not isinstance(r, grpc.StatusCode)
               for r in results)
    m = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id)).match
    assert m.seq == 1


def test_open_registration_needs_no_operator_token(tmp_path, request):
    from servicekit import Database, running_service

    from db.settings import Settings

    with running_service(Database(f"sqlite:///{tmp_path / 'open.sqlite3'}"),
                         Settings(open_registration=True)) as service:
        reply = service.bots.RegisterBot(bot_pb2.RegisterBotRequest(name="anyone"))
        assert reply.token
        # creating matches still needs the operator (none is configured here)
        code, _, _ = code_of(service.matches.CreateMatch,
                             match_pb2.CreateMatchRequest(bot_ids=[1, 2]),
                             metadata=auth(reply.token))
        assert code == grpc.StatusCode.PERMISSION_DENIED


def test_bot_names_are_unique_whatever_their_case(service):
    """As people's names are (issue 44): `mybot` is refused beside `MyBot`, naming it, and a
    lookup by name finds the bot whatever the case."""
    from db.records import bot_id_named

    mine = service.bots.RegisterBot(bot_pb2.RegisterBotRequest(name="MyBot"),
                                    metadata=auth(OPERATOR)).bot.bot_id
    for other in ("mybot", "MYBOT"):
        code, details, _ = code_of(service.bots.RegisterBot,
                                   bot_pb2.RegisterBotRequest(name=other),
                                   metadata=auth(OPERATOR))
        assert code == grpc.StatusCode.ALREADY_EXISTS
        assert f"the name '{other}' is taken by the bot 'MyBot'" in details, details
    code, details, _ = code_of(service.bots.RegisterBot, bot_pb2.RegisterBotRequest(name="MyBot"),
                               metadata=auth(OPERATOR))
    assert code == grpc.StatusCode.ALREADY_EXISTS and "'MyBot' exists" in details
    theirs = service.bots.RegisterBot(bot_pb2.RegisterBotRequest(name="Other"),
                                      metadata=auth(OPERATOR)).bot.bot_id
    assert plain.bot_ids_named(["mybot", "OTHER", "MyBot"], sessions=service.sessions) == \
        [mine, theirs, mine]
    assert bot_id_named(service.sessions.kw["bind"], "myBOT") == mine
    m = service.matches.CreateMatch(match_pb2.CreateMatchRequest(bot_names=["mybot", "other"]),
                                    metadata=auth(OPERATOR)).match
    assert list(m.bot_ids) == [mine, theirs] and list(m.bot_names) == ["MyBot", "Other"]
