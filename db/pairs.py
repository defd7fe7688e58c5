"""Duplicate pairs: two Bummerls from one seed with the seats swapped, scored as one pairing.

Shared by the events that play them: tournaments (`owner` "tournament", `owner_id` the
tournament's id) and version tests (`owner` "test"). The scheduler is `workers.pairs`; the
engine service creates a pair's two matches (CreateMatch with `pair_id` and `pair_leg`) and
records each one's id here in the same transaction as the match itself.

- Leg 0 (`match_a_id`): bot a in seat 0, bot b in seat 1; leg 1 (`match_b_id`): bot b in
  seat 0. Both have the pair's `seed`, so the same deck for every hand number and the same
  first dealer *seat*: the cards and the role that go with a seat are mirrored, and each bot
  plays each deal from both sides (docs/events.md, "What is mirrored").
- States: `waiting` (not started; `due_at` says from when it may start) → `playing` (claimed
  by the scheduler; its matches are being created or played) → `done` (both matches ended,
  the result below). `forfeited`: decided without (all) its matches: a bot absent past
  `grace_until`, or withdrawn. `void`: no result (the event was cancelled, or an operator
  aborted one of its matches).
- The result, in bot a's terms: `points_a` match points (2 won both matches, 1 split, 0 lost
  both; bot b has 2 - points_a, except when both forfeited: 0 each), `game_points_a` and
  `game_points_b` (summed over the two matches: the match's winner counts 7, the loser what
  it scored; nothing for a forfeit), `forfeit` ("a", "b" or "both": who forfeited the pair)
  and `detail` (a sentence for people).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    or_,
    select,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from db.base import Base, utcnow
from events.scoring import FORFEIT_A, FORFEIT_B, FORFEIT_BOTH, PairResult

__all__ = ["FORFEIT_A", "FORFEIT_B", "FORFEIT_BOTH", "DuplicatePair", "bots_in_play",
           "result_values"]

# Owners.
OWNER_TOURNAMENT = "tournament"
OWNER_TEST = "test"
OWNERS = (OWNER_TOURNAMENT, OWNER_TEST)

# States.
WAITING = "waiting"
PLAYING = "playing"
DONE = "done"
FORFEITED = "forfeited"
VOID = "void"
OPEN = (WAITING, PLAYING)  # not decided yet
FINAL = (DONE, FORFEITED, VOID)  # decided: never changes again

# Who forfeited a pair (`forfeit`): events.scoring's FORFEIT_A, FORFEIT_B, FORFEIT_BOTH.


class DuplicatePair(Base):
    """One pairing played as a duplicate pair (see the module's docstring)."""

    __tablename__ = "duplicate_pairs"
    __table_args__ = (
        UniqueConstraint("owner", "owner_id", "round", "board"),
        Index("ix_duplicate_pairs_owner_state", "owner", "owner_id", "state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str] = mapped_column(String(12))  # OWNER_*
    owner_id: Mapped[int] = mapped_column(Integer)
    round: Mapped[int | None] = mapped_column(Integer)  # from 1; None: the owner has no rounds
    board: Mapped[int] = mapped_column(Integer)  # its place in the round (or the owner), from 1
    seed: Mapped[int] = mapped_column(BigInteger)
    bot_a_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    bot_b_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    # The version each bot must play with (version tests set them); None: any.
    version_a: Mapped[str | None] = mapped_column(String(100))
    version_b: Mapped[str | None] = mapped_column(String(100))
    profile: Mapped[str] = mapped_column(String(10), default="soft")
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(10), default=WAITING)
    match_a_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id", ondelete="SET NULL"))
    match_b_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id", ondelete="SET NULL"))
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Set while a bot of the waiting pair is absent (from when it was first seen absent, plus
    # the grace period); cleared when both can play again. Past it, the absent bot forfeits.
    grace_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    points_a: Mapped[int | None] = mapped_column(Integer)
    points_b: Mapped[int | None] = mapped_column(Integer)
    game_points_a: Mapped[int | None] = mapped_column(Integer)
    game_points_b: Mapped[int | None] = mapped_column(Integer)
    forfeit: Mapped[str | None] = mapped_column(String(4))  # FORFEIT_* or None
    detail: Mapped[str | None] = mapped_column(Text)
    # When its matches were rated (a rated pair, once both ended); None: not (yet) rated.
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    def bots(self, leg: int) -> tuple[int, int]:
        """The bot ids of seat 0 and seat 1 in match `leg` (0: bot a in seat 0)."""
        return (self.bot_a_id, self.bot_b_id) if leg == 0 else (self.bot_b_id, self.bot_a_id)

    def match_id(self, leg: int) -> int | None:
        return self.match_a_id if leg == 0 else self.match_b_id


def result_values(result: PairResult) -> dict[str, object]:
    """The columns of a pair's result (for an UPDATE)."""
    return {"points_a": result.points_a, "points_b": result.points_b,
            "game_points_a": result.game_points_a, "game_points_b": result.game_points_b,
            "forfeit": result.forfeit}


def counting(state: str, forfeit: str | None) -> str:
    """Whether a pair in `state` (forfeited by `forfeit`) counts, in words for the pages: its
    matches count when it is done or forfeited by one bot; a void pair's, or one forfeited by
    both, do not (docs/events.md, "How every pair ends")."""
    if state == DONE:
        return "counted"
    if state == FORFEITED:
        return "not counted (forfeited by both)" if forfeit == FORFEIT_BOTH else \
            f"counted (forfeited by bot {forfeit})"
    if state == VOID:
        return "voided, not counted"
    return "pair in play"


def bots_in_play(s: Session, bot_ids: Iterable[int] | None = None) -> set[int]:
    """The bots of every pair being played now, of any owner (among `bot_ids` if given): the
    ladder gives a remote one of them no new match (`workers.ladder`)."""
    query = select(DuplicatePair.bot_a_id, DuplicatePair.bot_b_id).where(
        DuplicatePair.state == PLAYING)
    if bot_ids is not None:
        wanted = list(bot_ids)
        query = query.where(or_(DuplicatePair.bot_a_id.in_(wanted),
                                DuplicatePair.bot_b_id.in_(wanted)))
    return {i for row in s.execute(query) for i in row}
