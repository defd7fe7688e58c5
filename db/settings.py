"""Service settings, read from the environment once (tests pass their own `Settings`).

| variable | meaning | default |
|---|---|---|
| `BUMMERL_OPERATOR_TOKEN` | the operator's token (kept only as its SHA-256) | none |
| `BUMMERL_OPERATOR_TOKEN_SHA256` | or: the hex SHA-256 of the operator's token | none |
| `BUMMERL_HOUSE_TOKEN` | the house token: acts for house bots' seats only (SHA-256 kept) | none |
| `BUMMERL_HOUSE_TOKEN_SHA256` | or: the hex SHA-256 of the house token | none |
| `BUMMERL_WEB_TOKEN` | the web's credential for PeopleService (SHA-256 kept) | none |
| `BUMMERL_WEB_TOKEN_SHA256` | or: the hex SHA-256 of the web token | none |
| `BUMMERL_OPEN_REGISTRATION` | `1`: anyone may register a bot | `0` |
| `BUMMERL_MOVE_MS` | per-move time of a new match | 5000 |
| `BUMMERL_BANK_MS` | time bank of each seat of a new match | 30000 |
| `BUMMERL_MAX_ILLEGAL` | illegal actions that make a seat forfeit a match | 3 |
| `BUMMERL_HOUSE_MOVE_MS` | time a house bot (played by the workers) has per move | 120000 |
| `BUMMERL_HEARTBEAT_S` | a connected bot's presence heartbeat (`live.presence`), seconds | 5 |
| `BUMMERL_BUS_URL` | the change bus between replicas (Redis; `off`: none) | `REDIS_URL` |
| `BUMMERL_POLL_S` | a stream's safety-net read of the database while no bus is heard, s | 1 |
| `BUMMERL_SAFETY_S` | a stream's safety-net read while the change bus is up, seconds | 10 |
| `BUMMERL_GRPC_THREADS` | threads running the unary calls and the streams' database work | 32 |
| `BUMMERL_MAX_PLAY_STREAMS` | Play streams one bot (token) may have open on one server | 4 |
| `BUMMERL_MAX_WATCH_STREAMS` | WatchMatch streams one peer address may have open here | 64 |
| `BUMMERL_MAX_EXPORT_STREAMS` | ExportMatches streams one peer address may have open here | 4 |
| `BUMMERL_MAX_MESSAGE_BYTES` | largest request or response message | 1048576 |
| `BUMMERL_LADDER_MAX_WAIT_S` | a bot that waited this long gets the ladder's next tick, s | 600 |
| `BUMMERL_LADDER_PAIR_CAP` | ladder matches of two bots per profile per 24 h (0: none) | 20 |
| `BUMMERL_TESTS_PER_BOT` | open version tests per bot (docs/version-tests.md) | 2 |
| `BUMMERL_TEST_WAIT_S` | how long a version test waits for a side to connect, seconds | 600 |
| `BUMMERL_MAX_PENDING_CALLS` | calls arrived, not yet started here (a burst of connects) | 20000 |
| `BUMMERL_REFUSED_WAIT_S` | a refused Play stream waits this long for the Hello, seconds | 2 |
| `BUMMERL_HOSTING` | hosted bots on `podman`, `kubernetes` (images only); none: no uploads | none |
| `BUMMERL_HOSTED_PER_BOT` | a bot's hosted versions building, validating or live at once | 3 |
| `BUMMERL_HOSTED_CPU` / `_MEMORY_MB` | one hosted bot's container's cores, MiB | 0.5 / 256 |
| `BUMMERL_HOSTED_CPU_TOTAL` / `_MEMORY_TOTAL_MB` | what all of them may use together | 8 / 4096 |
| `BUMMERL_KIT_URL` | the site's kit wheel (the dashboard's /kit), named to a too-old kit | none |
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache


def sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Settings:
    operator_token_sha256: str | None = None
    house_token_sha256: str | None = None
    web_token_sha256: str | None = None
    open_registration: bool = False
    move_ms: int = 5000
    bank_ms: int = 30000
    max_illegal: int = 3
    house_move_ms: int = 120000
    heartbeat_s: float = 5.0
    bus_url: str | None = None
    poll_s: float = 1.0
    safety_s: float = 10.0
    grpc_threads: int = 32
    max_play_streams: int = 4
    max_watch_streams: int = 64
    # WatchMatch streams per address for the web's credential (its socket tier: one stream per
    # followed match, shared by all of that match's spectators)
    max_web_watch_streams: int = 5000
    max_export_streams: int = 4
    max_message_bytes: int = 1 << 20
    ladder_max_wait_s: float = 600.0
    ladder_pair_cap: int = 20
    tests_per_bot: int = 2
    test_wait_s: float = 600.0
    max_pending_calls: int = 20000
    refused_wait_s: float = 2.0
    kit_url: str | None = None
    hosting: str = ""  # "podman", "kubernetes", or "" (no hosted bots: uploads refused)
    hosted_per_bot: int = 3
    hosted_cpu: float = 0.5
    hosted_memory_mb: int = 256
    hosted_cpu_total: float = 8.0
    hosted_memory_total_mb: int = 4096

    @staticmethod
    def from_env() -> Settings:
        env = os.environ
        digest = env.get("BUMMERL_OPERATOR_TOKEN_SHA256") or None
        if env.get("BUMMERL_OPERATOR_TOKEN"):
            digest = sha256(env["BUMMERL_OPERATOR_TOKEN"])
        house = env.get("BUMMERL_HOUSE_TOKEN_SHA256") or None
        if env.get("BUMMERL_HOUSE_TOKEN"):
            house = sha256(env["BUMMERL_HOUSE_TOKEN"])
        web = env.get("BUMMERL_WEB_TOKEN_SHA256") or None
        if env.get("BUMMERL_WEB_TOKEN"):
            web = sha256(env["BUMMERL_WEB_TOKEN"])
        return Settings(
            operator_token_sha256=digest,
            house_token_sha256=house,
            web_token_sha256=web,
            open_registration=env.get("BUMMERL_OPEN_REGISTRATION", "0") == "1",
            move_ms=int(env.get("BUMMERL_MOVE_MS", "5000")),
            bank_ms=int(env.get("BUMMERL_BANK_MS", "30000")),
            max_illegal=int(env.get("BUMMERL_MAX_ILLEGAL", "3")),
            house_move_ms=int(env.get("BUMMERL_HOUSE_MOVE_MS", "120000")),
            heartbeat_s=float(env.get("BUMMERL_HEARTBEAT_S", "5")),
            bus_url=env.get("BUMMERL_BUS_URL") or env.get("REDIS_URL") or None,
            poll_s=float(env.get("BUMMERL_POLL_S", "1")),
            safety_s=float(env.get("BUMMERL_SAFETY_S", "10")),
            grpc_threads=int(env.get("BUMMERL_GRPC_THREADS", "32")),
            max_play_streams=int(env.get("BUMMERL_MAX_PLAY_STREAMS", "4")),
            max_watch_streams=int(env.get("BUMMERL_MAX_WATCH_STREAMS", "64")),
            max_web_watch_streams=int(env.get("BUMMERL_MAX_WEB_WATCH_STREAMS", "5000")),
            max_export_streams=int(env.get("BUMMERL_MAX_EXPORT_STREAMS", "4")),
            max_message_bytes=int(env.get("BUMMERL_MAX_MESSAGE_BYTES", str(1 << 20))),
            ladder_max_wait_s=float(env.get("BUMMERL_LADDER_MAX_WAIT_S", "600")),
            ladder_pair_cap=int(env.get("BUMMERL_LADDER_PAIR_CAP", "20")),
            tests_per_bot=int(env.get("BUMMERL_TESTS_PER_BOT", "2")),
            test_wait_s=float(env.get("BUMMERL_TEST_WAIT_S", "600")),
            max_pending_calls=int(env.get("BUMMERL_MAX_PENDING_CALLS", "20000")),
            refused_wait_s=float(env.get("BUMMERL_REFUSED_WAIT_S", "2")),
            kit_url=env.get("BUMMERL_KIT_URL") or None,
            hosting=env.get("BUMMERL_HOSTING", ""),
            hosted_per_bot=int(env.get("BUMMERL_HOSTED_PER_BOT", "3")),
            hosted_cpu=float(env.get("BUMMERL_HOSTED_CPU", "0.5")),
            hosted_memory_mb=int(env.get("BUMMERL_HOSTED_MEMORY_MB", "256")),
            hosted_cpu_total=float(env.get("BUMMERL_HOSTED_CPU_TOTAL", "8")),
            hosted_memory_total_mb=int(env.get("BUMMERL_HOSTED_MEMORY_TOTAL_MB", "4096")),
        )


@cache
def settings() -> Settings:
    """The process-wide settings from the environment."""
    return Settings.from_env()
