"""Version tests: start, read, list and stop them (the plain functions behind
VersionTestService and `bummerl test`; the workers play them: `workers.versiontests`).

Who may do what: a bot's token starts tests whose candidate is that bot, and reads and stops
the tests it is a side of; the operator token does all of it for any bot. A bot has at most
`Settings.tests_per_bot` tests open at once (as the candidate).

What is checked (INVALID_ARGUMENT naming the field, nothing written): the candidate and the
baseline are `bot@version` of a bot that exists and connected with that version at least once
(`bot_versions`), or the name of a house bot (no version: its strategy is its version); the
candidate is not its baseline (same bot and same version); elo0 < elo1; alpha and beta in
(0, 0.5); games between 0 and `MAX_GAMES`; concurrency 1 to `MAX_CONCURRENCY`; the profile
and time control as for any match.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.base import utcnow
from db.models import HOUSE, PERSON, Bot, bot_named
from db.settings import Settings, settings
from db.versiontests import (
    OPEN,
    STOPPED,
    Summary,
    VersionTest,
    list_tests,
    summarize,
    version_seen,
    void_open,
)
from db.versiontests import WAITING as TEST_WAITING
from services.core.bounds import MAX_TIME_MS, MIN_MOVE_MS, MOVE_NOTE, in_range
from services.core.connections import factory_of
from services.core.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    quote,
)
from services.ops import bots

MAX_GAMES = 20000
MAX_CONCURRENCY = 8
DEFAULT_ELO0, DEFAULT_ELO1 = 0.0, 5.0
DEFAULT_ALPHA = DEFAULT_BETA = 0.05
MAX_PAGE = 100


@dataclass(frozen=True)
class Caller:
    """Who calls: the operator, or a remote bot (by its token)."""

    bot: Bot | None  # None: the operator

    @property
    def operator(self) -> bool:
        return self.bot is None

    @property
    def label(self) -> str:
        return "operator" if self.bot is None else f"bot {self.bot.name}"

    def may_see(self, test: VersionTest) -> bool:
        return self.bot is None or self.bot.id in (test.candidate_bot_id,
                                                   test.baseline_bot_id)


def caller_of(token: str | None, *, sessions: sessionmaker[Session] | None = None,
              config: Settings | None = None) -> Caller:
    """The operator, or the bot of `token` (Unauthenticated for none or an unknown one)."""
    if bots.is_operator(token, config or settings()):
        return Caller(None)
    return Caller(bots.bot_for_token(token, sessions=sessions))


@dataclass(frozen=True)
class SideSpec:
    bot: Bot
    version: str | None


def _side(s: Session, field: str, text: str) -> SideSpec:
    """`bot@version` (or a house bot's name) of field `field`, checked."""
    text = (text or "").strip()
    if not text:
        raise InvalidArgument(f"{field} is missing: name it as bot@version (or a house bot)",
                              field=field)
    name, at, version = text.rpartition("@") if "@" in text else (text, "", "")
    bot = s.scalar(select(Bot).where(bot_named(name)))
    if bot is None and text.startswith("@") or bot is not None and bot.kind == PERSON:
        raise InvalidArgument(f"{field}: {quote(text)} is a person's seat: people do not play "
                              "version tests", field=field)
    if bot is None:
        raise InvalidArgument(f"{field}: no bot named {quote(name)}", field=field)
    if bot.kind == HOUSE:
        if at:
            raise InvalidArgument(f"{field}: {bot.name} is a house bot, it has no versions "
                                  f"(name it without @{quote(version)})", field=field)
        return SideSpec(bot, None)
    if not version:
        raise InvalidArgument(f"{field}: name the version of remote bot {bot.name}, as "
                              f"{bot.name}@VERSION (the version its kit says: --version)",
                              field=field)
    if not version_seen(s, bot.id, version):
        raise InvalidArgument(f"{field}: bot {bot.name} never connected with version "
                              f"{quote(version)} (run its kit with --version once)",
                              field=field)
    return SideSpec(bot, version)


def start_test(token: str | None, candidate: str, baseline: str, *,
               elo0: float | None = None, elo1: float | None = None,
               alpha: float | None = None, beta: float | None = None, games: int = 0,
               profile: str | None = None, move_ms: int | None = None,
               bank_ms: int | None = None, concurrency: int = 0,
               sessions: sessionmaker[Session] | None = None,
               config: Settings | None = None) -> Summary:
    """Start a version test (see the module's docstring); it waits for its sides to connect
    and is played by the workers."""
    config = config or settings()
    caller = caller_of(token, sessions=sessions, config=config)
    sprt = elo0 is not None or elo1 is not None or not games
    if sprt:
        elo0 = DEFAULT_ELO0 if elo0 is None else elo0
        elo1 = DEFAULT_ELO1 if elo1 is None else elo1
        if not elo0 < elo1:
            raise InvalidArgument(f"elo1 ({elo1:g}) must be above elo0 ({elo0:g})",
                                  field="elo1")
        if abs(elo0) > 2000 or abs(elo1) > 2000:
            raise InvalidArgument("elo0 and elo1 must be within ±2000", field="elo0")
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    beta = DEFAULT_BETA if beta is None else beta
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0 < value < 0.5:
            raise InvalidArgument(f"{name} must be between 0 and 0.5, not {value:g}", field=name)
    if not 0 <= games <= MAX_GAMES:
        raise InvalidArgument(f"games must be between 0 (no cap) and {MAX_GAMES}",
                              field="games")
    concurrency = concurrency or 1
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InvalidArgument(f"concurrency must be between 1 and {MAX_CONCURRENCY} pairs",
                              field="concurrency")
    try:
        profile = engine.Profile(profile or "soft").value
    except ValueError:
        raise InvalidArgument(f"unknown profile {quote(profile)}: 'soft' or 'sharp' (R9)",
                              field="profile") from None
    move_ms = move_ms or config.move_ms
    bank_ms = config.bank_ms if bank_ms is None else bank_ms
    in_range("time_control.move_ms", move_ms, MIN_MOVE_MS, MAX_TIME_MS,
             f"{MOVE_NOTE}; 0: the default {config.move_ms}")
    in_range("time_control.bank_ms", bank_ms, 0, MAX_TIME_MS, "ms")
    factory = factory_of(sessions)
    with factory.begin() as s:
        cand = _side(s, "candidate", candidate)
        base = _side(s, "baseline", baseline)
        if cand.bot.id == base.bot.id and cand.version == base.version:
            raise InvalidArgument(
                f"baseline: the candidate {candidate.strip()!r} is its own baseline (same bot "
                "and same version): name another version or another bot", field="baseline")
        if caller.bot is not None and caller.bot.id != cand.bot.id:
            raise PermissionDenied(f"a bot starts tests of itself only: the candidate must be "
                                   f"{caller.bot.name}@VERSION")
        if cand.bot.suspended_at is not None or base.bot.suspended_at is not None:
            raise FailedPrecondition("a suspended bot plays no test")
        open_now = s.scalar(select(func.count(VersionTest.id)).where(
            VersionTest.candidate_bot_id == cand.bot.id, VersionTest.state.in_(OPEN))) or 0
        if open_now >= config.tests_per_bot:
            raise ResourceExhausted(
                f"bot {cand.bot.name} has {open_now} tests open: {config.tests_per_bot} at "
                "most at once (stop one, or wait for one to end)", limit=config.tests_per_bot)
        test = VersionTest(
            candidate_bot_id=cand.bot.id, candidate_version=cand.version,
            baseline_bot_id=base.bot.id, baseline_version=base.version,
            elo0=elo0 if sprt else None, elo1=elo1 if sprt else None, alpha=alpha, beta=beta,
            max_pairs=(games + 1) // 2 if games else None, profile=profile, move_ms=move_ms,
            bank_ms=bank_ms, concurrency=concurrency, state=TEST_WAITING, lost_both=0,
            split=0, won_both=0, forfeited=0, voided=0, llr=0.0,
            seed=secrets.randbits(62), created_at=utcnow(), wait_since=utcnow(),
            started_by=caller.label, reason="waiting for the workers to start its first pair")
        s.add(test)
        s.flush()
        return summarize(s, test, config.heartbeat_s)


def _visible(s: Session, caller: Caller, test_id: int) -> VersionTest:
    test = s.get(VersionTest, test_id)
    if test is None or not caller.may_see(test):  # another bot's test is not told apart
        raise NotFound(f"no version test with id {test_id}"
                       + ("" if caller.operator else " of your bot"))
    return test


def get_test(token: str | None, test_id: int, *, sessions: sessionmaker[Session] | None = None,
             config: Settings | None = None) -> Summary:
    config = config or settings()
    caller = caller_of(token, sessions=sessions, config=config)
    with factory_of(sessions)() as s:
        return summarize(s, _visible(s, caller, test_id), config.heartbeat_s)


def list_visible(token: str | None, *, state: str | None = None, limit: int = 20,
                 sessions: sessionmaker[Session] | None = None,
                 config: Settings | None = None) -> list[Summary]:
    """Tests, newest first: a bot's own, or every one for the operator."""
    config = config or settings()
    caller = caller_of(token, sessions=sessions, config=config)
    limit = limit or 20
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidArgument(f"page_size must be between 1 and {MAX_PAGE}", field="page_size")
    with factory_of(sessions)() as s:
        rows = list_tests(s, bot_id=caller.bot.id if caller.bot else None, state=state,
                          limit=limit)
        return [summarize(s, t, config.heartbeat_s) for t in rows]


def stop_test(token: str | None, test_id: int, reason: str = "", *,
              sessions: sessionmaker[Session] | None = None,
              config: Settings | None = None) -> Summary:
    """Stop open test `test_id`: state `stopped`; its open pairs are void (`void_open`), its
    running matches are played out (not counted). FailedPrecondition if it already ended."""
    config = config or settings()
    caller = caller_of(token, sessions=sessions, config=config)
    why = (reason or "").strip()[:200]
    with factory_of(sessions).begin() as s:
        test = _visible(s, caller, test_id)
        if test.state not in OPEN:
            raise FailedPrecondition(f"version test {test_id} already ended ({test.state})")
        now = utcnow()
        s.execute(update(VersionTest).where(VersionTest.id == test_id,
                                            VersionTest.state.in_(OPEN))
                  .values(state=STOPPED, finished_at=now, wait_since=None,
                          reason=f"stopped by {caller.label}" + (f": {why}" if why else "")),
                  execution_options={"synchronize_session": False})
        void_open(s, test_id, "the test was stopped before the pair was complete: not counted")
        s.flush()
        s.refresh(test)
        return summarize(s, test, config.heartbeat_s)
