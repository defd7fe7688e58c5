"""Connect a Bot to a bummerl server over the Play stream and play until stopped."""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
from bummerl import wire
from bummerl.v1 import bot_pb2, bot_pb2_grpc

import engine
from client.bot import Bot
from client.connect import channel as open_channel

log = logging.getLogger("bummerl.client")


@dataclass
class Stats:
    turns: int = 0
    rejected: int = 0
    matches_won: int = 0
    matches_lost: int = 0
    errors: list[str] = field(default_factory=list)


class Runner:
    """Plays `bot` with `token` on `server` until `max_matches` matches ended or `stop()`."""

    def __init__(self, bot: Bot, server: str, token: str, *, max_matches: int | None = None,
                 client_name: str = "bummerl-python-client/0.1", tls: bool = False,
                 ca: str | None = None) -> None:
        self.bot = bot
        self.server = server
        self.token = token
        self.max_matches = max_matches
        self.client_name = client_name
        self.tls, self.ca = tls, ca  # TLS, trusting the system's roots or the PEM file `ca`
        self.stats = Stats()
        self._outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        self._stopped = threading.Event()
        self._call: grpc.Future | None = None
        self.bot_info: bot_pb2.Bot | None = None

    # --- hooks for subclasses (e.g. the benchmark) ---------------------------------------
    def on_turn(self, turn: bot_pb2.Turn) -> None:
        """Called when a turn arrives, before the bot is asked."""

    def on_answer(self, turn: bot_pb2.Turn) -> None:
        """Called right after the answer to `turn` was queued for sending."""

    # --- running -------------------------------------------------------------------------
    def stop(self) -> None:
        self._stopped.set()
        self._outbox.put(None)
        if self._call is not None:
            self._call.cancel()

    def _requests(self, outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None]
                  ) -> Iterator[bot_pb2.PlayRequest]:
        yield bot_pb2.PlayRequest(hello=bot_pb2.Hello(client=self.client_name))
        while True:
            item = outbox.get()
            if item is None:
                return
            yield item

    def run(self, *, retries: int = 5) -> Stats:
        """Play; on a lost connection, reconnect (up to `retries` times in a row)."""
        failures = 0
        while not self._stopped.is_set():
            try:
                with open_channel(self.server, tls=self.tls, ca=self.ca) as channel:
                    self._play(bot_pb2_grpc.BotServiceStub(channel))
                failures = 0
            except grpc.RpcError as e:
                code = e.code() if hasattr(e, "code") else None
                if self._stopped.is_set() or code == grpc.StatusCode.CANCELLED:
                    break
                if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                    raise
                failures += 1
                if failures > retries:
                    raise
                log.warning("connection lost (%s); reconnecting", code)
                time.sleep(min(5.0, 0.2 * 2**failures))
        return self.stats

    def _play(self, stub: bot_pb2_grpc.BotServiceStub) -> None:
        self._outbox.put(None)  # ends the request stream of the previous connection, if any
        self._outbox = queue.SimpleQueue()
        call = stub.Play(self._requests(self._outbox),
                         metadata=(("authorization", f"Bearer {self.token}"),))
        self._call = call
        for response in call:
            kind = response.WhichOneof("message")
            if kind == "welcome":
                self.bot_info = response.welcome.bot
                log.info("playing as %s (%d running matches)", response.welcome.bot.name,
                         response.welcome.running_matches)
            elif kind == "turn":
                self._turn(response.turn)
            elif kind == "rejected":
                r = response.rejected
                self.stats.rejected += 1
                log.warning("match %d: action refused: %s %s", r.match_id, r.code, r.message)
            elif kind == "hand_ended":
                h = response.hand_ended
                self.bot.hand_ended(h.match_id, h.hand_number, {
                    "winner": h.result.winner, "game_points": h.result.game_points,
                    "reason": h.result.reason, "points": list(h.result.points),
                    "tricks": list(h.result.tricks)})
            elif kind == "match_ended":
                self._match_ended(response.match_ended)
            if self._stopped.is_set():
                call.cancel()
                return
        self.stop()

    def _turn(self, turn: bot_pb2.Turn) -> None:
        self.on_turn(turn)
        self.stats.turns += 1
        observation = wire.observation_from_pb(turn.observation)
        try:
            action = self.bot.act(observation)
            if isinstance(action, str):
                action = engine.Action.from_text(action)
        except Exception as e:  # noqa: BLE001  (a buggy bot must not kill the connection)
            log.exception("the bot failed on match %d; playing its first legal action",
                          turn.match_id)
            self.stats.errors.append(repr(e))
            action = observation.legal_actions[0]
        self._outbox.put(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
            match_id=turn.match_id, seq=turn.seq, action=wire.action_to_pb(action),
            request_id=uuid.uuid4().hex)))
        self.on_answer(turn)

    def _match_ended(self, ended: bot_pb2.MatchEnded) -> None:
        if ended.won:
            self.stats.matches_won += 1
        else:
            self.stats.matches_lost += 1
        self.bot.match_ended(ended.match.match_id, ended.won, ended.match.end_detail)
        done = self.stats.matches_won + self.stats.matches_lost
        if self.max_matches is not None and done >= self.max_matches:
            self.stop()


def run(bot: Bot, server: str = "127.0.0.1:50051", token: str = "", *,
        max_matches: int | None = None, tls: bool = False, ca: str | None = None) -> Stats:
    """Play `bot` on `server` with its `token` (blocks; Ctrl-C to stop); over TLS with `tls`
    (trusting the PEM file `ca` if given)."""
    runner = Runner(bot, server, token, max_matches=max_matches, tls=tls, ca=ca)
    try:
        return runner.run()
    except KeyboardInterrupt:
        runner.stop()
        return runner.stats
