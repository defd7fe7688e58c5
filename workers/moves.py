"""House-bot moves in live matches: computed on a worker, submitted over gRPC like any bot's.

`play_house_move(match_id, seat, seq, strategy=..., observation=...)` decides from the seat's
observation, which the service put in the task's message when it announced the turn (a
serialized `GetObservationResponse`, base64), or else (a sweeper's message, a service that did
not have the game at hand) asks the engine service for (GetObservation, at
`BUMMERL_SERVICE_ADDRESS`, default 127.0.0.1:50051) with the house credential
(`BUMMERL_HOUSE_TOKEN`, which may act only for seats held by house bots). The seat's house
strategy chooses, and the action is submitted (SubmitAction) with `expected_seq=seq` and the
request id `house_request_id(match, seat, seq)`, which no one without the house token can
guess. The worker reads no match rows to decide and writes none: the service is the one door
to every match. A duplicate or late task (redelivery, sweeper) finds the match moved on
(GetObservation), or its submit is refused as stale (ABORTED) or recognised as the same
request: never applied twice.

gRPC errors: stale or over (ABORTED, FAILED_PRECONDITION, NOT_FOUND) → nothing owed;
UNAVAILABLE or DEADLINE_EXCEEDED → retried with backoff a few times, then left to the sweeper
(`redispatch_house_turns`, which still reads the matches to find owed house moves, and enqueues
them with the sender it is given: `workers.tasks.send_move`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from google.protobuf.message import DecodeError
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bots import make_bot
from db.base import aware, session_factory
from db.models import HOUSE, RUNNING, Bot, Match
from workers.service import CALL_TIMEOUT, service

log = logging.getLogger(__name__)
T = TypeVar("T")

# Enqueues a house move: send(match_id, seat, seq, strategy=...) (workers.tasks.send_move).
MoveSender = Callable[..., None]

RETRY_DELAYS = (0.1, 0.3, 1.0, 2.0)  # backoff after UNAVAILABLE / DEADLINE_EXCEEDED
NOTHING_OWED = ("ABORTED", "FAILED_PRECONDITION", "NOT_FOUND")
RETRIED = ("UNAVAILABLE", "DEADLINE_EXCEEDED")


def think_seconds() -> float:
    """Time a house bot may think per move (search bots stop early), `BUMMERL_HOUSE_THINK_S`."""
    return float(os.environ.get("BUMMERL_HOUSE_THINK_S", "1.0"))


def min_think_seconds() -> float:
    """The least time a house bot takes to answer a person (`BUMMERL_HOUSE_MIN_THINK_MS`,
    default 700), counted from when the service sent its move task, after the commit of the
    person's action (`workers.tasks.move_message`); bot-against-bot matches never wait."""
    return max(0.0, float(os.environ.get("BUMMERL_HOUSE_MIN_THINK_MS", "700")) / 1000)


def bot_options(strategy: str) -> dict[str, object]:
    """Options of house bots in live play: `BUMMERL_RDEEP_SAMPLES` (playouts per action)."""
    if strategy == "rdeep" and os.environ.get("BUMMERL_RDEEP_SAMPLES"):
        return {"samples": int(os.environ["BUMMERL_RDEEP_SAMPLES"])}
    return {}


def house_request_id(match_id: int, seat: int, seq: int, token: str | None = None) -> str:
    """The request id of the house move of `seat` at `seq` of match `match_id`:
    `house:<match>:<seq>:` and an HMAC-SHA256 of (match, seat, seq) keyed with the house token
    (`token`, default `BUMMERL_HOUSE_TOKEN`), 96 bits in hex.

    Unguessable: the service keys request ids by (match, seat, request id), so another seat's
    id could not block this one anyway; the secret part makes sure no one can even name it
    (issue 44: with `house:<match>:<seq>`, a person or a bot sent its own move with the house's
    next id and the house's move was refused until it forfeited on time).

    Deterministic for a retry of the same move: every attempt at that turn, in this process or
    in another worker's (a task redelivered after its worker crashed, the sweeper's re-enqueued
    task), makes the same id from the same token, so a submit whose first attempt was applied
    before the crash is answered as a duplicate (the same seq), never applied twice, provided
    it decides the same action (the move's randomness is seeded by match and seq; a search bot
    that stopped at a different point may decide another one: then the id is refused as used
    for another action, and the move that was applied stands). A different token (rotated
    between the attempts) makes another id: that retry is then refused as stale (ABORTED), as
    any late task is, since the first attempt moved the match on. Without a token (a
    misconfigured worker, which the service refuses anyway) the key is this process's own
    random secret."""
    key = (token if token is not None else os.environ.get("BUMMERL_HOUSE_TOKEN", "")).encode()
    digest = hmac.new(key or _PROCESS_SECRET, f"{match_id}:{seat}:{seq}".encode(),
                      hashlib.sha256).hexdigest()[:24]
    return f"house:{match_id}:{seq}:{digest}"


_PROCESS_SECRET = os.urandom(32)


def _code(error: Exception) -> str:
    code = getattr(error, "code", None)
    return code().name if callable(code) else "UNKNOWN"


def _call(what: str, call: Callable[[], T]) -> T:
    """`call()`, retried with backoff while the service is unavailable."""
    import grpc

    for delay in (*RETRY_DELAYS, None):
        try:
            return call()
        except grpc.RpcError as e:
            if _code(e) not in RETRIED or delay is None:
                raise
            log.warning("%s: service %s, retrying in %.1f s", what, _code(e), delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def message_observation(observation: str | None, seq: int, what: str) -> Any:
    """The `GetObservationResponse` a task's message carries, or None (none, or unreadable:
    then the task asks the service)."""
    if not observation:
        return None
    from bummerl.v1 import match_pb2

    try:
        data = base64.b64decode(observation, validate=True)
        reply = match_pb2.GetObservationResponse.FromString(data)
    except (ValueError, DecodeError) as e:
        log.warning("%s: unreadable observation in the message (%s); asking the service",
                    what, e)
        return None
    if reply.seq != seq or not reply.HasField("observation"):
        log.warning("%s: the message's observation is for seq %s; asking the service",
                    what, reply.seq)
        return None
    return reply


def play_house_move(match_id: int, seat: int, seq: int, *, strategy: str | None = None,
                    observation: str | None = None, not_before: float | None = None) -> bool:
    """Compute and submit the house bot's move over gRPC; True if this call's action was
    applied (False: nothing owed, or left to the sweeper). `strategy` and `observation` (the
    seat's, at `seq`, as `HouseTurn.encoded()` gives it) spare the calls that would ask for
    them. `not_before` (a time.time(); a person plays the other seat: `workers.tasks.
    move_message`): the answer is not submitted before then (waiting at most
    `min_think_seconds()`, whatever the clocks say)."""
    import grpc
    from bummerl import wire
    from bummerl.v1 import match_pb2

    what = f"house move {match_id}/{seat}/{seq}"
    svc = service()
    try:
        reply: Any = message_observation(observation, seq, what)
        if reply is None:
            reply = _call(what, lambda: svc.matches.GetObservation(
                match_pb2.GetObservationRequest(match_id=match_id, seat=seat),
                metadata=svc.auth, timeout=CALL_TIMEOUT))
        if reply.seq != seq or reply.observation.to_act != seat:
            log.info("%s: nothing owed (the match is at seq %s)", what, reply.seq)
            return False
        if not strategy:
            strategy = _call(what, lambda: svc.strategy(match_id, seat))
        obs = wire.observation_from_pb(reply.observation)
        budget = think_seconds()
        if reply.HasField("deadline"):
            left = reply.deadline.ToDatetime(tzinfo=UTC) - datetime.now(UTC)
            budget = max(0.05, min(budget, left.total_seconds() - 0.5))
        rng = random.Random(f"house:{match_id}:{seq}")
        action = make_bot(strategy, **bot_options(strategy)).choose(
            obs, rng, deadline=time.monotonic() + budget)
        if not_before is not None:  # a person plays the other seat: a believable pace
            time.sleep(max(0.0, min(not_before - time.time(), min_think_seconds())))
        request = match_pb2.SubmitActionRequest(
            match_id=match_id, seat=seat, action=wire.action_to_pb(action), expected_seq=seq,
            request_id=house_request_id(match_id, seat, seq))
        attempts = 0

        def submit() -> Any:
            nonlocal attempts
            attempts += 1
            return svc.matches.SubmitAction(request, metadata=svc.auth, timeout=CALL_TIMEOUT)

        result = _call(what, submit)
    except grpc.RpcError as e:
        code = _code(e)
        details = e.details() if hasattr(e, "details") else e
        if code in NOTHING_OWED:  # stale (someone else moved), match over: nothing owed
            log.info("%s not applied: %s %s", what, code, details)
        elif code in RETRIED:
            log.warning("%s: service still %s; the sweeper will re-enqueue it", what, code)
        else:
            log.error("%s refused: %s %s", what, code, details)
        return False
    # duplicate: the same request id was applied before: by an earlier attempt of this call
    # (a retry after UNAVAILABLE), or by another task for the same turn.
    return not result.duplicate or attempts > 1


def redispatch_house_turns(stale_seconds: float, sessions: sessionmaker[Session] | None = None,
                           *, send: MoveSender) -> list[int]:
    """Sweeper part: enqueue (`send`) the move of every running match waiting for a house bot
    for more than `stale_seconds`; the match ids. (It reads the matches; it writes none.)"""
    sessions = sessions or session_factory()
    cutoff = datetime.now(UTC) - timedelta(seconds=stale_seconds)
    owed: list[tuple[int, int, int, str | None]] = []
    with sessions() as s:
        rows = s.scalars(select(Match).where(Match.state == RUNNING, Match.to_act.is_not(None)))
        for match in rows:
            seat = match.to_act
            assert seat is not None
            since = match.turn_started_at or match.created_at
            if aware(since) > cutoff:
                continue
            bot: Bot = match.bot(seat)
            if bot.kind == HOUSE:
                owed.append((match.id, seat, match.seq, bot.house_strategy))
    # ids and the strategy only: the task asks the service for the observation (GetObservation)
    for match_id, seat, seq, strategy in owed:
        send(match_id, seat, seq, strategy=strategy)
    if owed:
        log.warning("sweeper: re-enqueued %d house move(s): %s", len(owed),
                    [(m, s, q) for m, s, q, _ in owed])
    return [m for m, _, _, _ in owed]
