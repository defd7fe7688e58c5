"""The gRPC servicers: thin adapters from bummerl.v1 requests to the plain functions."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from bummerl import wire
from bummerl.v1 import bot_pb2, bot_pb2_grpc, match_pb2, match_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

from db.models import RUNNING
from services import admin, bots, challenges, convert, matches, notify, status, streams
from services.actions import submit_action
from services.config import Settings
from services.errors import InvalidArgument
from services.play import PlaySession
from services.presence import Presence


def token_of(context: grpc.ServicerContext) -> str | None:
    """The bearer token of the call's `authorization` metadata."""
    for key, value in context.invocation_metadata():
        if key == "authorization":
            text = value if isinstance(value, str) else value.decode()
            scheme, _, token = text.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else text.strip()
    return None


rich_status = status.rich_status  # the error policy lives in services.status


def _abort(context: grpc.ServicerContext, error: BaseException, where: str = "") -> None:
    status.abort(context, error, where)


def unary(method: Callable[..., Any]) -> Callable[..., Any]:
    """Map any exception to its status (services.status; the rule id goes in `bummerl-rule`)."""

    @functools.wraps(method)
    def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            _abort(context, e, method.__name__)

    return wrapper


def streaming(method: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    @functools.wraps(method)
    def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from method(self, request, context)
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            _abort(context, e, method.__name__)

    return wrapper


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings) -> None:
        self.sessions = sessions
        self.config = config

    @unary
    def CreateMatch(self, request, context):  # type: ignore[no-untyped-def]
        bots.require_operator(token_of(context), self.config, "CreateMatch", house_ok=True)
        tc = request.time_control
        m = matches.create_match(
            list(request.bot_ids),
            profile=wire.PROFILE_NAMES.get(request.profile, "soft"),
            seed=request.seed if request.HasField("seed") else None,
            move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None,
            max_illegal=tc.max_illegal or None,
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
        return match_pb2.GetObservationResponse(
            observation=wire.observation_to_pb(obs), seq=m.seq,
            deadline=convert.timestamp(m.deadline_at) if mine else None)

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
    def WatchMatch(self, request, context):  # type: ignore[no-untyped-def]
        key = f"match:{request.match_id}"
        next_seq = max(0, request.from_seq)
        announced: set[int] = set()
        while context.is_active():
            version = notify.version(key)
            m, actions, hands = matches.match_actions(
                request.match_id, next_seq, sessions=self.sessions)
            ends = {h.last_seq: h for h in hands if h.last_seq is not None}
            for row in actions:
                yield match_pb2.WatchMatchResponse(action=convert.logged_action_to_pb(row))
                next_seq = row.seq + 1
                hand = ends.get(row.seq)
                if hand is not None and hand.number not in announced:
                    announced.add(hand.number)
                    yield match_pb2.WatchMatchResponse(
                        hand_ended=convert.hand_ended_to_pb(m.id, hand, hands))
            if m.state != RUNNING and next_seq >= m.seq:
                yield match_pb2.WatchMatchResponse(match_ended=convert.match_to_pb(m))
                return
            notify.wait(key, version, 1.0)


class BotServicer(bot_pb2_grpc.BotServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings) -> None:
        self.sessions = sessions
        self.config = config
        self.presence = Presence(sessions, config.heartbeat_s)

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
        return challenges.challenge_rpc(request, token_of(context), self.sessions, self.config)

    def Play(self, request_iterator, context):  # type: ignore[no-untyped-def]
        try:
            bot = bots.bot_for_token(token_of(context), sessions=self.sessions)
            admin.check_may_play(bot)  # a suspended bot is refused
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            _abort(context, e, "Play")
            return
        session = PlaySession(bot, self.sessions, self.config)
        # ended if the bot is suspended or its token rotated meanwhile
        watch = streams.watch(bot, self.sessions, session.close, self.config.heartbeat_s)
        self.presence.opened(bot.id)
        ended = threading.Lock()

        def end() -> None:  # once, whether the call ends or the generator is closed
            if ended.acquire(blocking=False):
                session.close()
                self.presence.closed(bot.id)
                watch.cancel()

        if not context.add_callback(end):
            end()  # the call ended already
            return
        try:
            threading.Thread(target=session.read, args=(request_iterator,), daemon=True,
                             name=f"play-reader-{bot.id}").start()
            yield from session.responses(context.is_active)
        except Exception as e:  # noqa: BLE001  (every error gets its safe status)
            _abort(context, e, "Play")
        finally:
            end()
        if watch.revoked is not None:
            _abort(context, watch.revoked, "Play")
