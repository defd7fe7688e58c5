"""The group commit (services.core.appends): concurrent actions of different matches are appended in
one transaction (one commit); when the batch is refused (a row another process changed, a log
row already there) the others still commit and the refused one gets the answer it would have
had alone; idempotent retries and stale seqs are answered as before. SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from servicekit import CONFIG, fresh_database, statements_run
from sqlalchemy import Engine, event, select, text
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.models import ActionLog, Match
from services.core import actions, appends, cache, committers, matches, store
from services.core.errors import Aborted, InvalidArgument
from services.ops import bots


@pytest.fixture
def database(database):  # the conftest's, with every table made (no service here)
    database.create_tables()
    return database


@dataclass
class Game:
    match_id: int
    game: engine.Match  # the engine's state as the service has it (after the first action)
    bot_ids: tuple[int, int]

    def next(self) -> tuple[int, engine.Action]:
        seat = self.game.to_act
        assert seat is not None
        return seat, next(x for x in self.game.legal_actions()
                          if x.kind == engine.ActionKind.PLAY)


def started(sessions: sessionmaker[Session], count: int) -> list[Game]:
    """`count` matches with one action each (so this process has their live rows)."""
    a, _ = bots.register_bot("a", sessions=sessions)
    b, _ = bots.register_bot("b", sessions=sessions)
    out = []
    for seed in range(count):
        m = matches.create_match([a.id, b.id], seed=seed, sessions=sessions, config=CONFIG)
        g = Game(m.id, engine.Match(seed, m.profile), (a.id, b.id))
        seat, action = g.next()
        actions.submit_action(m.id, seat, action, expected_seq=0, request_id=f"s{m.id}",
                              sessions=sessions, config=CONFIG)
        g.game.apply(seat, action)
        out.append(g)
    return out


@contextmanager
def committer_held(bind: Engine, waiting: int) -> Iterator[committers.GroupCommit]:
    """Keep the committer busy until `waiting` actions are handed to it (as when they arrive
    while it commits), then let it go: they make one batch."""
    committer = committers.committer(bind)
    go = threading.Event()
    committer.executor.submit(go.wait)
    try:
        yield committer
        limit = time.monotonic() + 10
        while len(committer.pending) < waiting:
            assert time.monotonic() < limit, len(committer.pending)
            time.sleep(0.005)
    finally:
        go.set()


def one_batch(bind: Engine) -> dict[str, int]:
    """What `counting` sees of one batch: on PostgreSQL one statement (the log rows, the
    hands, the match rows) that commits itself; elsewhere the log rows, the match rows and a
    commit."""
    if bind.dialect.name == "postgresql":
        return {"statements": 1, "commits": 1}
    return {"statements": 2, "commits": 1}


@contextmanager
def counting(bind: Engine) -> Iterator[dict[str, int]]:
    """The statements and commits run on `bind` inside the block (on PostgreSQL a batch is one
    statement in autocommit mode, which commits itself: counted as its commit)."""
    counts = {"statements": 0, "commits": 0}

    def commit(*_args) -> None:  # type: ignore[no-untyped-def]
        counts["commits"] += 1

    event.listen(bind, "commit", commit)
    try:
        with statements_run(bind) as statements:
            yield counts
            counts["statements"] = len(statements)
            counts["commits"] += statements.count(appends.PG_BATCH)
    finally:
        event.remove(bind, "commit", commit)


def logged(sessions: sessionmaker[Session], match_id: int) -> list[str]:
    with sessions() as s:
        return list(s.scalars(select(ActionLog.action).where(
            ActionLog.match_id == match_id).order_by(ActionLog.seq)))


def test_concurrent_submits_of_different_matches_share_one_commit(database):
    sessions = database.sessions()
    bind = sessions.kw["bind"]
    try:
        games = started(sessions, 4)
        site = "test"
        with counting(bind) as counts:
            with committer_held(bind, len(games)) as committer:
                batches = committer.batches
                futures: list[Future[actions.SubmitResult | None]] = []
                for g in games:  # as the Play streams do, on the event loop: no waiting
                    seat, action = g.next()
                    future = actions.submit_live(
                        g.match_id, seat, action, expected_seq=1, request_id=f"r{g.match_id}",
                        bot_id=g.bot_ids[seat], site=site, sessions=sessions, config=CONFIG)
                    assert future is not None
                    futures.append(future)
                    g.game.apply(seat, action)
                # a stream that ends meanwhile cannot cancel the commit, nor its finishing
                assert not futures[0].cancel()
            results = [f.result(10) for f in futures]
        assert all(r is not None and r.seq == 1 and r.match.seq == 2 for r in results)
        assert committer.batches == batches + 1
        # one transaction for the four: the log rows, the match rows, one commit
        assert counts == one_batch(bind), counts
        for g in games:
            assert logged(sessions, g.match_id) == [str(a) for _, a in g.game.history]
            state = matches.match_states_of(g.bot_ids[0], sessions=sessions)
            assert {m.id: m.seq for m in state}[g.match_id] == 2
        # the next actions take the fast path again (the live rows and games moved on)
        g = games[0]
        seat, action = g.next()
        with counting(bind) as counts:
            actions.submit_action(g.match_id, seat, action, expected_seq=2, sessions=sessions,
                                  config=CONFIG)
        assert counts == one_batch(bind), counts
    finally:
        bind.dispose()


def test_a_refused_item_of_a_batch_gets_its_own_answer_and_the_others_commit(database, caplog):
    """Match x: another process counted an illegal action of x meanwhile (the guarded update
    of the live row fails; alone, the row is read again and the action applies). Match y:
    another process appended y's action at that seq (alone: ABORTED, stale). The others of
    the batch commit. Nothing is logged as a warning: a refused batch is ordinary."""
    sessions = database.sessions()
    bind = sessions.kw["bind"]
    try:
        games = started(sessions, 4)
        x, y = games[1], games[2]
        answers: dict[int, object] = {}

        def submit(g: Game, seat: int, action: engine.Action) -> None:
            try:
                answers[g.match_id] = actions.submit_action(
                    g.match_id, seat, action, expected_seq=1, request_id=f"q{g.match_id}",
                    bot_id=g.bot_ids[seat], sessions=sessions, config=CONFIG)
            except Exception as e:  # noqa: BLE001  (the answer under test)
                answers[g.match_id] = e

        with committer_held(bind, len(games)) as committer:
            batches = committer.batches
            threads = []
            for g in games:
                seat, action = g.next()
                threads.append(threading.Thread(target=submit, args=(g, seat, action)))
                threads[-1].start()
                if g is not y:
                    g.game.apply(seat, action)
            limit = time.monotonic() + 10
            while len(committer.pending) < len(games):
                assert time.monotonic() < limit
                time.sleep(0.005)
            other = database.sessions()  # another process, on the same database
            with other.kw["bind"].begin() as c:
                c.execute(text("UPDATE matches SET illegal0 = illegal0 + 1 WHERE id = :id"),
                          {"id": x.match_id})
                seat, action = y.next()
                played = next(a for a in y.game.legal_actions() if a != action)
                c.execute(text(
                    "INSERT INTO actions (match_id, seq, seat, action, request_id, created_at) "
                    "VALUES (:m, 1, :seat, :action, 'other', CURRENT_TIMESTAMP)"),
                    {"m": y.match_id, "seat": seat, "action": str(played)})
                c.execute(text("UPDATE matches SET seq = 2, to_act = :next WHERE id = :id"),
                          {"id": y.match_id, "next": 1 - seat})
            other.kw["bind"].dispose()
        for t in threads:
            t.join(20)
        assert committer.batches == batches  # the batch was rolled back
        for g in games:
            answer = answers[g.match_id]
            if g is y:
                assert isinstance(answer, Aborted), answer
                assert "stale expected_seq 1" in str(answer)
                assert logged(sessions, y.match_id)[1] == str(played)
                continue
            assert isinstance(answer, actions.SubmitResult), (g.match_id, answer)
            assert answer.seq == 1 and not answer.duplicate
            assert logged(sessions, g.match_id) == [str(a) for _, a in g.game.history]
        with sessions() as s:
            assert s.get(Match, x.match_id).illegal0 == 1  # another process's count kept
        # idempotency unchanged: a retry is recognised; a stale seq is refused
        g = games[0]
        seat, action = g.game.history[1]
        again = actions.submit_action(g.match_id, seat, action, expected_seq=1,
                                      request_id=f"q{g.match_id}", sessions=sessions,
                                      config=CONFIG)
        assert again.duplicate and again.seq == 1
        with pytest.raises(Aborted, match="stale expected_seq 1"):
            actions.submit_action(g.match_id, seat, action, expected_seq=1,
                                  request_id="new", sessions=sessions, config=CONFIG)
        assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    finally:
        bind.dispose()


def test_a_batch_with_one_moved_on_match_row_commits_nothing_of_itself(database):
    """Only the guard of the match rows refuses the batch (no unique key does): another
    process counted an illegal action of match x meanwhile. Nothing of the batch is committed
    (on PostgreSQL the batch's one statement fails on its guard, not after it), and then each
    action commits alone: x's on its row as it is now."""
    sessions = database.sessions()
    bind = sessions.kw["bind"]
    try:
        games = started(sessions, 3)
        x = games[1]
        futures = []
        with committer_held(bind, len(games)) as committer:
            batches = committer.batches
            for g in games:
                seat, action = g.next()
                futures.append(actions.submit_live(
                    g.match_id, seat, action, expected_seq=1, request_id=f"v{g.match_id}",
                    bot_id=g.bot_ids[seat], site="test", sessions=sessions, config=CONFIG))
                g.game.apply(seat, action)
            other = database.sessions()  # another process, on the same database
            with other.kw["bind"].begin() as c:
                c.execute(text("UPDATE matches SET illegal0 = illegal0 + 1 WHERE id = :id"),
                          {"id": x.match_id})
            other.kw["bind"].dispose()
        results = [f.result(10) if f is not None else "no future" for f in futures]
        assert committer.batches == batches  # the batch was refused as a whole
        assert results[1] is None  # x: refused alone too; the caller takes the old path
        assert all(isinstance(r, actions.SubmitResult) for r in results[::2]), results
        assert logged(sessions, x.match_id) == [str(a) for _, a in x.game.history[:1]]
        seat, action = x.game.history[1]
        again = actions.submit_action(x.match_id, seat, action, expected_seq=1,
                                      request_id=f"v{x.match_id}", bot_id=x.bot_ids[seat],
                                      sessions=sessions, config=CONFIG)
        assert again.seq == 1 and not again.duplicate
        with sessions() as s:
            for g in games:
                assert logged(sessions, g.match_id) == [str(a) for _, a in g.game.history]
                m = s.get(Match, g.match_id)
                assert m is not None and m.seq == 2
            assert s.get(Match, x.match_id).illegal0 == 1  # the other process's count kept
    finally:
        bind.dispose()


def test_a_reused_request_id_in_a_batch_is_answered_as_alone(database):
    """One item of the batch reuses a request_id its seat used before in its match (the log's
    unique index, per match and seat, refuses the whole batch): the others commit, it gets
    InvalidArgument as it would alone."""
    sessions = database.sessions()
    bind = sessions.kw["bind"]
    try:
        games = started(sessions, 3)
        first = games[0]
        ids = {first.game.history[0][0]: f"s{first.match_id}"}  # each seat's id so far
        seat, action = first.next()
        actions.submit_action(first.match_id, seat, action, expected_seq=1,
                              request_id=f"t{first.match_id}", sessions=sessions,
                              config=CONFIG)
        first.game.apply(seat, action)
        ids[seat] = f"t{first.match_id}"
        futures = []
        with committer_held(bind, len(games)):
            for g in games:
                seat, action = g.next()
                reused = ids[seat] if g is first else None
                futures.append(actions.submit_live(
                    g.match_id, seat, action, expected_seq=len(g.game.history),
                    request_id=reused, bot_id=g.bot_ids[seat], site="test",
                    sessions=sessions, config=CONFIG))
                if g is not first:
                    g.game.apply(seat, action)
        results = [f.result(10) if f is not None else "no future" for f in futures]
        assert results[0] is None  # refused: the caller runs submit_action, as Play does
        assert all(isinstance(r, actions.SubmitResult) and r.seq == 1 for r in results[1:])
        seat, action = first.next()
        with pytest.raises(InvalidArgument, match="already used"):
            actions.submit_action(first.match_id, seat, action, expected_seq=2,
                                  request_id=ids[seat], bot_id=first.bot_ids[seat],
                                  sessions=sessions, config=CONFIG)
        for g in games:
            assert logged(sessions, g.match_id) == [str(a) for _, a in g.game.history]
    finally:
        bind.dispose()


def test_an_action_waiting_for_its_commit_is_seen_by_no_reader(database):
    """While an applied action waits for the committer, the game object (already past it) is
    out of the cache: a reader at the committed seq rebuilds the committed state, never the
    uncommitted one; after the commit the cache holds the game at the new seq."""
    sessions = database.sessions()
    bind = sessions.kw["bind"]
    try:
        (g,) = started(sessions, 1)
        key = cache.bind_key(bind, g.match_id)
        assert cache.cached_game(key, 1) is not None
        seat, action = g.next()
        with committer_held(bind, 1):
            future = actions.submit_live(
                g.match_id, seat, action, expected_seq=1, request_id="w", site="test",
                bot_id=g.bot_ids[seat], sessions=sessions, config=CONFIG)
            assert future is not None
            assert cache.cached_game(key, 1) is None
            assert cache.cached_game(key, 2) is None
            state = {m.id: m for m in matches.match_states_of(g.bot_ids[0], sessions=sessions)}
            committed = state[g.match_id]
            assert committed.seq == 1
            with bind.connect() as connection:  # a reader without the match's lock
                rebuilt = store.game_of(connection, committed)
            assert rebuilt.observe(seat) == g.game.observe(seat)
        assert future.result(10) is not None
        g.game.apply(seat, action)
        cached = cache.cached_game(key, 2)
        assert cached is not None and cached.observe(seat) == g.game.observe(seat)
    finally:
        bind.dispose()


def test_on_the_event_loop_a_batch_is_finished_with_one_wake_up(database):
    """Submitted from an event loop (as the Play streams do), the batch's commits are finished
    and announced on that loop, all of them in one callback: one wake-up of the loop per batch,
    not one per action (each costs a context switch and a fight for the GIL). On PostgreSQL
    the loop commits the batch itself (committers.LoopCommit): one statement, no wake-up."""
    import asyncio

    from prometheus_client import REGISTRY

    from services.live import notify

    def commit_metrics() -> tuple[float, float]:  # (group commits, their actions) so far
        return (REGISTRY.get_sample_value("bummerl_commit_actions_count") or 0.0,
                REGISTRY.get_sample_value("bummerl_commit_actions_sum") or 0.0)

    sessions = database.sessions()
    bind = sessions.kw["bind"]
    on_loop = bind.dialect.name == "postgresql"
    try:
        games = started(sessions, 4)
        before = commit_metrics()
        loop = asyncio.new_event_loop()
        wakeups = 0
        threadsafe = loop.call_soon_threadsafe

        def counted(*args):  # type: ignore[no-untyped-def]
            nonlocal wakeups
            wakeups += 1
            return threadsafe(*args)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        heard: list[tuple[int, int]] = []  # (match id, thread) of each announced change
        unsubscribe = [notify.subscribe(notify.key("test", "match", g.match_id),
                                        lambda c: heard.append((c.match.id,
                                                                threading.get_ident())))
                       for g in games]

        def submit(g: Game) -> asyncio.Future[actions.SubmitResult | None]:
            seat, action = g.next()
            future = actions.submit_live(
                g.match_id, seat, action, expected_seq=1, request_id=None,
                bot_id=g.bot_ids[seat], site="test", sessions=sessions, config=CONFIG,
                loop=loop)
            assert isinstance(future, asyncio.Future)
            g.game.apply(seat, action)
            return future

        async def submit_all() -> list[actions.SubmitResult | None]:
            nonlocal wakeups
            if on_loop:
                # the first opens the loop's connection (its parameters read on a thread: one
                # wake-up, once); the others, handed over in one step of the loop: one batch
                first = await asyncio.wait_for(submit(games[0]), 10)
                wakeups = 0
                futures = [submit(g) for g in games[1:]]
                return [first, *await asyncio.wait_for(asyncio.gather(*futures), 10)]
            else:
                with committer_held(bind, len(games)):
                    futures = [submit(g) for g in games]
            return list(await asyncio.wait_for(asyncio.gather(*futures), 10))

        try:
            results = loop.run_until_complete(submit_all())
            loop_thread = threading.get_ident()  # run_until_complete runs it on this thread
            if on_loop:
                assert committers.committer(bind).on_loop(loop).batches == 1
                loop.run_until_complete(committers.close_loop(bind))
        finally:
            for u in unsubscribe:
                u()
            loop.close()
        assert all(r is not None and r.seq == 1 for r in results)
        assert wakeups == (0 if on_loop else 1)
        # each group commit is timed and counted (bummerl_commit_seconds, _actions)
        commits, committed = (a - b for a, b in zip(commit_metrics(), before, strict=True))
        assert (commits, committed) == ((2, 4) if on_loop else (1, 4))
        assert (REGISTRY.get_sample_value("bummerl_commit_seconds_count") or 0) >= commits
        assert sorted(m for m, _ in heard) == sorted(g.match_id for g in games)
        assert {t for _, t in heard} == {loop_thread}
        for g in games:
            assert logged(sessions, g.match_id) == [str(a) for _, a in g.game.history]
    finally:
        bind.dispose()


def test_whole_matches_in_batches_store_every_hand_and_the_result(database):
    """Four matches played to their end with every action of a round in one batch: the log,
    the hands (ended and begun inside batches) and the final match rows are what the engine
    says (on PostgreSQL the batch goes as one array per column)."""
    from db.models import Hand

    sessions = database.sessions()
    bind = sessions.kw["bind"]
    try:
        games = started(sessions, 4)
        seqs = {g.match_id: 1 for g in games}
        while any(not g.game.is_over for g in games):
            running = [g for g in games if not g.game.is_over]
            with committer_held(bind, len(running)) as committer:
                futures = []
                for g in running:
                    seat, action = g.next() if any(
                        a.kind == engine.ActionKind.PLAY for a in g.game.legal_actions()) \
                        else (g.game.to_act, g.game.legal_actions()[0])
                    assert seat is not None
                    futures.append(actions.submit_live(
                        g.match_id, seat, action, expected_seq=seqs[g.match_id],
                        request_id=None, bot_id=g.bot_ids[seat], site="test",
                        sessions=sessions, config=CONFIG))
                    g.game.apply(seat, action)
                    seqs[g.match_id] += 1
                batches = committer.batches
            results = [f.result(10) if f is not None else None for f in futures]
            assert all(r is not None for r in results), results
            if len(running) > 1:
                assert committer.batches == batches + 1
        with sessions() as s:
            for g in games:
                assert logged(sessions, g.match_id) == [str(a) for _, a in g.game.history]
                m = s.get(Match, g.match_id)
                assert m is not None and m.state == "finished" and m.to_act is None
                assert m.seq == len(g.game.history)
                assert (m.counter0, m.counter1) == tuple(g.game.counters)
                assert m.winner == g.game.winner
                hands = list(s.scalars(select(Hand).where(Hand.match_id == g.match_id)
                                       .order_by(Hand.number)))
                assert len(hands) == len(g.game.results)
                first = 0
                for hand, result in zip(hands, g.game.results, strict=True):
                    assert hand.first_seq == first
                    assert (hand.winner, hand.game_points, hand.reason) == (
                        result.winner, result.game_points, result.reason.value)
                    assert (hand.points0, hand.points1) == tuple(result.points)
                    assert (hand.tricks0, hand.tricks1) == tuple(result.tricks)
                    assert hand.last_seq is not None and hand.finished_at is not None
                    first = hand.last_seq + 1
                assert first == m.seq
    finally:
        bind.dispose()


def test_a_stopped_event_loop_does_not_stop_the_match(database):
    """The committer settles an action on its own thread (live row, cache, the match's lock);
    if the loop it was handed over from is not running (a server stopped in this process),
    the answer and the announcement are given on the committer's thread too, and the match
    goes on (before, its lock stayed taken and the next submit waited for ever)."""
    import asyncio

    from services.core import cache

    sessions = database.sessions()
    bind = sessions.kw["bind"]
    loop = asyncio.new_event_loop()  # never run: as a server's loop after it stopped
    try:
        (g,) = started(sessions, 1)
        seat, action = g.next()
        future = actions.submit_live(
            g.match_id, seat, action, expected_seq=1, request_id=None, bot_id=g.bot_ids[seat],
            site="test", sessions=sessions, config=CONFIG, loop=loop)
        assert future is not None
        g.game.apply(seat, action)
        key = cache.bind_key(bind, g.match_id)
        limit = time.monotonic() + 10
        while not future.done():
            assert time.monotonic() < limit, "the action was not answered"
            time.sleep(0.01)
        assert future.result().seq == 1
        assert cache.live_row(key, 2) is not None
        holder = cache.try_lock(key)
        assert holder is not None, "the match's lock is still taken"
        holder.lock.release()
        seat, action = g.next()  # the match goes on, on the fast path
        with counting(bind) as counts:
            result = actions.submit_action(g.match_id, seat, action, expected_seq=2,
                                           sessions=sessions, config=CONFIG)
        assert result.seq == 2 and counts == one_batch(bind), counts
    finally:
        loop.close()
        bind.dispose()


@pytest.mark.postgres
def test_the_array_literals_of_a_postgres_batch_round_trip_exactly(request, tmp_path):
    """What the PostgreSQL batch sends as array literals (`appends._array`) reads back as the
    values themselves: texts with quotes, backslashes, braces, commas, spaces and non-ASCII;
    NULLs; booleans; times to the microsecond (naive ones taken as UTC), through the same
    expression the statements use."""
    from datetime import UTC, datetime

    texts = ['pl"ain', "back\\slash", "{braces}", "a,b", " spaced ", "NULL", "", "Schnapsen ♠ü",
             None]
    times = [datetime(2026, 12, 1, 13, 50, 16, 123456, tzinfo=UTC),
             datetime(1999, 1, 2, 3, 4, 5, 1, tzinfo=UTC), None,
             datetime(2030, 6, 7, 8, 9, 10, 999999)]
    with fresh_database("postgres", request, tmp_path) as database:
        bind = database.sessions().kw["bind"]
        with bind.connect() as c:
            got_texts = c.execute(text("SELECT unnest(CAST(:a AS varchar[]))"),
                                  {"a": appends._array("text", texts)}).scalars().all()
            got_times = c.execute(text(
                "SELECT " + appends._TIME.format("t") + " FROM unnest(CAST(:a AS bigint[])) AS t"),
                {"a": appends._array("time", times)}).scalars().all()
            got_bools = c.execute(text("SELECT unnest(CAST(:a AS boolean[]))"),
                                  {"a": appends._array("bool", [True, False, None])}
                                  ).scalars().all()
            got_ints = c.execute(text("SELECT unnest(CAST(:a AS integer[]))"),
                                 {"a": appends._array("int", [3, None, -7])}).scalars().all()
        bind.dispose()
    assert got_texts == texts
    assert got_times == [None if t is None else t if t.tzinfo else t.replace(tzinfo=UTC)
                         for t in times]
    assert got_bools == [True, False, None]
    assert got_ints == [3, None, -7]
