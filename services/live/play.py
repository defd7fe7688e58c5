"""One bot's Play stream: which turns, hand ends and match ends to send, and its answers.

Push, not poll: every committed change of one of the bot's matches, made in this process or
heard on the change bus (`services.live.notify`, `services.live.bus`), reaches the stream as
the match's new summary, and the stream sends what the bot has not been sent yet: the next
turn goes out as soon as the previous action is committed, whoever made it, without reading
the database.

The stream is also level-triggered, as a safety net: when it opens, after the bus reconnects,
after a refused answer, and when the server's one safety-net query for all Play streams
(`services.live.watchers.Players`, every `Settings.safety_s` seconds, `poll_s` while no change bus
is heard) finds something it missed, it re-reads the bot's running matches from the database
and sends what is missing, so a reconnecting bot (or a restarted server) simply gets its
pending turns again.

What the stream takes (`db.presence`): the bot's Hello may say challenges only (the ladder and
tournaments leave it out, and the stream is given only challenges, operators' matches and
version tests' legs: `values.seat_for`, which also gives a match made for one version of the
bot only to that version's streams), and a Drain says no new match at all. The stream waits up to
`HELLO_WAIT_S` for the Hello before it records itself in the presence (so a challenges-only
bot is never, even briefly, the ladder's), then sends the Welcome. A Drain is recorded in the
presence first and answered with `Draining`, listing the bot's running matches: a pairing or a
challenge decided before is in that list or was refused (`services.core.matches` checks what the
bots take under a lock of their rows).

The stream runs as an asyncio task of the server's event loop; its database work runs on the
server's thread pool. What a stream does when it opens and closes (its presence written, its
running matches first read) is batched with the other streams opening meanwhile
(`services.live.batches.Connects`): a burst of connects costs a statement per batch, not per
stream.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from bummerl import protocol, wire
from bummerl.v1 import bot_pb2, common_pb2, match_pb2
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.models import ACCEPTS_ALL, ACCEPTS_CHALLENGES, ACCEPTS_NONE, RUNNING, Bot, Match
from db.settings import Settings, settings
from services.core import (
    actions,
    breaker,
    cache,
    clocks,
    connections,
    failures,
    matches,
    metrics,
    values,
)
from services.core.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
    RefusedRequest,
    ServiceError,
)
from services.live import bus, convert, notify, people_presence
from services.live.batches import Connects
from services.live.presence import Presence

log = logging.getLogger(__name__)
FULL = object()  # an event: read the database
STOP = object()  # an event: end the stream
DOWN = object()  # an event: the database's breaker opened (services.core.breaker)
BACK = object()  # an event: it closed
DOWN_MESSAGE = ("the service cannot reach its database: answers are refused with UNAVAILABLE "
                "until it is back; stay connected: this stream stays open, and your pending "
                "turns come again as soon as the database is back")
BACK_MESSAGE = "the database is back: your pending turns follow"
HELLO_WAIT_S = 0.5  # how long a new stream waits for the bot's Hello before its Welcome


class Events:
    """A stream's events, read by its one writer (`responses`): an asyncio.Queue's
    `put_nowait`, `get`, `get_nowait` and `empty`, on the loop only (other threads hand theirs
    over with `call_soon_threadsafe`). Bound to its loop once: an asyncio.Queue looks its loop
    up at every wait (`asyncio.get_running_loop`, which calls getpid() each time in CPython
    3.11: 4 % of the loop's busy time, py-spy --gil --native), a Play stream waits once per
    turn."""

    __slots__ = ("loop", "items", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: collections.deque[object] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: object) -> None:
        self.items.append(item)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return not self.items

    def get_nowait(self) -> object:
        if not self.items:
            raise asyncio.QueueEmpty
        return self.items.popleft()

    async def get(self) -> object:
        while not self.items:
            self.waiter = self.loop.create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        return self.items.popleft()


class PlaySession:
    def __init__(self, bot: Bot, sessions: sessionmaker[Session] | None,
                 config: Settings | None, run: Callable[..., Any],
                 connects: Connects | None = None) -> None:
        self.bot = bot
        self.connects = connects  # the server's batched writes and reads of a connect
        self.bot_id: int = bot.id  # read on every action: a plain int, not the ORM attribute
        self.sessions = sessions
        self.config = config or settings()
        self.run = run  # runs a blocking function on the server's pool: `await run(f, *args)`
        self.bind = connections.bound_engine(sessions)
        self.site = connections.site_of(self.bind)
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()  # the loop's thread
        self.events = Events(self.loop)
        self.sent: dict[int, int] = {}  # match id -> seq of the turn last sent
        self.known: dict[int, int] = {}  # match id -> hand number last reported
        self.seats: dict[int, int] = {}  # match id -> the bot's seat
        self.seen: dict[int, tuple[int, bool]] = {}  # match id -> newest (seq, over) handled
        self.slow: set[asyncio.Task[None]] = set()  # refused fast-path answers, on the pool
        self.breaker = breaker.of(self.bind)
        self.told_down = False  # the bot was told the database is down (once per outage)
        self.stale = False  # a read was skipped or failed in an outage: read when it is back
        self.challenges_only = False  # the Hello said so
        # Hello.accepts_people, as the service took it
        self.accepts_people: common_pb2.AcceptsPeople = \
            common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED
        # The version the bot's first Hello said this stream runs ("" if none): in a version
        # test's match, a seat with a version is this stream's only if it is this one.
        self.version = ""
        self.instance = ""  # the program the first Hello named (Hello.instance), "" if none
        # why the stream is refused: its first Hello's protocol is older than the service's
        # oldest (then it is never recorded in the presence, and ends after a Notice)
        self.refusal: str | None = None
        # What the latest Hello said ("" none; None: no Hello yet), recorded as the bot's
        # version (`bots.version`), and the version last written to the bot's row.
        self.hello_version: str | None = None
        self.version_written: str | None = None
        # a hosted version's container (db.hosted): its version, whatever its Hello says
        self.hosted_version: str | None = bot.hosted_version
        if self.hosted_version:
            self.version = self.hello_version = self.hosted_version
        self.draining = False  # a Drain came: no new match for the bot
        self.greeted = asyncio.Event()  # the bot's first message came, or its side ended
        self.presence: Presence | None = None
        self.presence_key: int | None = None  # this stream's, once recorded in `presence`
        self.recorded = asyncio.Event()
        self.presence_lock = asyncio.Lock()
        self.chores: set[asyncio.Task[None]] = set()  # drains being recorded
        self.heard = asyncio.Event()  # the change bus listens to the bot's channel
        self.unsubscribe = notify.subscribe(
            notify.key(self.site, "bot", bot.id), self.changed, on_ready=self._bus_ready)
        self.unlisten = self.breaker.listen(self._database)

    def changed(self, change: values.Change | None) -> None:
        """A change of one of the bot's matches (any thread; most come on the loop's own,
        from the group commit, and need no wake-up of the loop)."""
        event = FULL if change is None else change
        if threading.get_ident() == self.thread:
            self.events.put_nowait(event)
        else:
            self.loop.call_soon_threadsafe(self.events.put_nowait, event)

    def _bus_ready(self) -> None:
        """The change bus listens to the bot's channel (any thread; at once, on the loop, where
        there is no bus)."""
        if threading.get_ident() == self.thread:
            self.heard.set()
        else:
            self.loop.call_soon_threadsafe(self.heard.set)

    def _database(self, opened: bool) -> None:
        """The breaker opened or closed (the health check's thread)."""
        self.loop.call_soon_threadsafe(self.events.put_nowait, DOWN if opened else BACK)

    def close(self) -> None:
        self.unsubscribe()
        self.unlisten()
        for chore in list(self.chores):
            chore.cancel()

    @property
    def accepts(self) -> str:
        """What this stream takes now (`db.models.ACCEPTS_*`)."""
        if self.draining:
            return ACCEPTS_NONE
        return ACCEPTS_CHALLENGES if self.challenges_only else ACCEPTS_ALL

    async def greet(self, presence: Presence, wait_s: float = HELLO_WAIT_S) -> None:
        """Wait (at most `wait_s`) for the bot's first message, then record the stream in
        `presence` with what it takes."""
        if not self.greeted.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.greeted.wait(), wait_s)
        self.presence = presence
        await self.record()

    async def record(self) -> bool:
        """Write what this stream takes to the presence (opening it there the first time);
        False if the write failed."""
        if self.presence is None or self.refusal is not None:
            return True  # `greet` records it; a refused stream is never recorded
        async with self.presence_lock:
            # the bot's version: a stream that opens says it (none said: ""), a later Hello
            # only if it says another
            version: str | None = "" if self.hello_version is None else self.hello_version
            if self.presence_key is not None and version == self.version_written:
                version = None
            if self.presence_key is None:
                # the key first: if the call ends while this waits, `closed` still pairs up
                self.presence_key = self.presence.new_key()
                if self.connects is not None:  # with the other streams opening meanwhile
                    await self.connects.opened(
                        (self.bot_id, self.accepts, self.presence_key, version))
                else:
                    await self.run(self.presence.opened, self.bot_id, self.accepts,
                                   self.presence_key, version)
                self.version_written = version
                self.recorded.set()
                return True
            done = bool(await self.run(self.presence.changed, self.bot_id, self.presence_key,
                                       self.accepts, version))
            if done and version is not None:
                self.version_written = version
            return done

    async def hello(self, hello: bot_pb2.Hello) -> None:
        first = not self.greeted.is_set()
        self.challenges_only = hello.challenges_only
        if hello.accepts_people or (first and self.bot.accepts_people):  # (else no write)
            self.accepts_people = await self.run(people_presence.record_accepts, self.bot,
                                                 first, hello.accepts_people,
                                                 sessions=self.sessions)
        version = self.hosted_version or hello.version
        if first:
            self.version = version  # routing: a later Hello's version changes nothing
            self.instance = hello.instance
            self.refusal = too_old(hello.protocol, self.config.kit_url)
            if self.refusal is not None and self.presence is not None:  # after the Welcome
                self.events.put_nowait(self._refused_notice())
                self.events.put_nowait(FailedPrecondition(self.refusal))
        self.hello_version = version
        self.greeted.set()
        if not first or self.presence is not None:  # a later Hello, or one after the wait:
            await self.record()  # what it says counts from now

    def drain(self, drain: bot_pb2.Drain) -> None:
        """The bot takes no new match: record it (on a task of its own, so answers go on being
        read), then answer with the running matches."""
        self.draining = True
        self.greeted.set()
        log.debug("bot %d drains its Play stream (%s)", self.bot_id, drain.reason or "no reason")
        chore = self.loop.create_task(self._drained())
        self.chores.add(chore)
        chore.add_done_callback(self.chores.discard)

    async def _drained(self) -> None:
        await self.recorded.wait()
        while not await self.record():  # the database failed: try again after a heartbeat
            await asyncio.sleep(self.config.heartbeat_s)
        rows = await self.run(matches.match_states_of, self.bot_id, (), sessions=self.sessions)
        response = bot_pb2.PlayResponse()
        response.draining.running_match_ids.extend(  # (of a version test: its seats' only)
            m.id for m in rows
            if m.state == RUNNING and values.seat_for(
                m, self.bot_id, self.version, self.challenges_only) is not None)
        self.events.put_nowait(response)

    def wake(self) -> None:
        """Read the database and send what is missing (on the loop: the safety net)."""
        self.events.put_nowait(FULL)

    def missed(self, rows: list[Any]) -> bool:
        """Whether the rows of the safety net's query (services.live.watchers.Players: id, bot0_id,
        bot1_id, state, seq, to_act, hand_number) hold something this stream has not sent: a
        new match of its bot, a turn, a hand's or a match's end. Rows older than what the
        stream handled since are skipped (it moved on meanwhile). A stream whose read failed
        in an outage (`stale`) has missed something by definition."""
        if self.stale:
            return True
        for row in rows:
            seat = values.seat_for(row, self.bot_id, self.version,
                                   self.challenges_only)
            if seat is None:
                continue
            over = row.state != RUNNING
            if (row.seq, over) < self.seen.get(row.id, (-1, False)):
                continue
            known = self.known.get(row.id)
            if known is None:
                if not over:
                    return True  # a match it has not heard of
                continue
            if over or row.hand_number != known:
                return True
            if row.to_act == seat and self.sent.get(row.id) != row.seq:
                return True
        return False

    def hold_key(self) -> tuple[int, str, bool, int]:
        """What this stream holds (services.live.streams.Holders): its bot, version and kind
        of matches."""
        return (self.bot_id, self.version, self.challenges_only, int(self.accepts_people))

    def what(self) -> str:
        """`mybot@1.0 ... for the ladder`: the bot, version and kind of matches of the stream,
        for a person."""
        who = f"{self.bot.name}@{self.version}" if self.version else self.bot.name
        kind = "challenges only" if self.challenges_only else "the ladder"
        people = {common_pb2.ACCEPTS_PEOPLE_CASUAL: " and people's casual games",
                  common_pb2.ACCEPTS_PEOPLE_RATED: " and people's games"}.get(
                      self.accepts_people, "")
        return f"{who} for {kind}{people}"

    def replaced_by(self, newer: PlaySession, peer: str) -> None:
        """A newer stream of another program took over this one's bot, version and kind of
        matches: tell the bot why, then end the stream (any thread)."""
        if newer.instance == self.instance:  # the same program reconnected: this one is gone
            self.stop_soon()
            return
        message = (f"{newer.what()} is now connected from another process ({peer}): it plays "
                   "this bot's turns from now on, and this connection ends (two processes of "
                   "one version would race for every turn). Stop the other process to play "
                   "from this one")
        notice = self._notice(bot_pb2.NOTICE_KIND_REPLACED, "FAILED_PRECONDITION", message)
        self.loop.call_soon_threadsafe(self.events.put_nowait, notice)
        self.loop.call_soon_threadsafe(self.events.put_nowait, FailedPrecondition(message))

    def stop_soon(self) -> None:
        """End the stream's responses (any thread): the bot was suspended or its token
        rotated (services.live.revocation)."""
        self.loop.call_soon_threadsafe(self.events.put_nowait, STOP)

    # --- the bot's answers ------------------------------------------------------------------
    async def read(self, requests: AsyncIterator[bot_pb2.PlayRequest | RefusedRequest]
                   ) -> None:
        """Apply the bot's answers, one at a time. A half-close (no more answers) keeps the
        stream open: the bot may still listen; the stream ends when the call ends. A message
        that failed a check of the request guard is refused on its own (`refused`)."""
        try:
            async for request in requests:
                if isinstance(request, RefusedRequest):  # failed a check of the guard
                    self.greeted.set()
                    self.refused(request)
                    continue
                kind = request.WhichOneof("message")
                if kind == "action":
                    self.greeted.set()
                    await self.answer(request.action)
                elif kind == "hello":
                    await self.hello(request.hello)
                elif kind == "drain":
                    self.drain(request.drain)
        except asyncio.CancelledError:
            raise
        except ServiceError as e:  # bytes that are no PlayRequest (services.api.limits): the
            self.events.put_nowait(e)  # writer aborts the stream
        except Exception as e:  # noqa: BLE001  (the call ended or broke: the writer stops)
            log.debug("play stream of bot %d ended: %r", self.bot_id, e)
            self.events.put_nowait(STOP)
        finally:
            self.greeted.set()  # no Hello is coming

    async def heard_first(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until the bot's first message arrived or its side
        of the stream ended (services.api.status.refuse_stream says why)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.greeted.wait(), timeout)

    def refused(self, refused: RefusedRequest) -> None:
        """A message that parsed but failed a check (services.api.limits: a field over its
        limit, an id out of range, an unknown enum number). An answer is refused like any other
        (an ActionRejected naming the field); a Hello is ignored, and the bot told so by a
        Notice. Either way the stream, and the bot's other matches, go on."""
        request = refused.request
        assert isinstance(request, bot_pb2.PlayRequest)
        if request.WhichOneof("message") == "action":
            self.refuse(request.action, refused.error)
            return
        error = refused.error
        failures.failure_of(error, "Play hello")  # logged as any client error
        hello = request.WhichOneof("message") == "hello"
        self.events.put_nowait(bot_pb2.PlayResponse(notice=bot_pb2.Notice(
            kind=bot_pb2.NOTICE_KIND_HELLO_REFUSED if hello else bot_pb2.NOTICE_KIND_UNSPECIFIED,
            code=error.code, field=str(error.details.get("field", "")),
            message=f"your {'Hello' if hello else 'message'} was refused and ignored "
                    f"({error.message}); the stream goes on as without it")))

    async def answer(self, answer: bot_pb2.TurnAnswer) -> None:
        """Apply `answer`. On the fast path the reader does not wait for the commit (it goes
        on reading; the commit's outcome comes back as a callback: `_settled`); otherwise it
        waits for the pool, one answer at a time."""
        try:
            self.breaker.check()  # the database is known to be down: refused at once
            live = self.submit_live(answer)
        except Exception as e:  # noqa: BLE001  (report it to the bot, keep the stream)
            self.refuse(answer, e)
            return
        if not live:
            await self._submit_on_pool(answer)

    def _settled(self, answer: bot_pb2.TurnAnswer,
                 outcome: actions.SubmitResult | None | BaseException) -> None:
        """The outcome of a fast-path answer (on the loop, after the commit's announcement):
        committed (the turns follow from that announcement), refused (the pool decides, as
        for any other answer), or failed (the bot hears why)."""
        if isinstance(outcome, BaseException):
            self.refuse(answer, outcome)
        elif outcome is None:
            slow = self.loop.create_task(self._submit_on_pool(answer))
            self.slow.add(slow)
            slow.add_done_callback(self.slow.discard)

    async def _submit_on_pool(self, answer: bot_pb2.TurnAnswer) -> None:
        try:
            await self.run(self.submit, answer)
        except Exception as e:  # noqa: BLE001  (report it to the bot, keep the stream)
            self.refuse(answer, e)

    def refuse(self, answer: bot_pb2.TurnAnswer, e: BaseException) -> None:
        """Tell the bot why `answer` was not applied (an ActionRejected with the safe code and
        message), and send the current turn again unless it is stale."""
        if isinstance(e, ValueError):
            e = InvalidArgument(str(e))
        failure = failures.failure_of(e, "Play answer")  # the safe code and message
        code = failure.code
        rejected = bot_pb2.ActionRejected(
            match_id=answer.match_id, seq=answer.seq, code=code, message=failure.message,
            rule=failure.rule or "")
        if isinstance(e, ServiceError):
            left = e.details.get("illegal_left")
            rejected.illegal_left = int(left) if isinstance(left, int) else 0
            rejected.field = str(e.details.get("field", ""))  # a malformed answer's
        resend = code != "ABORTED"  # stale: the current turn is (or will be) sent anyway
        self.events.put_nowait((rejected, resend))

    def submit_live(self, answer: bot_pb2.TurnAnswer) -> bool:
        """The common case without a hop to the pool: an ordinary action of a match whose
        live row and game are in memory is applied here, on the event loop, and committed by
        the group commit (`actions.submit_live`; its outcome goes to `_settled`); False:
        `submit` decides on the pool."""
        seat = self.seats.get(answer.match_id)
        if seat is None:
            return False
        try:
            action = wire.action_from_pb(answer.action)
        except Exception:  # noqa: BLE001  (`submit` answers it with its proper error)
            return False
        return actions.submit_live(
            answer.match_id, seat, action, expected_seq=answer.seq,
            request_id=answer.request_id or None, bot_id=self.bot_id, site=self.site,
            sessions=self.sessions, config=self.config, loop=self.loop,
            settled=functools.partial(self._settled, answer)) is not None

    def submit(self, answer: bot_pb2.TurnAnswer) -> None:
        seat = self.seats.get(answer.match_id)
        if seat is None:
            match = matches.get_match(answer.match_id, sessions=self.sessions)
            seat = values.seat_for(match, self.bot_id, self.version,
                                   self.challenges_only)
        if seat is None:
            raise PermissionDenied(
                f"bot {self.bot_id} does not play in match {answer.match_id}: answer only "
                "the turns you were sent")
        action = wire.action_from_pb(answer.action)
        actions.submit_action(
            answer.match_id, seat, action, expected_seq=answer.seq,
            request_id=answer.request_id or None, bot_id=self.bot_id,
            sessions=self.sessions, config=self.config)

    # --- what to send -----------------------------------------------------------------------
    async def responses(self) -> AsyncIterator[bot_pb2.PlayResponse]:
        if self.refusal is not None:  # a kit older than the service's oldest protocol
            yield self._refused_notice()
            raise FailedPrecondition(self.refusal)
        # the first read only once a change of another replica can no longer be missed
        if not self.heard.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.heard.wait(), bus.READY_S)
        if self.connects is not None:  # with the other streams opening meanwhile
            running = await self.connects.states(self.bot_id)
        else:
            running = await self.run(matches.match_states_of, self.bot_id, (),
                                     sessions=self.sessions)
        yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(
            bot=convert.bot_to_pb(self.bot), running_matches=len(running),
            challenges_only=self.challenges_only, accepts_people=self.accepts_people,
            version=self.version, protocol_min=protocol.OLDEST, protocol_max=protocol.PROTOCOL))
        for response in await self.run(self.step, running) if running else ():
            yield response
        while True:
            events = [await self.events.get()]
            while not self.events.empty():
                events.append(self.events.get_nowait())
            full = False
            changes: dict[int, values.MatchState] = {}
            for event in events:
                if isinstance(event, values.Change):
                    m = event.match
                    if self._newer(m, changes.get(m.id)):
                        changes[m.id] = m
                elif isinstance(event, tuple):  # a refused answer
                    rejected, resend = event
                    yield bot_pb2.PlayResponse(rejected=rejected)
                    if resend:
                        self.sent.pop(rejected.match_id, None)  # send the same turn again
                        full = True
                elif isinstance(event, bot_pb2.PlayResponse):  # a notice, a Drain's answer
                    yield event
                elif event is STOP:
                    return
                elif isinstance(event, ServiceError):  # raised to the servicer, which aborts
                    raise event
                elif event is DOWN:
                    if not self.told_down:
                        self.told_down = True
                        yield self._notice(bot_pb2.NOTICE_KIND_DATABASE_UNAVAILABLE,
                                           "UNAVAILABLE", DOWN_MESSAGE)
                elif event is BACK:
                    if self.told_down:
                        self.told_down = False
                        yield self._notice(bot_pb2.NOTICE_KIND_DATABASE_BACK, "OK", BACK_MESSAGE)
                    # The running matches got fresh turn clocks before the breaker closed: every
                    # pending turn goes again, with its new deadline, and what was missed.
                    self.sent.clear()
                    full = True
                else:
                    full = True
            if full and self.breaker.is_open:  # no read: it would hang; read when it is back
                self.stale, full = True, False
            elif full:
                self.stale = False
            rows: list[values.MatchState] | None
            if full:
                rows = await self._outage_safe(matches.match_states_of, self.bot_id,
                                               list(self.known), sessions=self.sessions)
            else:
                rows = [m for m in changes.values() if self._newer(m, None)]
            if rows:
                quick = None if full else self.quick_step(rows)
                out = quick if quick is not None else await self._outage_safe(self.step, rows)
                for response in out or ():
                    yield response

    async def _outage_safe(self, function: Callable[..., Any], *args: Any, **kwargs: Any
                           ) -> Any:
        """`function` on the pool; None if the database was unavailable (the stream stays: it
        reads again once the breaker closes, or the safety net finds what it missed)."""
        try:
            return await self.run(function, *args, **kwargs)
        except Exception as e:  # noqa: BLE001  (an outage is waited out; the rest is raised)
            if failures.failure_of(e, "Play stream read").code != "UNAVAILABLE":
                raise
            self.stale = True
            return None

    def _refused_notice(self) -> bot_pb2.PlayResponse:
        response = self._notice(bot_pb2.NOTICE_KIND_PROTOCOL_REFUSED, "FAILED_PRECONDITION",
                                self.refusal or "")
        response.notice.field = "hello.protocol"
        return response

    @staticmethod
    def _notice(kind: int, code: str, message: str) -> bot_pb2.PlayResponse:
        return bot_pb2.PlayResponse(notice=bot_pb2.Notice(kind=kind, code=code,  # type: ignore[arg-type]
                                                          message=message))

    def _newer(self, m: values.MatchState, than: values.MatchState | None) -> bool:
        """Whether `m` is newer than `than` (or, without it, than what was handled)."""
        version = (m.seq, m.state != RUNNING)
        if than is not None:
            return version > (than.seq, than.state != RUNNING)
        return version >= self.seen.get(m.id, (-1, False))

    def quick_step(self, rows: list[values.MatchState]) -> list[bot_pb2.PlayResponse] | None:
        """What to send for pushed `rows` when it needs no database, run on the event loop:
        the next turn from the cached game, a hand's end from its results, a match's end from
        the final row and game this process committed. None: use `step` on the pool."""
        plans: list[tuple[values.MatchState, int, int, list[engine.HandResult] | None,
                          Match | None]] = []
        for m in rows:
            bot_seat = values.seat_for(m, self.bot_id, self.version,
                                       self.challenges_only)
            known = self.known.get(m.id)
            if bot_seat is None or (known is None and m.state != RUNNING):
                return None
            seat = bot_seat
            if known is None:  # new to the stream (a new match): its turn, if any
                plans.append((m, seat, m.hand_number, None, None))
                continue
            key = cache.bind_key(self.bind, m.id)
            if m.state != RUNNING:
                ended = cache.finished(key, m.seq)
                if ended is None:
                    return None
                plans.append((m, seat, known, ended[1].results, ended[0]))
            elif m.hand_number != known:
                results = cache.results_cached(key, m.seq)
                if results is None or len(results) != m.hand_number:
                    return None
                plans.append((m, seat, known, results, None))
            else:
                plans.append((m, seat, known, None, None))
        out: list[bot_pb2.PlayResponse] = []
        turns: set[int] = set()
        for m, seat, known, results, final in plans:
            if results is not None:
                out.extend(hands_ended_from(m.id, results, known))
            if final is not None:
                out.append(self._match_ended(m, seat, final))
            elif m.to_act == seat and self.sent.get(m.id) != m.seq:
                obs = cache.observe_cached(cache.bind_key(self.bind, m.id), m.seq, seat)
                if obs is None:
                    return None  # nothing recorded yet: `step` does it all
                out.append(self._turn(m, seat, obs))
                turns.add(m.id)
        for m, seat, _, _, final in plans:  # all done: record it
            self.seen[m.id] = max(self.seen.get(m.id, (-1, False)), (m.seq, final is not None))
            if final is not None:
                self._forget(m.id)
                continue
            self.known[m.id] = m.hand_number
            self.seats[m.id] = seat
            if m.id in turns:
                self.sent[m.id] = m.seq
                metrics.TURNS_PUSHED.inc()
        return out

    def step(self, rows: list[values.MatchState]) -> list[bot_pb2.PlayResponse]:
        """What to send for the matches `rows` (their current summaries)."""
        out: list[bot_pb2.PlayResponse] = []
        for m in rows:
            seat = values.seat_for(m, self.bot_id, self.version,
                                   self.challenges_only)
            if seat is None:
                continue
            self.seen[m.id] = max(self.seen.get(m.id, (-1, False)), (m.seq, m.state != RUNNING))
            known = self.known.get(m.id)
            if known is not None and (m.hand_number > known or m.state != RUNNING):
                out.extend(self.hands_ended(m, known))
            if m.state != RUNNING:  # finished, or aborted by an operator
                self._forget(m.id)
                ended = cache.finished(cache.bind_key(self.bind, m.id), m.seq)
                match = ended[0] if ended is not None else matches.get_match(
                    m.id, sessions=self.sessions)
                out.append(self._match_ended(m, seat, match))
                continue
            self.known[m.id] = m.hand_number
            self.seats[m.id] = seat
            if m.to_act == seat and self.sent.get(m.id) != m.seq:
                turn = self.turn(m, seat)
                if turn is not None:
                    self.sent[m.id] = m.seq
                    out.append(turn)
                    metrics.TURNS_PUSHED.inc()
        return out

    def _forget(self, match_id: int) -> None:
        self.known.pop(match_id, None)
        self.sent.pop(match_id, None)
        self.seats.pop(match_id, None)

    @staticmethod
    def _match_ended(m: values.MatchState, seat: int, match: Match) -> bot_pb2.PlayResponse:
        return bot_pb2.PlayResponse(match_ended=bot_pb2.MatchEnded(
            seat=seat, won=m.winner == seat, match=convert.match_to_pb(match)))

    def hands_ended(self, m: values.MatchState, known: int) -> list[bot_pb2.PlayResponse]:
        """The hands of `m` numbered `known` or more that are over: from the game in memory
        when this process has it at `m.seq`, else from the database."""
        key = cache.bind_key(self.bind, m.id)
        if m.state == RUNNING:
            results = cache.results_cached(key, m.seq)
            if results is not None and len(results) == m.hand_number:
                return hands_ended_from(m.id, results, known)
        else:
            ended = cache.finished(key, m.seq)
            if ended is not None:
                return hands_ended_from(m.id, ended[1].results, known)
        hands = matches.finished_hands(m.id, 0, sessions=self.sessions)
        return [bot_pb2.PlayResponse(hand_ended=convert.hand_ended_to_pb(m.id, hand, hands))
                for hand in hands if hand.number >= known]

    def turn(self, m: values.MatchState, seat: int) -> bot_pb2.PlayResponse | None:
        try:
            obs = matches.observe_match(m, seat, sessions=self.sessions)
        except Aborted:
            return None  # it moved on meanwhile; the next step sends the new state
        return self._turn(m, seat, obs)

    def _turn(self, m: values.MatchState, seat: int, obs: engine.Observation
              ) -> bot_pb2.PlayResponse:
        """The Turn message, built in place in its response, its observation too: a message
        given to a constructor or CopyFrom is copied (a third of the cost of a turn)."""
        response = bot_pb2.PlayResponse()
        turn = response.turn
        turn.match_id, turn.seat, turn.seq = m.id, seat, m.seq
        wire.fill_observation(turn.observation, obs)
        if m.deadline_at is not None:
            wire.fill_timestamp(turn.deadline, m.deadline_at)
        turn.bank_left_ms = clocks.bank_left(m, seat)
        if m.pair_id is not None:
            convert.fill_event(turn.event, m)
        return response


def hands_ended_from(match_id: int, results: list[engine.HandResult],
                     known: int) -> list[bot_pb2.PlayResponse]:
    """HandEnded of each of `results` (a match's, in order) numbered `known` or more."""
    counters = [7, 7]
    out = []
    for number, result in enumerate(results):
        counters[result.winner] -= result.game_points
        if number >= known:
            out.append(bot_pb2.PlayResponse(hand_ended=match_pb2.HandEnded(
                match_id=match_id, hand_number=number, counters=counters,
                result=common_pb2.HandResult(
                    winner=result.winner, game_points=result.game_points,
                    reason=result.reason.value, points=list(result.points),
                    tricks=list(result.tricks)))))
    return out


def too_old(said: int, kit_url: str | None) -> str | None:
    """Why a kit whose Hello said protocol `said` is refused (one line, naming both versions
    and how to upgrade), or None when the service serves it (any newer one included: it is
    told in the Welcome, and the kit says so)."""
    kit = protocol.spoken(said)
    if kit >= protocol.OLDEST:
        return None
    how = (f"pip install {kit_url}" if kit_url else
           "pip install the wheel the site's dashboard offers at /kit")
    return (f"the service speaks protocol {protocol.span(protocol.OLDEST, protocol.PROTOCOL)}, "
            f"this kit {kit}: upgrade with {how}")
