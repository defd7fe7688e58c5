"""Challenge another bot from the kit: `challenge(server, token, "house-rdeep", matches=5)`.

The matches start at once and are unrated; play them by running the bot (`bummerl bot run`),
before or after challenging.
"""

from __future__ import annotations

import grpc
from bummerl.v1 import bot_pb2, bot_pb2_grpc, common_pb2, match_pb2


def challenge_request(opponent: str, matches: int = 1, profile: str = "soft",
                      move_ms: int = 0, bank_ms: int = 0) -> bot_pb2.ChallengeRequest:
    return bot_pb2.ChallengeRequest(
        opponent=opponent, matches=matches,
        profile=common_pb2.PROFILE_SHARP if profile == "sharp" else common_pb2.PROFILE_SOFT,
        time_control=match_pb2.TimeControl(move_ms=move_ms, bank_ms=bank_ms))


def challenge(server: str | grpc.Channel, token: str, opponent: str, matches: int = 1, *,
              profile: str = "soft", move_ms: int = 0, bank_ms: int = 0,
              timeout: float = 30) -> list[match_pb2.Match]:
    """Start `matches` unrated matches of the token's bot against `opponent`; the matches."""
    request = challenge_request(opponent, matches, profile, move_ms, bank_ms)
    metadata = (("authorization", f"Bearer {token}"),)
    if isinstance(server, str):
        with grpc.insecure_channel(server) as channel:
            reply = bot_pb2_grpc.BotServiceStub(channel).Challenge(
                request, metadata=metadata, timeout=timeout)
    else:
        reply = bot_pb2_grpc.BotServiceStub(server).Challenge(
            request, metadata=metadata, timeout=timeout)
    return list(reply.matches)
