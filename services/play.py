"""One bot's Play stream: which turns, hand ends and match ends to send, and its answers.

The writer side is level-triggered: each step re-reads the bot's running matches from the
database and sends what the bot has not been sent yet, so a reconnecting bot (or a restarted
server) simply gets its pending turns again. Steps run when a match of the bot changes in this
process, and at least once a second for changes made by other processes.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Iterator

from bummerl import wire
from bummerl.v1 import bot_pb2
from sqlalchemy.orm import Session, sessionmaker

from db.models import RUNNING, Bot
from services import actions, clocks, convert, matches, metrics, notify, status
from services.config import Settings
from services.errors import Aborted, InvalidArgument, PermissionDenied, ServiceError

log = logging.getLogger(__name__)
# Changes made by another process (a worker playing a house bot, or creating a ladder match)
# are found by polling: quickly while a house bot is to act in one of the bot's matches.
POLL_SECONDS = 1.0
POLL_HOUSE_SECONDS = 0.05
POLL_IDLE_SECONDS = 2.0


class PlaySession:
    def __init__(self, bot: Bot, sessions: sessionmaker[Session] | None,
                 config: Settings | None) -> None:
        self.bot = bot
        self.sessions = sessions
        self.config = config
        self.key = f"bot:{bot.id}"
        self.outbox: queue.SimpleQueue[bot_pb2.PlayResponse] = queue.SimpleQueue()
        self.sent: dict[int, int] = {}  # match id -> seq of the turn last sent
        self.known: dict[int, int] = {}  # match id -> hand number last reported
        self.seats: dict[int, int] = {}  # match id -> the bot's seat
        self.closed = False
        self.poll = POLL_SECONDS

    # --- the bot's answers (reader thread) ---------------------------------------------------
    def read(self, requests: Iterator[bot_pb2.PlayRequest]) -> None:
        """Apply the bot's answers. A half-close (no more answers) keeps the stream open: the
        bot may still listen; the stream ends when the call ends (see `close`)."""
        try:
            for request in requests:
                if request.WhichOneof("message") == "action":
                    self.answer(request.action)
        except Exception as e:  # noqa: BLE001  (the call ended or broke: the writer stops)
            log.debug("play stream of bot %d ended: %r", self.bot.id, e)
            self.close()

    def close(self) -> None:
        self.closed = True
        notify.notify(self.key)

    def answer(self, answer: bot_pb2.TurnAnswer) -> None:
        try:
            seat = self.seats.get(answer.match_id)
            if seat is None:
                match = matches.get_match(answer.match_id, sessions=self.sessions)
                seat = match.seat_of(self.bot.id)
            if seat is None:
                raise PermissionDenied(
                    f"bot {self.bot.id} does not play in match {answer.match_id}")
            action = wire.action_from_pb(answer.action)
            actions.submit_action(
                answer.match_id, seat, action, expected_seq=answer.seq,
                request_id=answer.request_id or None, bot_id=self.bot.id,
                sessions=self.sessions, config=self.config)
        except Exception as e:  # noqa: BLE001  (report it to the bot, keep the stream)
            if isinstance(e, ValueError):
                e = InvalidArgument(str(e))
            failure = status.failure_of(e, "Play answer")  # the safe code and message
            code = failure.code
            rejected = bot_pb2.ActionRejected(
                match_id=answer.match_id, seq=answer.seq, code=code, message=failure.message,
                rule=failure.rule or "")
            if isinstance(e, ServiceError):
                left = e.details.get("illegal_left")
                rejected.illegal_left = int(left) if isinstance(left, int) else 0
            if code != "ABORTED":  # stale: the current turn is (or will be) sent anyway
                self.sent.pop(answer.match_id, None)  # send the same turn again
            self.outbox.put(bot_pb2.PlayResponse(rejected=rejected))
            notify.notify(self.key)

    # --- what to send (writer, the gRPC response generator) ----------------------------------
    def responses(self, is_active) -> Iterator[bot_pb2.PlayResponse]:  # type: ignore[no-untyped-def]
        running = matches.running_matches_of(self.bot.id, sessions=self.sessions)
        yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(
            bot=convert.bot_to_pb(self.bot), running_matches=len(running)))
        while not self.closed and is_active():
            version = notify.version(self.key)
            while not self.outbox.empty():
                yield self.outbox.get()
            yield from self.step()
            notify.wait(self.key, version, self.poll)

    def step(self) -> Iterator[bot_pb2.PlayResponse]:
        rows = matches.match_states_of(self.bot.id, list(self.known), sessions=self.sessions)
        house_to_act = any(m.house_to_act() for m in rows)
        self.poll = POLL_HOUSE_SECONDS if house_to_act else POLL_SECONDS if rows else \
            POLL_IDLE_SECONDS
        for m in rows:
            seat = m.seat_of(self.bot.id)
            if seat is None:
                continue
            known = self.known.get(m.id)
            if known is not None and (m.hand_number > known or m.state != RUNNING):
                hands = matches.finished_hands(m.id, 0, sessions=self.sessions)
                for hand in hands:
                    if hand.number >= known:
                        yield bot_pb2.PlayResponse(
                            hand_ended=convert.hand_ended_to_pb(m.id, hand, hands))
            if m.state != RUNNING:  # finished, or aborted by an operator
                self.known.pop(m.id, None)
                self.sent.pop(m.id, None)
                match = matches.get_match(m.id, sessions=self.sessions)
                yield bot_pb2.PlayResponse(match_ended=bot_pb2.MatchEnded(
                    seat=seat, won=m.winner == seat, match=convert.match_to_pb(match)))
                continue
            self.known[m.id] = m.hand_number
            self.seats[m.id] = seat
            if m.to_act == seat and self.sent.get(m.id) != m.seq:
                turn = self.turn(m, seat)
                if turn is not None:
                    self.sent[m.id] = m.seq
                    metrics.TURNS_PUSHED.inc()
                    yield bot_pb2.PlayResponse(turn=turn)

    def turn(self, m: matches.MatchState, seat: int) -> bot_pb2.Turn | None:
        try:
            obs = matches.observe_match(m, seat, sessions=self.sessions)
        except Aborted:
            return None  # it moved on meanwhile; the next step sends the new state
        return bot_pb2.Turn(
            match_id=m.id, seat=seat, seq=m.seq,
            observation=wire.observation_to_pb(obs),
            deadline=convert.timestamp(m.deadline_at),
            bank_left_ms=clocks.bank_left(m, seat),
        )
