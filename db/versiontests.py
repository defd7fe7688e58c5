"""Version tests ("fishtest for remote bots"): a bot's candidate version against a baseline,
played as duplicate pairs (`db.pairs`, owner "test") until a paired SPRT decides (`bots.stats`)
or a fixed number of pairs is reached; and the versions each bot was seen running.

- `version_tests`: one row per test. The candidate is a bot and a version (a remote bot's
  `Hello.version`); the baseline is a bot and a version too (the same bot's older version, a
  house bot with its version None, or another bot). Either an SPRT (`elo0`, `elo1`, `alpha`,
  `beta`) or a fixed cap of pairs (`max_pairs`; with an SPRT too it caps it). States:
  `waiting` (a side is not connected with its version: nothing is played, see `wait_since`)
  ⇄ `running` → `H1` / `H0` (the SPRT decided) / `capped` (the cap reached) / `stopped` (by
  its bot or an operator) / `timed_out` (a side stayed away longer than the wait setting).
  The trinomial counts (`lost_both`, `split`, `won_both`: pairs the candidate lost both legs
  of, split, won both) and `llr` are the candidate's, updated after each settled pair.
- `bot_versions`: each (bot, version) a Play stream's Hello said, with when it was first and
  last seen and how many streams with it are open (`services.live.presence` writes it, with
  every heartbeat): a version is *connected* while it has an open stream and a fresh beat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    and_,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from bots.stats import PairOutcomes, paired_elo_ci, paired_score_ci, sprt_bounds
from db.base import Base, aware, utcnow
from db.models import ORIGIN_TEST, REMOTE, ActionLog, Bot, Match
from db.models import RUNNING as MATCH_RUNNING
from db.pairs import OPEN as PAIR_OPEN
from db.pairs import OWNER_TEST, VOID, DuplicatePair, counting
from db.presence import STALE_BEATS, is_connected

# States of a test.
WAITING = "waiting"
RUNNING = "running"
H1 = "H1"
H0 = "H0"
CAPPED = "capped"
STOPPED = "stopped"
TIMED_OUT = "timed_out"
OPEN = (WAITING, RUNNING)
FINAL = (H1, H0, CAPPED, STOPPED, TIMED_OUT)


class VersionTest(Base):
    """One version test (see the module's docstring)."""

    __tablename__ = "version_tests"
    __table_args__ = (Index("ix_version_tests_state", "state"),
                      Index("ix_version_tests_candidate", "candidate_bot_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    candidate_bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    candidate_version: Mapped[str | None] = mapped_column(String(100))
    baseline_bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    baseline_version: Mapped[str | None] = mapped_column(String(100))  # None: any (house)
    # The SPRT (None: a fixed number of pairs only) and the cap of pairs (None: none).
    elo0: Mapped[float | None] = mapped_column(Float)
    elo1: Mapped[float | None] = mapped_column(Float)
    alpha: Mapped[float] = mapped_column(Float, default=0.05)
    beta: Mapped[float] = mapped_column(Float, default=0.05)
    max_pairs: Mapped[int | None] = mapped_column(Integer)
    profile: Mapped[str] = mapped_column(String(10), default="soft")
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    concurrency: Mapped[int] = mapped_column(Integer, default=1)  # pairs played at once
    state: Mapped[str] = mapped_column(String(10), default=WAITING)
    lost_both: Mapped[int] = mapped_column(Integer, default=0)
    split: Mapped[int] = mapped_column(Integer, default=0)
    won_both: Mapped[int] = mapped_column(Integer, default=0)
    forfeited: Mapped[int] = mapped_column(Integer, default=0)  # of the counted pairs
    voided: Mapped[int] = mapped_column(Integer, default=0)  # pairs with no result (not counted)
    llr: Mapped[float] = mapped_column(Float, default=0.0)
    seed: Mapped[int] = mapped_column(BigInteger, default=0)  # the pairs' seeds come from it
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Since when it waits for a side to connect with its version (None: not waiting).
    wait_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_by: Mapped[str] = mapped_column(String(60))  # "bot <name>" or "operator"
    reason: Mapped[str | None] = mapped_column(Text)  # why it ended, or why it waits

    @property
    def pairs(self) -> int:
        return self.lost_both + self.split + self.won_both

    @property
    def is_open(self) -> bool:
        return self.state in OPEN


class BotVersion(Base):
    """A version a bot's Play stream said it runs (`Hello.version`)."""

    __tablename__ = "bot_versions"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"),
                                        primary_key=True)
    version: Mapped[str] = mapped_column(String(100), primary_key=True)
    first_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    open_streams: Mapped[int] = mapped_column(Integer, default=0)


def version_seen(s: Session, bot_id: int, version: str) -> bool:
    """Whether a Play stream of `bot_id` ever said it runs `version`."""
    return s.get(BotVersion, (bot_id, version)) is not None


def connected_versions(s: Session, bot_id: int, heartbeat_s: float,
                       now: datetime | None = None) -> set[str]:
    """The versions of `bot_id` with a Play stream open now (as of the last heartbeat)."""
    since = (now or datetime.now(UTC)) - timedelta(seconds=STALE_BEATS * heartbeat_s)
    rows = s.execute(select(BotVersion.version, BotVersion.last_seen_at).where(
        BotVersion.bot_id == bot_id, BotVersion.open_streams > 0))
    return {v for v, seen in rows if aware(seen) >= since}


def _upsert(s: Session, bot_id: int, version: str, now: datetime, streams: int) -> None:
    """Add `streams` (+1 / -1) to the open streams of (`bot_id`, `version`) and mark it seen
    `now`, making its row the first time (one statement: INSERT ... ON CONFLICT DO UPDATE, so
    two servers making it at once both count)."""
    from sqlalchemy.dialects import postgresql, sqlite

    dialect: Any = postgresql if s.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(BotVersion).values(
        bot_id=bot_id, version=version, first_seen_at=now, last_seen_at=now,
        open_streams=max(streams, 0))
    s.execute(statement.on_conflict_do_update(
        index_elements=[BotVersion.bot_id, BotVersion.version],
        set_={"last_seen_at": now,
              "open_streams": _at_least(BotVersion.open_streams + streams, 0, s)}))


def _at_least(value: Any, floor: int, s: Session) -> Any:
    """SQL max(`value`, `floor`) (SQLite's two-argument max, PostgreSQL's greatest)."""
    if s.get_bind().dialect.name == "sqlite":
        return func.max(value, floor)
    return func.greatest(value, floor)


def stream_opened(s: Session, bot_id: int, version: str, now: datetime | None = None) -> None:
    """A Play stream of `bot_id` that runs `version` opened (in `s`'s transaction)."""
    _upsert(s, bot_id, version, now or utcnow(), 1)


def stream_closed(s: Session, bot_id: int, version: str, now: datetime | None = None) -> None:
    _upsert(s, bot_id, version, now or utcnow(), -1)


def versions_beat(s: Session, pairs: set[tuple[int, str]], now: datetime | None = None) -> None:
    """The heartbeat of the (bot, version) pairs with a stream open in one server."""
    if pairs:  # (a stream open here counts at least one: repairs a count a failed write lost)
        s.execute(update(BotVersion).where(or_(*(
            and_(BotVersion.bot_id == b, BotVersion.version == v) for b, v in sorted(pairs))))
            .values(last_seen_at=now or utcnow(),
                    open_streams=_at_least(BotVersion.open_streams, 1, s)),
            execution_options={"synchronize_session": False})


# --- what a test shows (the service's GetTest, `bummerl test show`, the dashboard) ----------
@dataclass
class Side:
    """One side of a test as shown."""

    bot_id: int
    name: str
    version: str | None
    kind: str
    connected: bool
    mean_think_ms: float | None  # its mean time per move in the test's matches so far
    moves: int


@dataclass
class Summary:
    """A test and everything shown of it (plain numbers, from the database only)."""

    test: VersionTest
    candidate: Side
    baseline: Side
    outcomes: PairOutcomes
    llr_lower: float | None  # the SPRT's bounds; None without an SPRT
    llr_upper: float | None
    score: float
    score_ci: tuple[float, float]
    elo: float
    elo_ci: tuple[float, float]
    running_match_ids: list[int]
    matches: list[Match]  # its matches, newest first (at most `MATCHES_SHOWN`)
    # pair id -> whether its matches count, in words (`db.pairs.counting`), for `matches`
    counts: dict[int, str] = field(default_factory=dict)

    @property
    def sprt(self) -> bool:
        return self.test.elo0 is not None and self.test.elo1 is not None

    @property
    def llr_fraction(self) -> float:
        """Where the LLR stands between its bounds, 0 (H0) to 1 (H1), for a bar."""
        if self.llr_lower is None or self.llr_upper is None:
            return 0.5
        span = self.llr_upper - self.llr_lower
        return min(1.0, max(0.0, (self.test.llr - self.llr_lower) / span))

    @property
    def label(self) -> str:
        return f"{side_label(self.candidate)} vs {side_label(self.baseline)}"


MATCHES_SHOWN = 50


def side_label(side: Side) -> str:
    return f"{side.name}@{side.version}" if side.version else side.name


def is_side_connected(s: Session, bot: Bot, version: str | None, heartbeat_s: float,
                      now: datetime | None = None) -> bool:
    """Whether `bot` can play a test's seat with `version` now: not suspended, and a house bot
    or connected with that version (any version if None)."""
    if bot.suspended_at is not None:
        return False
    if bot.kind != REMOTE:
        return True
    if version is None:
        return is_connected(bot, heartbeat_s, now)
    return version in connected_versions(s, bot.id, heartbeat_s, now)


def test_matches(s: Session, test_id: int, limit: int = MATCHES_SHOWN) -> list[Match]:
    return list(s.scalars(select(Match).where(
        Match.origin == ORIGIN_TEST, Match.event_id == test_id)
        .order_by(Match.id.desc()).limit(limit)).unique())


def think_ms(s: Session, test_id: int) -> dict[bool, tuple[float | None, int]]:
    """The mean time per move of the candidate (True) and the baseline (False) in the test's
    matches, and their numbers of moves. The candidate is the pairs' bot a: seat 0 in leg 0,
    seat 1 in leg 1 (so its seat is the leg)."""
    mine = ActionLog.seat == Match.pair_leg
    rows = s.execute(
        select(mine.label("candidate"), func.avg(ActionLog.think_ms), func.count(ActionLog.id))
        .join(Match, Match.id == ActionLog.match_id)
        .where(Match.origin == ORIGIN_TEST, Match.event_id == test_id,
               ActionLog.think_ms.is_not(None))
        .group_by(mine))
    found: dict[bool, tuple[float | None, int]] = {True: (None, 0), False: (None, 0)}
    for candidate, mean, moves in rows:
        found[bool(candidate)] = (float(mean) if mean is not None else None, int(moves))
    return found


def summarize(s: Session, test: VersionTest, heartbeat_s: float,
              now: datetime | None = None, details: bool = True) -> Summary:
    """Everything shown of `test`, read in session `s` (without `details`: not the times per
    move nor the matches, for a list)."""
    bots = {b.id: b for b in s.scalars(select(Bot).where(
        Bot.id.in_((test.candidate_bot_id, test.baseline_bot_id))))}
    none: tuple[float | None, int] = (None, 0)
    thinking = think_ms(s, test.id) if details else {True: none, False: none}

    def side(bot_id: int, version: str | None, candidate: bool) -> Side:
        bot = bots[bot_id]
        mean, moves = thinking[candidate]
        return Side(bot_id, bot.name, version, bot.kind,
                    is_side_connected(s, bot, version, heartbeat_s, now), mean, moves)

    outcomes = PairOutcomes(test.lost_both, test.split, test.won_both)
    lower = upper = None
    if test.elo0 is not None and test.elo1 is not None:
        lower, upper = sprt_bounds(test.alpha, test.beta)
    score, score_lo, score_hi = paired_score_ci(outcomes)
    elo, elo_lo, elo_hi = paired_elo_ci(outcomes)
    matches = test_matches(s, test.id) if details else []
    running = sorted(m.id for m in matches if m.state == MATCH_RUNNING)
    pair_ids = {m.pair_id for m in matches if m.pair_id is not None}
    counts = {row.id: counting(row.state, row.forfeit) for row in s.execute(
        select(DuplicatePair.id, DuplicatePair.state, DuplicatePair.forfeit)
        .where(DuplicatePair.id.in_(pair_ids)))} if pair_ids else {}
    return Summary(test, side(test.candidate_bot_id, test.candidate_version, True),
                   side(test.baseline_bot_id, test.baseline_version, False), outcomes,
                   lower, upper, score, (score_lo, score_hi), elo, (elo_lo, elo_hi), running,
                   matches, counts)


def list_tests(s: Session, *, bot_id: int | None = None, state: str | None = None,
               limit: int = 20) -> list[VersionTest]:
    """Tests, newest first; of `bot_id` (as either side) and in `state` if given."""
    query = select(VersionTest).order_by(VersionTest.id.desc()).limit(limit)
    if bot_id is not None:
        query = query.where(or_(VersionTest.candidate_bot_id == bot_id,
                                VersionTest.baseline_bot_id == bot_id))
    if state:
        query = query.where(VersionTest.state == state)
    return list(s.scalars(query))


def void_open(s: Session, test_id: int, why: str) -> int:
    """Void the ended test's open pairs (in `s`'s transaction): those not started, and those
    being played (a leg still running is played out, not counted; a leg not made yet never
    is), so that none is left open: its finished legs are released (the export's horizon, the
    match pages) as soon as no leg of theirs runs, and its bots are free for the ladder
    (docs/version-tests.md, "When a test ends"). Counted in the test's `voided`; how many."""
    done = s.execute(update(DuplicatePair).where(
        DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test_id,
        DuplicatePair.state.in_(PAIR_OPEN)).values(state=VOID, detail=why,
                                                   finished_at=utcnow()),
        execution_options={"synchronize_session": False})
    voided = int(getattr(done, "rowcount", 0) or 0)
    s.execute(update(VersionTest).where(VersionTest.id == test_id)
              .values(voided=VersionTest.voided + voided),
              execution_options={"synchronize_session": False})
    return voided
