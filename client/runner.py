"""Connect a Bot to a bummerl server over the Play stream and play until stopped.

- It never gives up on a lost connection: it reconnects forever, waiting `Backoff` between
  attempts (capped exponential, with jitter); a connection that got the service's Welcome counts
  as a success and resets the wait. Only a refused token ends it (`TokenRefused`).
- It logs one line per event (logger "bummerl.client", see `client.events`): connected, match
  started, hand ended, match ended, action refused, connection lost, reconnected.
- It asks the bot for several matches at once from a small thread pool (`parallel`); calls into
  the bot are serialized by a lock unless the bot class says `thread_safe = True`, so a bot
  written without threads in mind is safe. Never two calls for the same turn.
- `drain()` (the first Ctrl-C, or `max_matches` reached): tell the service the bot takes no
  new matches (PlayRequest.drain: the ladder, tournaments and challengers leave it out from
  then on), finish every running match, including any the service lists in its answer, then
  disconnect. `abandon()` (the second Ctrl-C): leave now, and log which matches will be
  forfeited on time and when.
- `max_matches=N` counts the matches this run takes: every match of the bot it learns of,
  ladder or challenge, those already running when it connects included. On the Nth it drains;
  it never leaves a running match: one that arrives after the Nth (decided before the service
  heard of the drain) is played to the end too, and the log says so.
- `challenges_only=True`: the Hello says so, and the ladder and tournaments never pair the bot;
  a service that does not confirm it in its Welcome is left at once (`Unsupported`).
- `people="casual"` or `"rated"`: the Hello says the bot plays people (PeopleService: the
  site's table in the browser), casual games only or rated too; the same check of the Welcome.
- Another process of the bot with the same version and kind of matches takes over (each run
  names itself in `Hello.instance`): the service tells this one why (NOTICE_KIND_REPLACED) and
  ends its stream; the kit logs it in one line (event `replaced`) and stops, never reconnecting
  (two processes of one version would race for every turn).
- The Hello says the kit's protocol version (`bummerl.protocol.PROTOCOL`), the Welcome the
  service's range: a kit older than the service's oldest is refused, and stops with the
  service's one line (naming both versions and the upgrade command: `Unsupported`); a kit newer
  than the service's newest says so in one line (event `notice`, kind `protocol-newer`) and
  plays on.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
from bummerl import protocol, wire
from bummerl.v1 import bot_pb2, bot_pb2_grpc, common_pb2, match_pb2, match_pb2_grpc

import engine
from client.bot import Bot
from client.connect import channel as open_channel
from client.errors import KitError, TokenRefused, Unsupported
from client.events import event

log = logging.getLogger("bummerl.client")

FATAL_CODES = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
END_REASONS = {
    match_pb2.END_REASON_PLAYED: "played out",
    match_pb2.END_REASON_FORFEIT_TIMEOUT: "forfeit on time",
    match_pb2.END_REASON_FORFEIT_ILLEGAL: "forfeit for illegal actions",
}
PROFILES = {common_pb2.PROFILE_SOFT: "soft", common_pb2.PROFILE_SHARP: "sharp"}
MAX_VERSION = 100  # characters of Hello.version the service takes
MATCH_POINTS = 7  # each seat's counter at the start of a match (R9.1)
DRAIN_CHECK_S = 5.0  # while draining: how often the running matches are listed again
ACK_WAIT_S = 10.0  # a drain the service has not confirmed by then: an older service


@dataclass(frozen=True)
class Backoff:
    """The wait between reconnection attempts: `initial_s` after the first failure, times
    `multiplier` after each further one, at most `max_s`; each wait is drawn uniformly from
    [(1 - jitter) * d, d] so that many bots cut off together do not come back together."""

    initial_s: float = 0.5
    max_s: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.5

    def delay(self, failures: int, rng: random.Random | None = None) -> float:
        d = min(self.max_s, self.initial_s * self.multiplier ** max(0, failures - 1))
        return d * (1 - self.jitter * (rng or random).random())


@dataclass
class Stats:
    turns: int = 0
    rejected: int = 0
    exceptions: int = 0  # turns on which the bot's act raised (the first legal action went)
    matches_won: int = 0
    matches_lost: int = 0
    connections: int = 0  # connections that got a Welcome
    reconnect_attempts: int = 0  # failed attempts and lost connections
    errors: list[str] = field(default_factory=list)


@dataclass
class Running:
    """What the kit knows of one running match of the bot."""

    match_id: int
    seat: int | None = None
    deadline: datetime | None = None  # of the turn it was last sent, if not answered yet
    opponent: str = ""


class Runner:
    """Plays `bot` with `token` on `server` until it took `max_matches` matches and finished
    them, or `stop()`."""

    def __init__(self, bot: Bot, server: str, token: str, *, max_matches: int | None = None,
                 client_name: str = "bummerl-python-client/0.3",
                 backoff: Backoff | None = None, parallel: int = 4, tls: bool = False,
                 ca: str | None = None, challenges_only: bool = False,
                 version: str | None = None, people: str | None = None) -> None:
        self.bot = bot
        # the version the Hello says: `version`, else the bot class's `version`, else none
        self.version = str(getattr(bot, "version", "") or "") if version is None else version
        if len(self.version) > MAX_VERSION or not self.version.isprintable():
            raise KitError(f"the bot's version must be printable and at most {MAX_VERSION} "
                           f"characters, not {self.version[:120]!r}")
        self.server = server
        self.tls, self.ca = tls, ca  # TLS, trusting the system's roots or the PEM file `ca`
        self.token = token
        self.max_matches = max_matches
        self.challenges_only = challenges_only
        # games with people (Hello.accepts_people): None, "casual" or "rated"
        modes: dict[str | None, common_pb2.AcceptsPeople] = {
            None: common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED,
            "casual": common_pb2.ACCEPTS_PEOPLE_CASUAL, "rated": common_pb2.ACCEPTS_PEOPLE_RATED}
        self.people = modes[people]
        self.client_name = client_name
        self.backoff = backoff or Backoff()
        self.stats = Stats()
        self.bot_info: bot_pb2.Bot | None = None
        self.speaker = type(bot).__name__  # who speaks in the log: the bot's name once known
        self.draining = False
        self.drain_reason = ""
        self._drain_acked = False  # the service confirmed the drain on this connection
        self._drain_started = 0.0  # time.monotonic() of the drain (or of its reconnect)
        self._taken: set[int] = set()  # the matches this run took (for max_matches)
        self._ended: set[int] = set()  # the matches that ended while it ran
        self._drained = False
        self._outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None] = queue.SimpleQueue()
        self._stopped = threading.Event()
        self._call: grpc.Future | None = None
        self._channel: grpc.Channel | None = None
        self._lock = threading.Lock()  # the kit's own state below
        self._bot_lock = threading.Lock() if not getattr(bot, "thread_safe", False) else None
        self._running: dict[int, Running] = {}
        self._in_flight: set[tuple[int, int]] = set()  # (match id, seq) the bot is deciding
        self._sent: dict[tuple[int, int], str] = {}  # (match id, seq) -> the action sent
        # answers sent and refusals heard per (match id, seq) (a turn refused is sent again with
        # the same seq): each refusal is counted and logged once, whether the one that forfeits
        # a match arrives before its MatchEnded, after it, or not at all (the kit left)
        self._answers: Counter[tuple[int, int]] = Counter()
        self._refusals: Counter[tuple[int, int]] = Counter()
        self._pool = ThreadPoolExecutor(max_workers=max(1, parallel),
                                        thread_name_prefix="bummerl-bot")
        self._rng = random.Random()
        # this run's id (Hello.instance): another process of the bot with the same version and
        # kind of matches takes over from it (NOTICE_KIND_REPLACED), and its reconnects are
        # its own
        self.instance = uuid.uuid4().hex
        self.replaced: str | None = None  # why the service ended this run (another process)

    # --- hooks for subclasses (e.g. the benchmark) ---------------------------------------
    def on_turn(self, turn: bot_pb2.Turn) -> None:
        """Called when a turn arrives, before the bot is asked."""

    def on_answer(self, turn: bot_pb2.Turn) -> None:
        """Called right after the answer to `turn` was queued for sending."""

    # --- the log ---------------------------------------------------------------------------
    def _event(self, level: int, name: str, message: str, *args: object, **fields: object
               ) -> None:
        """One event line (client.events), saying which bot speaks."""
        event(log, level, name, message, *args, bot=self.speaker, **fields)

    # --- stopping --------------------------------------------------------------------------
    def stop(self) -> None:
        self._stopped.set()
        self._outbox.put(None)
        call = self._call
        if call is not None:
            call.cancel()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def running_matches(self) -> list[int]:
        with self._lock:
            return sorted(self._running)

    def drain(self, reason: str = "stopping") -> None:
        """Take no new matches: tell the service, finish the running ones, then stop."""
        with self._lock:
            if self.draining:
                return
            self.draining = True
            self.drain_reason = reason
            self._drain_started = time.monotonic()
            connected = self._welcomed_this_time
        running = self.running_matches()
        if not connected and not running:  # not connected (yet): nothing to finish
            self._event(logging.WARNING, "draining", "%s: no running matches, exiting", reason,
                        matches=[], reason=reason)
            self.stop()
            return
        self._send_drain()
        self._event(logging.WARNING, "draining",
                    "%s: taking no new matches; finishing %d running match(es)%s, then exiting"
                    " (Ctrl-C %s to leave now: they would be forfeited on time)",
                    reason, len(running), f" {', '.join(map(str, running))}" if running else "",
                    "again" if reason == "stopping" else "twice", matches=running,
                    reason=reason)
        threading.Thread(target=self._watch_drain, daemon=True,
                         name="bummerl-drain").start()

    def _send_drain(self) -> None:
        self._outbox.put(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason=self.drain_reason)))

    def _watch_drain(self) -> None:
        """While draining: list the bot's running matches now and then (a match the stream has
        not told of yet is tracked, so it is played), and if the service never confirms the
        drain (an older service), finish what is listed and leave anyway."""
        warned = False
        while not self._stopped.wait(DRAIN_CHECK_S):
            try:
                listed = self._list_running()
            except grpc.RpcError as e:
                log.debug("could not list the running matches: %s", e,
                          extra={"bot": self.speaker})
                continue
            for m in listed:
                if m.match_id not in self._ended:
                    self._add_match(m.match_id)
            if not self._drain_acked and time.monotonic() - self._drain_started > ACK_WAIT_S:
                if not warned:
                    warned = True
                    self._event(logging.WARNING, "draining",
                                "the service did not confirm that it starts no new matches "
                                "for this bot (an older service?): exiting once the running "
                                "ones are over", matches=self.running_matches(),
                                reason=self.drain_reason)
                if not self.running_matches():
                    self._finish_drain()

    def _finish_drain(self) -> None:
        with self._lock:
            if self._drained:
                return
            self._drained = True
        if self.max_matches is not None and self.drain_reason.startswith("--matches"):
            self._event(logging.INFO, "drained", "%d match(es) played (--matches %d): exiting",
                        len(self._taken), self.max_matches, matches=len(self._taken))
        else:
            self._event(logging.WARNING, "drained", "all running matches finished; exiting",
                        matches=len(self._taken))
        self.stop()

    def abandon(self) -> list[str]:
        """Leave now; log (and return) which running matches will be forfeited, and when."""
        lines = []
        for match_id in self.running_matches():
            lines.append(self._forfeit_line(match_id))
        for line in lines:
            self._event(logging.WARNING, "abandoned", "%s", line)
        if not lines:
            self._event(logging.WARNING, "abandoned", "leaving now: no running matches")
        self.stop()
        return lines

    def _forfeit_line(self, match_id: int) -> str:
        with self._lock:
            info = self._running.get(match_id)
        try:
            m = self._matches().GetMatch(match_pb2.GetMatchRequest(match_id=match_id),
                                         timeout=3).match
        except grpc.RpcError:
            m = None
        seat = info.seat if info else None
        if m is not None and seat is None:
            seat = self._seat_in(m)
        if m is not None and m.state != match_pb2.MATCH_STATE_RUNNING:
            return f"match {match_id}: already over"
        if m is not None and seat is not None and m.to_act == seat and m.HasField("deadline"):
            when = m.deadline.ToDatetime(tzinfo=UTC)
            return (f"match {match_id} will be forfeited on time at "
                    f"{when:%H:%M:%S} UTC (the deadline of your turn now)")
        if info is not None and info.deadline is not None:
            return (f"match {match_id} will be forfeited on time at "
                    f"{info.deadline:%H:%M:%S} UTC (the deadline of your turn now)")
        if m is not None and seat is not None:
            bank = m.bank_left_ms[seat] if len(m.bank_left_ms) > seat else 0
            allowed = (m.time_control.move_ms + bank) / 1000
            return (f"match {match_id} will be forfeited on time {allowed:.0f} s after your "
                    f"next turn starts (move time + bank left)")
        return f"match {match_id} will be forfeited on time at your next turn"

    # --- running ---------------------------------------------------------------------------
    def _requests(self, outbox: queue.SimpleQueue[bot_pb2.PlayRequest | None]
                  ) -> Iterator[bot_pb2.PlayRequest]:
        yield bot_pb2.PlayRequest(hello=bot_pb2.Hello(client=self.client_name,
                                                      version=self.version,
                                                      challenges_only=self.challenges_only,
                                                      accepts_people=self.people,
                                                      instance=self.instance,
                                                      protocol=protocol.PROTOCOL))
        if self.draining:  # a reconnect while draining: the new stream takes nothing new
            yield bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason=self.drain_reason))
        while True:
            item = outbox.get()
            if item is None:
                return
            yield item

    def make_channel(self) -> grpc.Channel:
        """The channel to the service (a subclass may add credentials)."""
        return open_channel(self.server, tls=self.tls, ca=self.ca)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    def _matches(self) -> match_pb2_grpc.MatchServiceStub:
        """The MatchService, on a channel of its own (kept across reconnects)."""
        with self._lock:
            if self._channel is None:
                self._channel = self.make_channel()
            return match_pb2_grpc.MatchServiceStub(self._channel)

    def _list_running(self) -> list[match_pb2.Match]:
        if self.bot_info is None:
            return []
        reply = self._matches().ListMatches(match_pb2.ListMatchesRequest(
            state=match_pb2.MATCH_STATE_RUNNING, bot_id=self.bot_info.bot_id, page_size=100),
            metadata=self._metadata(), timeout=5)
        return list(reply.matches)

    def run(self) -> Stats:
        """Play until stopped, reconnecting forever; raises `TokenRefused` for a bad token."""
        failures = 0
        try:
            while not self._stopped.is_set():
                reason = "the service ended the stream"
                try:
                    with self.make_channel() as channel:
                        self._play(bot_pb2_grpc.BotServiceStub(channel))
                except grpc.RpcError as e:
                    code = e.code() if hasattr(e, "code") else None
                    if self._stopped.is_set():
                        break
                    if code in FATAL_CODES:
                        # UNAUTHENTICATED's own words speak of gRPC metadata: say it plainly
                        details = ("no bot has this token"
                                   if code == grpc.StatusCode.UNAUTHENTICATED
                                   else e.details() if hasattr(e, "details") else str(e))
                        raise TokenRefused(
                            f"the service at {self.server} refused the bot token ({details}): "
                            "pass the token `bummerl bot register` printed, with --token or "
                            "$BUMMERL_TOKEN") from e
                    details = e.details() if hasattr(e, "details") else ""
                    reason = f"{code.name if code else 'error'}: {details}"
                if self._stopped.is_set():
                    break
                if self._welcomed_this_time:
                    failures = 0  # a live connection was a success: start the backoff over
                failures += 1
                self.stats.reconnect_attempts += 1
                delay = self.backoff.delay(failures, self._rng)
                what = "connection to %s lost" if self._welcomed_this_time else \
                    "cannot reach the bummerl service at %s" if self.stats.connections == 0 \
                    else "cannot reconnect to %s"
                self._event(logging.WARNING, "disconnected",
                            what + " (%s); retrying in %.1f s (attempt %d; the kit never gives "
                            "up)", self.server, _short(reason), delay, failures,
                            server=self.server, reason=_short(reason),
                            retry_in_s=round(delay, 2), attempt=failures)
                self._stopped.wait(delay)
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
            with self._lock:
                unary, self._channel = self._channel, None
            if unary is not None:
                unary.close()
        return self.stats

    _welcomed_this_time = False
    _told_protocol = False  # the kit said that it is newer than the service (once per run)

    def _play(self, stub: bot_pb2_grpc.BotServiceStub) -> None:
        self._welcomed_this_time = False
        self._drain_acked = False
        if self.draining:
            self._drain_started = time.monotonic()
        self._outbox.put(None)  # ends the request stream of the previous connection, if any
        self._outbox = queue.SimpleQueue()
        call = stub.Play(self._requests(self._outbox), metadata=self._metadata())
        self._call = call
        if self._stopped.is_set():
            call.cancel()
        for response in call:
            kind = response.WhichOneof("message")
            if kind == "welcome":
                self._welcome(response.welcome)
            elif kind == "turn":
                self._turn_arrived(response.turn)
            elif kind == "rejected":
                self._rejected(response.rejected)
            elif kind == "hand_ended":
                self._hand_ended(response.hand_ended)
            elif kind == "match_ended":
                self._match_ended(response.match_ended)
            elif kind == "notice":
                self._notice(response.notice)
            elif kind == "draining":
                self._draining(response.draining)
            if self._stopped.is_set():
                call.cancel()
                break

    def _welcome(self, welcome: bot_pb2.Welcome) -> None:
        ours = protocol.PROTOCOL
        low = welcome.protocol_min or protocol.UNSAID  # 0: a service from before the fields
        high = welcome.protocol_max or protocol.UNSAID
        if ours < low:  # (a service refuses such a kit before its Welcome: this is a safety)
            raise Unsupported(f"the service at {self.server} speaks protocol "
                              f"{protocol.span(low, high)}, this kit {ours}: upgrade with pip "
                              "install the wheel the site's dashboard offers at /kit")
        if ours > high and not self._told_protocol:
            self._told_protocol = True
            line = (f"the service at {self.server} speaks protocol {protocol.span(low, high)}, "
                    f"this kit {ours}: it may not know what this kit adds; playing on (the kit "
                    "that matches the site: its dashboard's /kit)")
            self._event(logging.WARNING, "notice", "%s", line, kind="protocol-newer",
                        code="OK", detail=line, field="")
        if self.challenges_only and not welcome.challenges_only:
            raise Unsupported(
                f"the service at {self.server} does not know --challenges-only (an older "
                "service): it could pair this bot on the ladder. Run without "
                "--challenges-only, or ask its operator to upgrade it")
        if self.people and welcome.accepts_people != self.people:
            raise Unsupported(
                f"the service at {self.server} does not know --people (an older service): "
                "no person will be offered this bot. Run without --people, or ask its "
                "operator to upgrade it")
        self._welcomed_this_time = True
        self.bot_info = welcome.bot
        self.speaker = welcome.bot.name
        self.stats.connections += 1
        again = self.stats.connections > 1
        joined = joined_of(welcome)
        who = f"{welcome.bot.name}@{welcome.version}" if welcome.version else welcome.bot.name
        self._event(logging.INFO, "reconnected" if again else "connected",
                    "%s %s as %s (bot id %d, %d running matches); the service confirms: %s",
                    "reconnected to" if again else "connected to", self.server,
                    who, welcome.bot.bot_id, welcome.running_matches,
                    joined_text(welcome, joined), server=self.server,
                    bot_id=welcome.bot.bot_id, running_matches=welcome.running_matches,
                    challenges_only=welcome.challenges_only, joined=joined,
                    version=welcome.version)
        if welcome.running_matches:  # learn which (and count them: they are this run's too)
            try:
                for m in self._list_running():
                    if m.match_id not in self._ended:
                        self._add_match(m.match_id)
            except grpc.RpcError as e:
                log.debug("could not list the running matches: %s", e,
                          extra={"bot": self.speaker})
        elif not again and not self.draining and not self.running_matches():
            self._event(logging.INFO, "waiting", "%s", self._waiting_hint())

    def _waiting_hint(self) -> str:
        challenge = ("`bummerl bot challenge --vs OPPONENT --token ...` (a house bot where "
                     "workers run, or a connected bot)")
        if self.challenges_only:
            return ("no match yet: connected for challenges only, so a challenge starts one: "
                    + challenge)
        return (f"no match yet: start one with {challenge}, or wait for the ladder, which pairs "
                "connected bots where its workers run (`bummerl up`; `bummerl serve` alone has "
                "no ladder and no house bots)")

    def _track(self, match_id: int, seat: int | None = None) -> bool:
        """Record a running match; True when it is new to the kit."""
        with self._lock:
            info = self._running.get(match_id)
            if info is None:
                if match_id in self._ended:
                    return False  # over already (a late message)
                self._running[match_id] = Running(match_id, seat)
                self._taken.add(match_id)
                taken = len(self._taken)
            else:
                if seat is not None:
                    info.seat = seat
                return False
        if self.max_matches is not None:
            if taken > self.max_matches:
                self._event(logging.WARNING, "extra_match",
                            "match %d arrived after --matches %d was reached (it was decided "
                            "before the service heard that this bot takes no more): playing it "
                            "to the end too", match_id, self.max_matches, match_id=match_id)
            elif taken == self.max_matches:
                self.drain(f"--matches {self.max_matches} reached")
        return True

    def _add_match(self, match_id: int) -> None:
        """A running match of the bot the kit learnt of from a list (not from the stream)."""
        if self._track(match_id):
            self._match_started(match_id, None)

    def _draining(self, d: bot_pb2.Draining) -> None:
        """The service confirmed the drain: no new match comes; these are running."""
        self._drain_acked = True
        for match_id in d.running_match_ids:
            if match_id not in self._ended:
                self._add_match(match_id)
        running = self.running_matches()
        if not running:
            self._finish_drain()
            return
        self._event(logging.INFO, "drain_confirmed",
                    "the service confirmed: no new match for this bot; %d running: %s",
                    len(running), ", ".join(map(str, running)), matches=running)

    def _match_started(self, match_id: int, seat: int | None) -> None:
        """Log a match the kit sees for the first time (one GetMatch)."""
        try:
            m = self._matches().GetMatch(match_pb2.GetMatchRequest(match_id=match_id),
                                         timeout=5).match
        except grpc.RpcError as e:
            self._event(logging.INFO, "match_started", "match %d: playing (details "
                        "unavailable: %s)", match_id,
                        e.code().name if hasattr(e, "code") else e, match_id=match_id)
            return
        if seat is None:
            seat = self._seat_in(m)
        opponent = seat_name(m, 1 - seat) if seat is not None else "?"
        with self._lock:
            if match_id in self._running:
                self._running[match_id].opponent = opponent
        tc = m.time_control
        self._event(logging.INFO, "match_started",
                    "match %d started: you (seat %s) vs %s, %s, move %.1f s + bank %.1f s",
                    match_id, seat, opponent, PROFILES.get(m.profile, "?"), tc.move_ms / 1000,
                    tc.bank_ms / 1000, match_id=match_id, seat=seat, opponent=opponent,
                    profile=PROFILES.get(m.profile, "?"), move_ms=tc.move_ms,
                    bank_ms=tc.bank_ms)

    def _seat_in(self, m: match_pb2.Match) -> int | None:
        """The bot's seat in `m` (None: not known); of the two, when the bot plays both (a
        version test), the one of this run's version."""
        me = self.bot_info.bot_id if self.bot_info else None
        seats = [i for i, bot_id in enumerate(m.bot_ids) if bot_id == me]
        if len(seats) > 1:
            seats = [i for i in seats if i < len(m.bot_versions)
                     and m.bot_versions[i] == self.version] or seats
        return seats[0] if seats else None

    def _turn_arrived(self, turn: bot_pb2.Turn) -> None:
        if self._track(turn.match_id, turn.seat):
            self._match_started(turn.match_id, turn.seat)
        key = (turn.match_id, turn.seq)
        with self._lock:
            info = self._running[turn.match_id]
            info.deadline = turn.deadline.ToDatetime(tzinfo=UTC) \
                if turn.HasField("deadline") else None
            if key in self._in_flight:
                return  # the same turn again (after a reconnect): the bot is deciding it
            self._in_flight.add(key)
        self.on_turn(turn)
        self._pool.submit(self._answer, turn)

    def _answer(self, turn: bot_pb2.Turn) -> None:
        key = (turn.match_id, turn.seq)
        try:
            self.stats.turns += 1
            observation = wire.observation_from_pb(turn.observation)
            log.debug("match %d seq %d: your turn (legal: %s)", turn.match_id, turn.seq,
                      " ".join(str(a) for a in observation.legal_actions),
                      extra={"bot": self.speaker})
            try:
                action = self._call_bot(self.bot.act, observation)
                if isinstance(action, str):
                    action = engine.Action.from_text(action)
            except Exception as e:  # noqa: BLE001  (a buggy bot must not kill the connection)
                log.exception("the bot failed on match %d; playing its first legal action",
                              turn.match_id, extra={"bot": self.speaker})
                self.stats.exceptions += 1
                self.stats.errors.append(repr(e))
                action = observation.legal_actions[0]
            with self._lock:
                self._sent[key] = str(action)
                self._answers[key] += 1
                info = self._running.get(turn.match_id)
                if info is not None:
                    info.deadline = None
            log.debug("match %d seq %d: answering %s", turn.match_id, turn.seq, action,
                      extra={"bot": self.speaker})
            # A random id: the service keys request ids by (match, seat, id), so even an id
            # made from the match and seq could not be squatted by the opponent (issue 44);
            # a random one cannot even be named by it.
            self._outbox.put(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
                match_id=turn.match_id, seq=turn.seq, action=wire.action_to_pb(action),
                request_id=uuid.uuid4().hex)))
            self.on_answer(turn)
        finally:
            with self._lock:
                self._in_flight.discard(key)

    def _call_bot(self, method, *args):  # type: ignore[no-untyped-def]
        if self._bot_lock is None:
            return method(*args)
        with self._bot_lock:
            return method(*args)

    def _rejected(self, r: bot_pb2.ActionRejected) -> None:
        key = (r.match_id, r.seq)
        with self._lock:
            if r.match_id in self._ended and self._refusals[key] >= self._answers[key]:
                log.debug("match %d seq %d: refusal already counted at the match's end",
                          r.match_id, r.seq, extra={"bot": self.speaker})
                return  # the forfeiting one, counted and logged with the match's end
            self._refusals[key] += 1
            self.stats.rejected += 1
            action = self._sent.get(key, "?")
        left = f"; {r.illegal_left} more illegal action(s) forfeit the match" \
            if r.illegal_left else ""
        self._refused_line(r.match_id, r.seq, action, r.code, r.rule, r.message, left,
                           illegal_left=r.illegal_left, field=r.field)

    def _refused_line(self, match_id: int, seq: int, action: str, code: str, rule: str,
                      message: str, more: str, **fields: object) -> None:
        # the rule once: the service's message starts with it already ("R4.1 you do not ...")
        shown = f" {rule}" if rule and not message.startswith(rule) else ""
        self._event(logging.WARNING, "refused", "match %d: %s refused (%s%s: %s)%s",
                    match_id, action, code, shown, message, more, match_id=match_id, seq=seq,
                    action=action, code=code, rule=rule, detail=message, **fields)

    def _forfeiting_refusal(self, m: match_pb2.Match) -> None:
        """A match the bot forfeited for illegal actions: the last of them is refused too, but
        its ActionRejected may come after the MatchEnded (or never: the kit leaves). Count and
        log it now, once, unless it came already."""
        with self._lock:
            keys = [k for k in self._answers if k[0] == m.match_id]
            if not keys:
                return
            key = max(keys)
            if self._refusals[key] >= self._answers[key]:
                return  # it came before the match's end
            self._refusals[key] += 1
            self.stats.rejected += 1
            action = self._sent.get(key, "?")
        last = m.end_detail.rpartition("last: ")[2] or m.end_detail
        rule = last.split(" ", 1)[0] if last[:1] == "R" and last[1:2].isdigit() else ""
        self._refused_line(m.match_id, key[1], action, "FAILED_PRECONDITION", rule, last,
                           ": the match is forfeited for illegal actions", illegal_left=0,
                           field="")

    def _notice(self, n: bot_pb2.Notice) -> None:
        """What the service says that is not about one answer (its Hello refused, ...)."""
        kind = (bot_pb2.NoticeKind.Name(n.kind).removeprefix("NOTICE_KIND_").lower()
                .replace("_", "-") if n.kind in bot_pb2.NoticeKind.values() else str(n.kind))
        if n.kind == bot_pb2.NOTICE_KIND_REPLACED:  # another process took over: stop here
            self.replaced = n.message
            self._event(logging.WARNING, "replaced", "%s", n.message, kind=kind, code=n.code,
                        detail=n.message)
            self.stop()
            return
        if n.kind == bot_pb2.NOTICE_KIND_PROTOCOL_REFUSED:  # too old for the service: stop
            raise Unsupported(n.message)
        self._event(logging.INFO if n.code == "OK" else logging.WARNING, "notice",
                    "the service says: %s (%s)", n.message, n.code, kind=kind, code=n.code,
                    detail=n.message, field=n.field)

    def _hand_ended(self, h: match_pb2.HandEnded) -> None:
        if self._track(h.match_id):
            self._match_started(h.match_id, None)
        with self._lock:
            info = self._running.get(h.match_id)
            seat = info.seat if info else None
        res = h.result
        outcome = "hand won" if seat == res.winner else "hand lost" if seat is not None \
            else f"seat {res.winner} won"
        self._event(logging.INFO, "hand_ended",
                    "match %d hand %d: %s, %d game point(s) (%s), points %s, %s",
                    h.match_id, h.hand_number, outcome, res.game_points, res.reason,
                    you_them(res.points, seat), match_score(h.counters, seat),
                    match_id=h.match_id, hand=h.hand_number, winner_seat=res.winner,
                    seat=seat, game_points=res.game_points, reason=res.reason,
                    points=list(res.points), counters=list(h.counters),
                    score=won_so_far(h.counters))
        self._call_bot(self.bot.hand_ended, h.match_id, h.hand_number, {
            "winner": res.winner, "game_points": res.game_points, "reason": res.reason,
            "points": list(res.points), "tricks": list(res.tricks)})

    def _match_ended(self, ended: bot_pb2.MatchEnded) -> None:
        m = ended.match
        with self._lock:
            if m.match_id in self._ended:
                return  # told twice (e.g. across a reconnect)
            self._ended.add(m.match_id)
            self._taken.add(m.match_id)
            self._running.pop(m.match_id, None)
            left = len(self._running)
        if not ended.won and m.end_reason == match_pb2.END_REASON_FORFEIT_ILLEGAL:
            self._forfeiting_refusal(m)
        with self._lock:
            keys = sorted(k for k in self._answers if k[0] == m.match_id)
            for key in keys[:-1]:  # (the last one's counts stay: its refusal may come late)
                self._answers.pop(key, None)
                self._refusals.pop(key, None)
            for key in [k for k in self._sent if k[0] == m.match_id]:
                del self._sent[key]
        if ended.won:
            self.stats.matches_won += 1
        else:
            self.stats.matches_lost += 1
        opponent = seat_name(m, 1 - ended.seat)
        reason = END_REASONS.get(m.end_reason, "ended")
        self._event(logging.INFO, "match_ended",
                    "match %d ended: %s vs %s, %s, %s%s", m.match_id,
                    "won" if ended.won else "lost", opponent,
                    match_score(m.counters, ended.seat), reason,
                    f" ({m.end_detail})" if m.end_detail else "", match_id=m.match_id,
                    won=ended.won, opponent=opponent, counters=list(m.counters), reason=reason,
                    detail=m.end_detail, seat=ended.seat, score=won_so_far(m.counters))
        self._call_bot(self.bot.match_ended, m.match_id, ended.won, m.end_detail)
        if self.max_matches is not None and len(self._taken) >= self.max_matches:
            self.drain(f"--matches {self.max_matches} reached")  # (if not draining yet)
        if self.draining and left == 0 and self._drain_acked:
            self._finish_drain()


def joined_of(welcome: bot_pb2.Welcome) -> list[str]:
    """What the service took this stream for, as its Welcome says: "ladder" (with
    tournaments) unless challenges only, "challenges", "people-casual" or "people-rated", and
    "version-tests" when it runs a version (a version test's matches of that version)."""
    joined = [] if welcome.challenges_only else ["ladder"]
    joined.append("challenges")
    if welcome.accepts_people == common_pb2.ACCEPTS_PEOPLE_CASUAL:
        joined.append("people-casual")
    elif welcome.accepts_people == common_pb2.ACCEPTS_PEOPLE_RATED:
        joined.append("people-rated")
    if welcome.version:
        joined.append("version-tests")
    return joined


def joined_text(welcome: bot_pb2.Welcome, joined: list[str]) -> str:
    """`joined_of`, for a person: what reaches this bot, as the service took it."""
    words = {"ladder": "the ladder and tournaments", "challenges": "challenges",
             "people-casual": "people's casual games (--people casual)",
             "people-rated": "people's casual and rated games (--people rated)",
             "version-tests": f"version tests of {welcome.version}"}
    text = ", ".join(words[j] for j in joined)
    if welcome.challenges_only:
        text += " (challenges only: the ladder does not pair it)"
    if not any(j.startswith("people") for j in joined):
        text += "; no people (--people casual or rated to play them)"
    return text


def seat_name(m: match_pb2.Match, seat: int) -> str:
    """Who plays `seat` of `m`: the bot's name, with the version it ran (mybot@2.0) when both
    seats are the same bot (a version test, or a bot against its other version)."""
    names, versions = list(m.bot_names), list(m.bot_versions)
    if len(names) != 2:
        return "?"
    if names[0] == names[1] and len(versions) == 2 and versions[seat]:
        return f"{names[seat]}@{versions[seat]}"
    return names[seat]


def won_so_far(counters: Any) -> list[int]:
    """The game points each seat has won in the match: 7 minus its counter (R9.1: counters
    go from 7 down; the first at 0 or below wins, so a winner's counter may end below 0)."""
    return [MATCH_POINTS - c for c in list(counters)[:2]]


def match_score(counters: Any, seat: int | None) -> str:
    """The match's score for the log, `match score 4:8 (you:them; game points, 7 win)`: the
    game points each seat has won (R9.1), not the counters from 7 down ("3:-1" read like a
    lead of the loser's)."""
    return "match score " + you_them(won_so_far(counters), seat).replace(
        ")", "; game points, 7 win)")


def you_them(pair: Any, seat: int | None) -> str:
    """A pair of numbers in seat order, as the log shows it: `74:46 (you:them)` from the
    bot's seat, or `46:74 (seat 0:1)` when its seat is not known."""
    first, second = list(pair)[:2]
    if seat == 1:
        return f"{second}:{first} (you:them)"
    return f"{first}:{second} (you:them)" if seat == 0 else f"{first}:{second} (seat 0:1)"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def run(bot: Bot, server: str = "127.0.0.1:50051", token: str = "", *,
        max_matches: int | None = None, tls: bool = False, ca: str | None = None,
        challenges_only: bool = False, version: str | None = None) -> Stats:
    """Play `bot` on `server` with its `token` (blocks; Ctrl-C to stop); over TLS with `tls`
    (trusting the PEM file `ca` if given); `max_matches`, `challenges_only` and `version` as
    `Runner`'s."""
    runner = Runner(bot, server, token, max_matches=max_matches, tls=tls, ca=ca,
                    challenges_only=challenges_only, version=version)
    try:
        return runner.run()
    except KeyboardInterrupt:
        runner.stop()
        return runner.stats
