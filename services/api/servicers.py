"""The gRPC servicers: thin adapters from bummerl.v1 requests to the plain functions."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from typing import Any

import grpc
from bummerl import wire
from bummerl.v1 import bot_pb2, bot_pb2_grpc, common_pb2, match_pb2, match_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

from db import presence
from db.models import RUNNING
from db.settings import Settings
from services.api import limits, status
from services.core import breaker, connections, matches, pairs
from services.core.actions import submit_action
from services.core.errors import InvalidArgument
from services.live import bus, convert, notify, revocation
from services.live.batches import Batched, Connects
from services.live.play import PlaySession
from services.live.presence import Presence
from services.live.streams import Holders, Limits, peer_address
from services.live.watchers import Players, Watched
from services.ops import admin, bots, challenges, exports, people

# A spectator's own read of the match without a wake-up (the safety net is `Watched`'s one
# query for all spectators).
WATCH_BACKSTOP_SECONDS = 60.0


def token_of(context: grpc.ServicerContext) -> str | None:
    """The bearer token of the call's `authorization` metadata."""
    for key, value in context.invocation_metadata():
        if key == "authorization":
            text = value if isinstance(value, str) else value.decode()
            scheme, _, token = text.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else text.strip()
    return None


rich_status = status.rich_status  # the error policy lives in services.api.status


def _abort(context: grpc.ServicerContext, error: BaseException, where: str = "") -> None:
    """End a call run on the pool (a sync handler of the asyncio server) with `error`'s safe
    status (services.api.status)."""
    status.abort(context, error, where)


def unary(method: Callable[..., Any]) -> Callable[..., Any]:
    """Map any exception to its status (services.api.status; the rule id goes in `bummerl-rule`).
    Every unary call needs the database: while its breaker is open (services.core.breaker) the
    call is UNAVAILABLE at once."""

    @functools.wraps(method)
    def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            breaker.of_sessions(self.sessions).check()
            return method(self, request, context)
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            _abort(context, e, method.__name__)

    return wrapper


def streaming(method: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    """Map ServiceError to its status code, for a response stream run on the event loop."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: Any) -> AsyncIterator[Any]:
        try:
            async for response in method(self, request, context):
                yield response
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            await status.abort_async(context, e, method.__name__)

    return wrapper


class Streams:
    """What the streaming servicers share: the pool their database work runs on, and the
    open-stream limits."""

    def __init__(self, pool: Executor | None, config: Settings) -> None:
        self.pool = pool
        self.config = config
        self.limits = Limits()
        self.holders = Holders()  # the Play stream of each bot, version and kind of matches
        self.watched: Watched | None = None  # made on the event loop, by the first spectator
        self.players: Players | None = None  # made on the event loop, by the first Play stream

    def safety_net(self, sessions: sessionmaker[Session] | None) -> Watched:
        """The one safety-net query of every watched match here (spectators' WatchMatch
        streams and followed tables), made on the event loop by its first user."""
        if self.watched is None:
            self.watched = Watched(sessions, self.run, self.safety_s)
        return self.watched

    def safety_s(self) -> float:
        """The streams' safety-net interval: `safety_s`, or `poll_s` while no change bus is
        heard."""
        return self.config.safety_s if bus.listening() else self.config.poll_s

    async def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a blocking `function` on the pool, from the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, functools.partial(function, *args, **kwargs))


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings,
                 streams: Streams | None = None) -> None:
        self.sessions = sessions
        self.config = config
        self.streams = streams or Streams(None, config)

    @unary
    def CreateMatch(self, request, context):  # type: ignore[no-untyped-def]
        bots.require_operator(token_of(context), self.config, "CreateMatch", house_ok=True)
        tc = request.time_control
        if request.pair_id:  # an event's duplicate pair: everything comes from the pair
            m = pairs.create_pair_match(
                request.pair_id, request.pair_leg, asked=pairs.Asked(
                    bot_ids=tuple(request.bot_ids),
                    profile=wire.PROFILE_NAMES[request.profile].value
                    if request.profile in wire.PROFILE_NAMES else None,
                    seed=request.seed if request.HasField("seed") else None,
                    move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None,
                    ladder=request.ladder, versions=tuple(request.seat_versions)),
                sessions=self.sessions, config=self.config)
            return match_pb2.CreateMatchResponse(match=convert.match_to_pb(m))
        bot_ids = list(request.bot_ids)
        if not bot_ids and request.bot_names:
            if len(request.bot_names) != 2:
                raise InvalidArgument(f"bot_names needs exactly two names, got "
                                      f"{len(request.bot_names)}")
            bot_ids = matches.bot_ids_named(list(request.bot_names), sessions=self.sessions)
        m = matches.create_match(
            bot_ids,
            profile=wire.PROFILE_NAMES.get(request.profile, "soft"),
            seed=request.seed if request.HasField("seed") else None,
            move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None,
            max_illegal=tc.max_illegal or None, ladder=request.ladder,
            # a ladder pairing only for bots that take one now (db.presence)
            must_take=dict.fromkeys(bot_ids, presence.PAIRING) if request.ladder else None,
            sessions=self.sessions, config=self.config)
        return match_pb2.CreateMatchResponse(match=convert.match_to_pb(m))

    @unary
    def GetMatch(self, request, context):  # type: ignore[no-untyped-def]
        m, hands, actions = matches.match_hands(request.match_id, sessions=self.sessions)
        return match_pb2.GetMatchResponse(
            match=convert.match_to_pb(m), hands=convert.hand_summaries(hands, actions))

    @unary
    def ListMatches(self, request, context):  # type: ignore[no-untyped-def]
        rows, token = matches.list_matches(
            state=convert.STATE_NAMES.get(request.state), bot_id=request.bot_id or None,
            page_size=request.page_size, page_token=request.page_token,
            sessions=self.sessions)
        return match_pb2.ListMatchesResponse(
            matches=[convert.match_to_pb(m) for m in rows], next_page_token=token)

    @unary
    def GetObservation(self, request, context):  # type: ignore[no-untyped-def]
        bot_id = bots.seat_bot_id(token_of(context), request.match_id, request.seat,
                                  config=self.config, sessions=self.sessions)
        obs, m = matches.get_observation(
            request.match_id, request.seat, bot_id=bot_id, sessions=self.sessions)
        mine = m.state == RUNNING and m.to_act == request.seat
        return wire.observation_response(obs, m.seq, m.deadline_at if mine else None)

    @unary
    def SubmitAction(self, request, context):  # type: ignore[no-untyped-def]
        bot_id = bots.seat_bot_id(token_of(context), request.match_id, request.seat,
                                  config=self.config, sessions=self.sessions)
        try:
            action = wire.action_from_pb(request.action)
        except ValueError as e:
            raise InvalidArgument(f"bad action: {e}") from None
        result = submit_action(
            request.match_id, request.seat, action, expected_seq=request.expected_seq,
            request_id=request.request_id or None, bot_id=bot_id,
            sessions=self.sessions, config=self.config)
        return match_pb2.SubmitActionResponse(
            seq=result.seq, duplicate=result.duplicate, match=convert.match_to_pb(result.match))

    @streaming
    async def WatchMatch(self, request, context):  # type: ignore[no-untyped-def]
        """Pushed: the stream reads the match again when a change of it is committed (here or
        heard on the change bus), or when the server's one safety-net query for all watched
        matches (every `safety_s`, `poll_s` without a bus) finds it changed."""
        breaker.of_sessions(self.sessions).check()  # the database is known to be down
        peer = peer_address(context.peer())
        if people.is_web(token_of(context), self.config):  # the socket tier, for many viewers
            release = self.streams.limits.admit(
                "watch-web:" + peer, self.config.max_web_watch_streams, "WatchMatch")
        else:
            release = self.streams.limits.admit(
                "watch:" + peer, self.config.max_watch_streams, "WatchMatch")
        woken = asyncio.Event()
        loop = asyncio.get_running_loop()
        site = connections.site_of(connections.bound_engine(self.sessions))
        heard = asyncio.Event()  # the change bus listens to the match's channel
        unsubscribe = notify.subscribe(notify.key(site, "match", request.match_id),
                                       lambda _change: loop.call_soon_threadsafe(woken.set),
                                       on_ready=lambda: loop.call_soon_threadsafe(heard.set))
        watched = self.streams.safety_net(self.sessions)
        watched.add(request.match_id, woken)
        next_seq = max(0, request.from_seq)
        announced: set[int] = set()
        try:
            with contextlib.suppress(TimeoutError):  # then no change of another replica is lost
                await asyncio.wait_for(heard.wait(), bus.READY_S)
            while True:
                woken.clear()
                m, actions, hands = await self.streams.run(
                    matches.match_actions, request.match_id, next_seq, sessions=self.sessions)
                ends = {h.last_seq: h for h in hands if h.last_seq is not None}
                for row in actions:
                    yield match_pb2.WatchMatchResponse(action=convert.logged_action_to_pb(row))
                    next_seq = row.seq + 1
                    hand = ends.get(row.seq)
                    if hand is not None and hand.number not in announced:
                        announced.add(hand.number)
                        yield match_pb2.WatchMatchResponse(
                            hand_ended=convert.hand_ended_to_pb(m.id, hand, hands))
                if m.state != RUNNING and next_seq >= m.seq:  # finished or aborted
                    yield match_pb2.WatchMatchResponse(match_ended=convert.match_to_pb(m))
                    return
                with contextlib.suppress(TimeoutError):  # (a last resort: one read a minute)
                    await asyncio.wait_for(woken.wait(), WATCH_BACKSTOP_SECONDS)
        finally:
            watched.remove(request.match_id, woken)
            unsubscribe()
            release()

    @streaming
    async def ExportMatches(self, request, context):  # type: ignore[no-untyped-def]
        """The records page by page: each page is read and made JSON on the pool, then sent
        record by record (each send waits for the client's flow control), so an export holds
        one page in memory whatever its size and however slow its reader. The trailing
        metadata `bummerl-withheld` says how many matches the release horizon held back."""
        release = self.streams.limits.admit(
            "export:" + peer_address(context.peer()), self.config.max_export_streams,
            "ExportMatches")
        try:
            export = await self.streams.run(
                exports.start_export, bot=request.bot, opponent=request.opponent,
                version=request.version, profile=wire.PROFILE_NAMES.get(request.profile),
                origin=request.origin, since=_moment(request, "finished_since"),
                until=_moment(request, "finished_until"), match_id=request.match_id,
                cursor=request.cursor, limit=request.limit,
                seat_view=request.seat_view, token=token_of(context), sessions=self.sessions)
            sent, last = 0, request.cursor
            while True:
                page = await self.streams.run(next, export.pages, None)
                if page is None:
                    break
                for record_json, cursor in page:
                    yield match_pb2.ExportMatchesResponse(
                        record_json=record_json, cursor=cursor, total=export.total)
                    sent, last = sent + 1, cursor
            # How many the release horizon held back (legs of pairs still being played, and
            # what finished after them): the trailing metadata says, for `bummerl games`.
            withheld = await self.streams.run(export.withheld_after, sent, last)
            context.set_trailing_metadata(((exports.WITHHELD_KEY, str(withheld)),))
        finally:
            release()


def _moment(request: Any, field: str) -> Any:
    """The time of a Timestamp field of `request` (None if unset); InvalidArgument if it is
    none a datetime can hold."""
    if not request.HasField(field):
        return None
    try:
        return wire.moment(getattr(request, field))
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{field} is not a time between the years 1 and 9999") from None


class BotServicer(bot_pb2_grpc.BotServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings,
                 streams: Streams | None = None) -> None:
        self.sessions = sessions
        self.config = config
        self.streams = streams or Streams(None, config)
        self.presence = Presence(sessions, config.heartbeat_s)
        # a burst of connects: one query per batch of tokens, presence writes and first reads
        self.tokens: Batched[str | None, Any] = Batched(
            functools.partial(bots.bots_for_tokens, sessions=sessions), self.streams.run)
        self.connects = Connects(self.presence, sessions, self.streams.run)

    @unary
    def RegisterBot(self, request, context):  # type: ignore[no-untyped-def]
        if not self.config.open_registration:
            bots.require_operator(token_of(context), self.config, "RegisterBot")
        bot, token = bots.register_bot(request.name, sessions=self.sessions)
        return bot_pb2.RegisterBotResponse(bot=convert.bot_to_pb(bot), token=token or "")

    @unary
    def GetBot(self, request, context):  # type: ignore[no-untyped-def]
        return bot_pb2.GetBotResponse(
            bot=convert.bot_to_pb(bots.get_bot(request.bot_id, sessions=self.sessions)))

    @unary
    def Challenge(self, request, context):  # type: ignore[no-untyped-def]
        tc = request.time_control
        created = challenges.challenge(
            token_of(context), request.opponent, request.matches,
            profile="sharp" if request.profile == common_pb2.PROFILE_SHARP else "soft",
            move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None, sessions=self.sessions,
            config=self.config)
        return bot_pb2.ChallengeResponse(matches=[convert.match_to_pb(m) for m in created])

    @limits.answers_refusals  # a malformed answer is refused on its own: the stream goes on
    async def Play(self, request_iterator, context):  # type: ignore[no-untyped-def]
        run = self.streams.run
        try:
            breaker.of_sessions(self.sessions).check()  # the database is known to be down
            bot = await self.tokens(token_of(context))
            admin.check_may_play(bot)  # a suspended bot is refused
            release = self.streams.limits.admit(
                f"play:{bot.id}", self.config.max_play_streams, f"Play (bot {bot.id})")
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            await status.refuse_stream(context, request_iterator, e, "Play",
                                       self.config.refused_wait_s)
            return
        session = PlaySession(bot, self.sessions, self.config, run, self.connects)
        if self.streams.players is None:
            self.streams.players = Players(self.sessions, run, self.streams.safety_s)
        self.streams.players.add(session)
        # ended if the bot is suspended or its token rotated meanwhile (services.live.revocation)
        watch = revocation.watch(bot, self.sessions, session.stop_soon, self.config.heartbeat_s)
        reader = None
        held = None
        try:
            reader = asyncio.ensure_future(session.read(request_iterator))
            await session.greet(self.presence)  # its Hello says what it takes
            # a program that names itself takes over from another (not a refused one: a kit
            # too old for the service must not end a stream that plays)
            if session.instance and session.refusal is None:
                held = session.hold_key()
                older = self.streams.holders.take(held, session)
                if isinstance(older, PlaySession):
                    older.replaced_by(session, peer_address(context.peer()))
            async for response in session.responses():
                if context.done():  # the bot went (cancelled, or its deadline passed): a write
                    break  # now fails in gRPC's core, which logs it as an error
                yield response
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            if reader is None:
                await status.refuse_stream(context, request_iterator, e, "Play",
                                           self.config.refused_wait_s)
            else:  # (as a refusal: not before the bot's first message arrived)
                await session.heard_first(self.config.refused_wait_s)
                await status.abort_async(context, e, "Play")
        finally:
            watch.cancel()
            if reader is not None:
                reader.cancel()
            self.streams.players.remove(session)
            if held is not None:
                self.streams.holders.leave(held, session)
            session.close()
            release()
            key = session.presence_key
            if key is not None:
                try:
                    await self.connects.closed((bot.id, key))
                except RuntimeError:  # the server is stopping: its pool takes no more work
                    self.presence.closed(bot.id, key)
        if watch.revoked is not None:  # suspended, or its token rotated, meanwhile
            await status.abort_async(context, watch.revoked, "Play")
