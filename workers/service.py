"""The engine service as a worker process sees it: the workers' one door to every match.

Workers change matches only through the service's gRPC API, with the house token
(`BUMMERL_HOUSE_TOKEN`): it may observe and act for the seats of house bots, and create matches
(the ladder's, and the legs of events' duplicate pairs); it is not the operator token. The
service is at `BUMMERL_SERVICE_ADDRESS` (default 127.0.0.1:50051). One channel per process, made
lazily (after the fork of a prefork pool child).
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

DEFAULT_SERVICE_ADDRESS = "127.0.0.1:50051"
CALL_TIMEOUT = 5.0  # seconds per gRPC call (retried on DEADLINE_EXCEEDED)


class Service:
    """A channel to the service, the house token, and the strategy of each house seat seen (a
    match's bots never change)."""

    def __init__(self, address: str, token: str) -> None:
        import grpc
        from bummerl.v1 import bot_pb2_grpc, match_pb2_grpc

        self.address = address
        self.pid = os.getpid()
        self.channel = grpc.insecure_channel(address)
        self.matches = match_pb2_grpc.MatchServiceStub(self.channel)
        self.bots = bot_pb2_grpc.BotServiceStub(self.channel)
        self.auth = (("authorization", f"Bearer {token}"),)
        self.strategies: dict[tuple[int, int], str] = {}

    def strategy(self, match_id: int, seat: int) -> str:
        """The house strategy of `seat` (GetMatch, GetBot: public records)."""
        from bummerl.v1 import bot_pb2, match_pb2

        key = (match_id, seat)
        if key not in self.strategies:
            match = self.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id),
                                          timeout=CALL_TIMEOUT).match
            bot = self.bots.GetBot(bot_pb2.GetBotRequest(bot_id=match.bot_ids[seat]),
                                   timeout=CALL_TIMEOUT).bot
            if len(self.strategies) > 10_000:
                self.strategies.clear()
            self.strategies[key] = bot.house_strategy
        return self.strategies[key]

    def create_match(self, bot_ids: tuple[int, int] | list[int], profile: str,
                     ladder: bool = False) -> int:
        """Create a match (CreateMatch) between `bot_ids` in rules `profile`, with `ladder` a
        ladder match (recorded so by the service in the same transaction); its id."""
        from bummerl import wire
        from bummerl.v1 import match_pb2

        import engine

        request = match_pb2.CreateMatchRequest(
            bot_ids=list(bot_ids), profile=wire.PROFILES[engine.Profile(profile)],
            ladder=ladder)
        reply = self.matches.CreateMatch(request, metadata=self.auth, timeout=CALL_TIMEOUT)
        return int(reply.match.match_id)

    def create_pair_match(self, pair_id: int, leg: int) -> int:
        """Create leg `leg` of duplicate pair `pair_id` (CreateMatch with the pair; everything
        else comes from the pair's row); its match id. Idempotent: asked again, the service
        returns the match it made the first time (`services.core.pairs`)."""
        from bummerl.v1 import match_pb2

        request = match_pb2.CreateMatchRequest(pair_id=pair_id, pair_leg=leg)
        reply = self.matches.CreateMatch(request, metadata=self.auth, timeout=CALL_TIMEOUT)
        return int(reply.match.match_id)


_service: Service | None = None


def service() -> Service:
    """This process's connection to the engine service (`BUMMERL_SERVICE_ADDRESS`, with
    `BUMMERL_HOUSE_TOKEN`)."""
    global _service
    address = os.environ.get("BUMMERL_SERVICE_ADDRESS") or DEFAULT_SERVICE_ADDRESS
    token = os.environ.get("BUMMERL_HOUSE_TOKEN", "")
    if _service is None or _service.pid != os.getpid() or _service.address != address:
        if not token:
            log.error("BUMMERL_HOUSE_TOKEN is not set: the service will refuse this worker "
                      "(UNAUTHENTICATED); give the workers the service's house token")
        _service = Service(address, token)
    return _service
