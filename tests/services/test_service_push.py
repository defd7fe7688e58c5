"""Push, not poll, on a real gRPC server (in this process): what a stream is sent, when, and
at what cost; the stream limits; hooks never delay a submit; the fast path of a submit keeps
the idempotency and stale-seq rules and notices a row changed by another process.
SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import bot_pb2, match_pb2, match_pb2_grpc
from servicekit import CONFIG, auth, running_service
from serviceprocs import PlayStream
from sqlalchemy import event

import engine
from services.core import actions, connections, dispatch, hooks, values
from services.core import matches as plain
from services.core.errors import Aborted
from services.ops import bots


@pytest.fixture
def service(database):
    with running_service(database) as svc:
        yield svc


def first_to_act(seat: int) -> int:
    """A seed whose match starts with `seat` to act."""
    return next(s for s in range(100) if engine.Match(s, "soft").to_act == seat)


def count_statements(sessions):  # type: ignore[no-untyped-def]
    statements: list[str] = []
    event.listen(sessions.kw["bind"], "before_cursor_execute",
                 lambda _c, _cur, statement, *_a: statements.append(statement))
    return statements


def submit(service, match_id, seat, token, action, seq, request_id=""):  # type: ignore[no-untyped-def]
    return service.matches.SubmitAction(match_pb2.SubmitActionRequest(
        match_id=match_id, seat=seat, expected_seq=seq, action=wire.action_to_pb(action),
        request_id=request_id), metadata=auth(token))


def test_idle_spectators_share_one_safety_net_read_and_get_changes_at_once(service):
    a_id, a_token = service.register("a")
    b_id, b_token = service.register("b")
    seed = first_to_act(0)
    m = plain.create_match([a_id, b_id], seed=seed, sessions=service.sessions,
                           config=service.config)
    stub = match_pb2_grpc.MatchServiceStub(service.channel)
    watches = [stub.WatchMatch(match_pb2.WatchMatchRequest(match_id=m.id)) for _ in range(20)]
    got: list[tuple[float, match_pb2.WatchMatchResponse]] = []

    def read(watch) -> None:  # type: ignore[no-untyped-def]
        try:
            for response in watch:
                got.append((time.perf_counter(), response))
        except grpc.RpcError:
            pass  # cancelled at the end

    for watch in watches:
        threading.Thread(target=read, args=(watch,), daemon=True).start()
    time.sleep(1.0)  # the streams' first reads are done
    statements = count_statements(service.sessions)
    time.sleep(2.5)  # idle: 20 spectators, one shared look per second (poll_s, no bus)
    referee = "deadline_at <"  # the referee's look for overdue matches: clocks, not streams
    reads = [s for s in statements if referee not in s]
    assert not [s for s in reads if "FROM actions" in s], reads  # no stream re-reads its match
    assert 1 <= len(reads) <= 4, reads
    game = engine.Match(seed, "soft")
    action = game.legal_actions()[0]
    started = time.perf_counter()
    submit(service, m.id, 0, a_token, action, 0)
    deadline = time.monotonic() + 5
    while len(got) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    for watch in watches:
        watch.cancel()
    assert len(got) == 20, got
    assert all(r.WhichOneof("event") == "action" and r.action.seq == 0 for _, r in got)
    assert wire.action_from_pb(got[0][1].action.action) == action
    assert max(t for t, _ in got) - started < 0.5  # pushed, generously bounded


def test_a_turn_is_pushed_when_the_opponents_action_commits(service):
    a_id, a_token = service.register("a")
    b_id, b_token = service.register("b")
    seed = first_to_act(1)
    m = plain.create_match([a_id, b_id], seed=seed, sessions=service.sessions,
                           config=service.config)
    stream = PlayStream(service.channel, a_token)
    try:
        stream.next("welcome")
        game = engine.Match(seed, "soft")
        action = game.legal_actions()[0]
        started = time.perf_counter()
        submit(service, m.id, 1, b_token, action, 0)
        turn = stream.next("turn", timeout=5).turn
        assert time.perf_counter() - started < 0.5
        game.apply(1, action)
        assert turn.seq == 1 and wire.observation_from_pb(turn.observation) == game.observe(0)
    finally:
        stream.close()


def test_a_bot_squatting_the_opponents_next_request_id_on_play_blocks_nothing(service):
    """Issue 44, on Play streams (the fast path and the group commit): bot B names its request
    ids by match and seq; bot A answers each of its turns with B's id for the next seq. Every
    answer of both lands, none is rejected, nobody forfeits."""
    a_id, a_token = service.register("a")
    b_id, b_token = service.register("b")
    streams = {a_id: PlayStream(service.channel, a_token),
               b_id: PlayStream(service.channel, b_token)}
    try:
        for stream in streams.values():
            stream.next("welcome")
        m = plain.create_match([a_id, b_id], seed=3, sessions=service.sessions,
                               config=service.config)
        game = engine.Match(3, "soft")
        bot_of = (a_id, b_id)
        for _ in range(8):
            seat = game.to_act
            turn = streams[bot_of[seat]].next("turn").turn
            assert (turn.match_id, turn.seq) == (m.id, len(game.history))
            action = game.legal_actions()[0]
            squat = turn.seq + 1 if bot_of[seat] == a_id else turn.seq
            streams[bot_of[seat]].answer(m.id, turn.seq, action, f"{m.id}:{squat}")
            game.apply(seat, action)
        row = plain.get_match(m.id, sessions=service.sessions)
        deadline = time.monotonic() + 10
        while row.seq < 8 and time.monotonic() < deadline:
            time.sleep(0.02)
            row = plain.get_match(m.id, sessions=service.sessions)
        assert (row.seq, row.state, row.illegal0, row.illegal1) == (8, "running", 0, 0)
        for stream in streams.values():
            assert not any(r.WhichOneof("message") == "rejected" for r in drained(stream))
    finally:
        for stream in streams.values():
            stream.close()


def drained(stream: PlayStream) -> list[bot_pb2.PlayResponse]:
    """What `stream` was sent and not yet read."""
    out = []
    while not stream.responses.empty():
        item = stream.responses.get()
        if not isinstance(item, grpc.RpcError):
            out.append(item)
    return out


def test_an_answer_for_a_match_the_bot_is_not_in_is_permission_denied(service):
    a_id, a_token = service.register("a")
    b_id, _ = service.register("b")
    c_id, c_token = service.register("c")
    m = plain.create_match([a_id, b_id], seed=1, sessions=service.sessions,
                           config=service.config)
    stream = PlayStream(service.channel, c_token)
    try:
        stream.next("welcome")
        stream.answer(m.id, 0, engine.Match(1, "soft").legal_actions()[0], "x1")
        rejected = stream.next("rejected").rejected
        assert rejected.code == "PERMISSION_DENIED", rejected
        assert f"match {m.id}" in rejected.message
        # the same as SubmitAction says for it, and nothing was applied
        assert plain.get_match(m.id, sessions=service.sessions).seq == 0
    finally:
        stream.close()


def test_stream_limits_per_bot_and_per_peer(database):
    from dataclasses import replace

    config = replace(CONFIG, max_play_streams=2, max_watch_streams=2)
    with running_service(database, config) as service:
        a_id, a_token = service.register("a")
        b_id, _ = service.register("b")
        m = plain.create_match([a_id, b_id], seed=1, sessions=service.sessions, config=config)
        streams = [PlayStream(service.channel, a_token) for _ in range(2)]
        for s in streams:
            s.next("welcome")
        extra = PlayStream(service.channel, a_token)
        with pytest.raises(grpc.RpcError) as info:
            extra.next("welcome")
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "2 at most" in (info.value.details() or "")
        streams[0].close()
        time.sleep(0.3)
        again = PlayStream(service.channel, a_token)  # one closed: one more is let in
        again.next("welcome")
        # spectators: per peer address (all of these come from 127.0.0.1)
        stub = match_pb2_grpc.MatchServiceStub(service.channel)
        watches = [stub.WatchMatch(match_pb2.WatchMatchRequest(match_id=m.id))
                   for _ in range(3)]
        time.sleep(1.0)  # (a spectator of a match without actions is sent nothing yet)
        refused = [w for w in watches
                   if w.done() and w.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
        assert len(refused) == 1, [w.code() for w in watches if w.done()]
        for w in watches:
            w.cancel()
        for s in (streams[1], again):
            s.close()


def test_the_webs_credential_has_its_own_watch_limit_for_its_socket_tier(database):
    """The socket tier holds one WatchMatch stream per followed match for all its spectators, on
    the web's credential: those count against BUMMERL_MAX_WEB_WATCH_STREAMS, apart from the
    public's per-address limit, which a wrong token does not escape."""
    from dataclasses import replace

    from db.settings import sha256

    config = replace(CONFIG, max_watch_streams=1, max_web_watch_streams=3,
                     web_token_sha256=sha256("the-web"))
    with running_service(database, config) as service:
        a_id, _ = service.register("a")
        b_id, _ = service.register("b")
        m = plain.create_match([a_id, b_id], seed=1, sessions=service.sessions, config=config)
        stub = match_pb2_grpc.MatchServiceStub(service.channel)

        def watch(metadata=()):  # type: ignore[no-untyped-def]
            return stub.WatchMatch(match_pb2.WatchMatchRequest(match_id=m.id), metadata=metadata)

        calls = [watch(auth("the-web")) for _ in range(4)] + [watch(), watch(auth("not-it"))]
        time.sleep(1.0)  # (a spectator of a match without actions is sent nothing yet)
        refused = [c for c in calls
                   if c.done() and c.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
        # (the calls race: which one comes last is the server's to see)
        web, public = [c for c in refused if c in calls[:4]], [c for c in refused
                                                                 if c in calls[4:]]
        assert len(web) == 1 and len(public) == 1, [c.details() for c in refused]
        assert "3 at most" in (web[0].details() or "")  # the web's own limit: 3
        assert "1 at most" in (public[0].details() or "")  # the wrong token is the public's
        for c in calls:
            c.cancel()


def test_a_hook_that_blocks_delays_neither_the_submit_nor_the_turns(service):
    remote_id, token = service.register("remote")
    other_id, other_token = service.register("other")
    house, _ = bots.register_bot("house-x", kind="house", house_strategy="random",
                                 sessions=service.sessions)
    calls: list[tuple] = []

    def stuck(*args: object) -> None:  # as enqueuing on a dead broker
        calls.append(args)
        time.sleep(5)

    hooks.on_turn.append(stuck)
    hooks.on_match_end.append(stuck)
    try:
        seed = first_to_act(1)
        m = plain.create_match([house.id, remote_id], seed=seed, sessions=service.sessions,
                               config=service.config)
        action = engine.Match(seed, "soft").legal_actions()[0]
        started = time.perf_counter()
        reply = submit(service, m.id, 1, token, action, 0)  # hands the turn to the house bot
        assert time.perf_counter() - started < 2.0
        assert reply.seq == 0
        # a remote-vs-remote match created meanwhile is played with pushed turns
        stream = PlayStream(service.channel, other_token)
        try:
            stream.next("welcome")
            seed2 = first_to_act(0)
            created = time.perf_counter()
            m2 = service.matches.CreateMatch(match_pb2.CreateMatchRequest(
                bot_ids=[other_id, remote_id], seed=seed2),
                metadata=auth("operator-secret")).match
            turn = stream.next("turn", timeout=5).turn
            assert turn.match_id == m2.match_id and time.perf_counter() - created < 2.0
        finally:
            stream.close()
    finally:
        assert dispatch.flush(30)
        hooks.on_turn.remove(stuck)
        hooks.on_match_end.remove(stuck)
    assert (m.id, 0, 1) in [c[:3] for c in calls]  # the hook did run, on a dispatcher thread


def test_the_fast_path_notices_a_row_changed_by_another_process(database):
    """Two engines on one database, as two processes: one's live row goes stale when the
    other records an illegal action; its next submit still counts that illegal action."""
    database.create_tables()
    here, there = database.sessions(), database.sessions()
    try:
        a, _ = bots.register_bot("a", sessions=here)
        b, _ = bots.register_bot("b", sessions=here)
        m = plain.create_match([a.id, b.id], seed=5, sessions=here, config=CONFIG)
        game = engine.Match(5, "soft")
        seat = game.to_act
        action = game.legal_actions()[0]
        actions.submit_action(m.id, seat, action, expected_seq=0, sessions=here, config=CONFIG)
        game.apply(seat, action)
        seat = game.to_act
        holding = set(game.observe(seat).hand)
        bad = engine.Action.play(next(c for c in engine.ALL_CARDS if c not in holding))
        with pytest.raises(Exception, match="illegal action 1"):
            actions.submit_action(m.id, seat, bad, expected_seq=1, sessions=there,
                                  config=CONFIG)
        good = game.legal_actions()[0]
        result = actions.submit_action(m.id, seat, good, expected_seq=1, request_id="g1",
                                       sessions=here, config=CONFIG)
        assert result.seq == 1 and result.match.seq == 2
        row = plain.get_match(m.id, sessions=there)
        assert row.seq == 2 and (row.illegal1 if seat else row.illegal0) == 1
        # idempotency and stale seqs, as always
        again = actions.submit_action(m.id, seat, good, expected_seq=1, request_id="g1",
                                      sessions=here, config=CONFIG)
        assert again.duplicate and again.seq == 1
        with pytest.raises(Aborted):
            actions.submit_action(m.id, 1 - seat, good, expected_seq=1, sessions=there,
                                  config=CONFIG)
    finally:
        here.kw["bind"].dispose()
        there.kw["bind"].dispose()


def test_a_play_answer_refused_at_its_commit_is_decided_again_and_applied(service):
    """A Play answer takes the fast path against the live row, but another process changed
    the row meanwhile (it counted an illegal action): the commit refuses it, the stream (which
    does not wait for the commit) hands the answer to the old path, which reads the row and
    applies it. The opponent gets its turn; the other process's count is kept."""
    from sqlalchemy import text

    a_id, a_token = service.register("a")
    b_id, b_token = service.register("b")
    seed = first_to_act(0)
    m = plain.create_match([a_id, b_id], seed=seed, sessions=service.sessions,
                           config=service.config)
    streams = [PlayStream(service.channel, token) for token in (a_token, b_token)]
    other = service.database.sessions()  # another process, on the same database
    try:
        turn = streams[0].next("turn").turn
        with other.kw["bind"].begin() as c:  # the live row of this process is stale now
            c.execute(text("UPDATE matches SET illegal0 = illegal0 + 1 WHERE id = :id"),
                      {"id": m.id})
        streams[0].answer(m.id, turn.seq, wire.action_from_pb(
            turn.observation.legal_actions[0]), request_id="x0")
        assert streams[1].next("turn", timeout=10).turn.seq == 1
        row = plain.get_match(m.id, sessions=other)
        assert row.seq == 1 and row.illegal0 == 1
    finally:
        for stream in streams:
            stream.close()
        other.kw["bind"].dispose()


def test_a_play_stream_with_an_unknown_token_is_unauthenticated(service):
    stream = PlayStream(service.channel, "not-a-token")
    with pytest.raises(grpc.RpcError) as info:
        stream.next("welcome")
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "RegisterBot" in (info.value.details() or "")


def test_a_change_heard_from_another_process_advances_the_cached_game(database):
    """What the change bus's listener does with a change of another replica: the cached game,
    one action behind, is advanced (no replay for the next action here); the live row is
    forgotten."""
    from services.core import cache
    from services.live import bus

    database.create_tables()
    here, there = database.sessions(), database.sessions()
    try:
        a, _ = bots.register_bot("a", sessions=here)
        b, _ = bots.register_bot("b", sessions=here)
        m = plain.create_match([a.id, b.id], seed=5, sessions=here, config=CONFIG)
        key = cache.bind_key(here.kw["bind"], m.id)
        assert cache.cached_game(key, 0) is not None
        game = engine.Match(5, "soft")
        seat, action = game.to_act, game.legal_actions()[0]
        result = actions.submit_action(m.id, seat, action, expected_seq=0, sessions=there,
                                       config=CONFIG)
        game.apply(seat, action)
        site = connections.site_of(here.kw["bind"])
        change = values.Change(site, values.MatchState.of(result.match), True,
                               (seat, str(action)))
        origin, heard = bus.decode(site, bus.encode(change, "elsewhere"))
        assert origin == "elsewhere" and heard == change
        bus.follow(heard)
        followed = cache.cached_game(key, 1)
        assert followed is not None and followed.observe(0) == game.observe(0)
        assert cache.live_row(key, 1) is None
        # the next action here goes through without a replay of the log
        seat, action = game.to_act, game.legal_actions()[0]
        statements = count_statements(here)
        actions.submit_action(m.id, seat, action, expected_seq=1, sessions=here, config=CONFIG)
        assert not [s for s in statements if "FROM actions" in s], statements
    finally:
        here.kw["bind"].dispose()
        there.kw["bind"].dispose()


def test_idle_play_streams_share_one_safety_net_read_and_catch_what_was_missed(service,
                                                                               monkeypatch):
    """Eight bots' Play streams, idle: one safety-net query a second for all of them (poll_s,
    no bus), not one per stream. A match made elsewhere without a word to this process (no
    bus) is found by it, and only the bot to act is sent its turn."""
    from services.live import notify

    tokens = [service.register(f"bot{i}") for i in range(8)]
    streams = [PlayStream(service.channel, token) for _, token in tokens]
    try:
        for stream in streams:
            stream.next("welcome")
        time.sleep(1.2)  # the first shared round is done
        statements = count_statements(service.sessions)
        time.sleep(2.5)
        reads = [s for s in statements if "FROM matches" in s and "deadline_at <" not in s]
        assert 1 <= len(reads) <= 4, reads
        seed = first_to_act(1)
        with monkeypatch.context() as quiet:  # as another process without a bus
            quiet.setattr(notify, "publish", lambda _change: None)
            m = plain.create_match([tokens[0][0], tokens[1][0]], seed=seed,
                                   sessions=service.database.sessions(),
                                   config=service.config)
        started = time.perf_counter()
        turn = streams[1].next("turn", timeout=5).turn
        assert turn.match_id == m.id and turn.seq == 0 and turn.seat == 1
        assert time.perf_counter() - started < 3  # within a round or two of the net
        with pytest.raises(Exception):  # noqa: B017  (queue.Empty: nothing for the others)
            streams[0].next("turn", timeout=1.5)
        # an action made elsewhere, quietly: the opponent's turn is found by the net too
        game = engine.Match(seed, "soft")
        action = game.legal_actions()[0]
        with monkeypatch.context() as quiet:
            quiet.setattr(notify, "publish", lambda _change: None)
            elsewhere = service.database.sessions()
            actions.submit_action(m.id, 1, action, expected_seq=0, sessions=elsewhere,
                                  config=service.config)
            elsewhere.kw["bind"].dispose()
        game.apply(1, action)
        turn = streams[0].next("turn", timeout=5).turn
        assert turn.match_id == m.id and turn.seq == 1
        assert wire.observation_from_pb(turn.observation) == game.observe(0)
    finally:
        for stream in streams:
            stream.close()


def test_a_refused_stream_that_never_writes_ends_after_the_refused_wait(database, monkeypatch):
    """BUMMERL_REFUSED_WAIT_S: a refused Play stream waits that long for the bot's Hello (a
    client that never writes one gets its status then), and at once once the Hello came."""
    from dataclasses import replace

    from db.settings import Settings

    monkeypatch.setenv("BUMMERL_REFUSED_WAIT_S", "0.25")
    assert Settings.from_env().refused_wait_s == 0.25
    for wait_s in (0.25, 3.0):
        with running_service(database, replace(CONFIG, refused_wait_s=wait_s)) as service:
            silent = PlayStream(service.channel, "not-a-token")
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as info:
                silent.next("welcome")
            took = time.monotonic() - started
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert wait_s - 0.1 <= took < wait_s + 2.0, (wait_s, took)
            greeted = PlayStream(service.channel, "not-a-token")
            greeted.requests.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="t")))
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as info:
                greeted.next("welcome")
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert time.monotonic() - started < 2.0
