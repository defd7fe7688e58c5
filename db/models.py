"""Tables of the engine service: bots, matches, hands and the append-only action log.

A match's game state is never stored: it is rebuilt from the match seed and its action log
(`actions`, ordered by `seq`) with the engine. The columns of `matches` are a summary kept up to
date in the same transaction as each action (for listing, deadlines and the dashboard).
"""

from __future__ import annotations

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
    func,
    or_,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column, query_expression, relationship
from sqlalchemy.sql.elements import ColumnElement

from db.base import Base, utcnow

# Bot kinds.
REMOTE = "remote"  # plays over the network (gRPC) with its token
HOUSE = "house"  # played by the service's workers with a named strategy
PERSON = "person"  # a person's seat holder (PeopleService, db.people)

# Match states.
RUNNING = "running"
FINISHED = "finished"
ABORTED = "aborted"  # stopped by an operator: no winner, never rated

# Where a match came from (`matches.origin`).
ORIGIN_MANUAL = "manual"  # CreateMatch by an operator
ORIGIN_LADDER = "ladder"  # the ladder scheduler
ORIGIN_CHALLENGE = "challenge"  # a bot challenged another bot (or a house bot)
ORIGIN_TOURNAMENT = "tournament"  # a pairing of an event (round-robin, Swiss, gauntlet)
ORIGIN_TEST = "test"  # a duplicate pair of a version test (candidate against baseline)
ORIGIN_PEOPLE = "people"  # people playing at the web table (PeopleService)
ORIGINS = (ORIGIN_LADDER, ORIGIN_CHALLENGE, ORIGIN_TOURNAMENT, ORIGIN_TEST, ORIGIN_MANUAL,
           ORIGIN_PEOPLE)

# What a connected bot's Play streams take (`bots.accepts`; None: every match).
ACCEPTS_ALL = "all"  # every match: the ladder, tournaments and challenges
ACCEPTS_CHALLENGES = "challenges"  # challenges only (Hello.challenges_only)
ACCEPTS_NONE = "none"  # no new match: the kit is finishing its running ones (PlayRequest.drain)

# What a remote bot takes of people (`bots.accepts_people`; None: no games with people).
PEOPLE_CASUAL = "casual"
PEOPLE_RATED = "rated"

# Why a match ended.
PLAYED = "played"  # a counter reached 0 (R9.1)
FORFEIT_TIMEOUT = "forfeit_timeout"  # the seat to act ran out of move time and bank
FORFEIT_ILLEGAL = "forfeit_illegal"  # a seat made more illegal actions than allowed
RESIGNED = "resigned"  # a person resigned a casual game (PeopleService.Resign)
ABORTED_BY_OPERATOR = "aborted"  # an operator aborted the match (state ABORTED)

# Where a pruned action log went (`matches.actions_archive`, `db.prune`).
ARCHIVE_TABLE = "table"  # the `actions_archive` table (pages and exports still read it)
ARCHIVE_RECORDS = "records"  # match records in the operator's files (gone from the database)


class Bot(Base):
    """A player: a remote bot (token) or a house bot (strategy run by the workers)."""

    __tablename__ = "bots"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    kind: Mapped[str] = mapped_column(String(10), default=REMOTE)
    house_strategy: Mapped[str | None] = mapped_column(String(40))
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)  # sha256 hex
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Presence of a remote bot (`services.live.presence`): while a Play stream of the bot is
    # open, the server refreshes `last_seen_at` every heartbeat; `connected_since` is set when
    # its first stream opens and cleared when its last one closes cleanly. A server that crashes
    # clears nothing, so "connected" also needs a fresh heartbeat: its bots drop out by
    # themselves.
    connected_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Operator controls: a suspended bot gets no ladder matches and its Play stream is refused.
    suspended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    suspended_reason: Mapped[str | None] = mapped_column(Text)
    # When an operator last lifted a suspension: forfeits in a row are counted from then on.
    reinstated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The version the bot said it runs (`Hello.version`) on its newest Play stream; None if
    # it never said (house bots: their strategy is their version).
    version: Mapped[str | None] = mapped_column(String(100))
    # What the bot's open Play streams take (`services.live.presence`, `db.presence`): None or
    # ACCEPTS_ALL every match, ACCEPTS_CHALLENGES challenges only (the ladder and tournaments
    # leave it out), ACCEPTS_NONE no new match (it is finishing its running ones). Cleared when
    # its last stream closes.
    accepts: Mapped[str | None] = mapped_column(String(12))
    # Whether a remote bot plays people (`Hello.accepts_people` of its newest stream):
    # None: no; PEOPLE_CASUAL or PEOPLE_RATED (casual and rated).
    accepts_people: Mapped[str | None] = mapped_column(String(10))
    # Not a column: set (`with_expression`) when the bot was found by a hosted version's token
    # (`db.hosted`): the version its container runs, which its streams then say, whatever their
    # Hello says. None otherwise.
    hosted_version: Mapped[str | None] = query_expression()


# Bot names are unique whatever their case, as people's are (`people.name_key`, their name in
# lower case): `mybot` cannot be registered beside `MyBot` (migration 0019_bot_names_case).
Index("uq_bots_name_lower", func.lower(Bot.name), unique=True)


def bot_named(name: str) -> ColumnElement[bool]:
    """The condition "the bot is called `name`", whatever the case (names are unique so)."""
    return or_(Bot.name == name, func.lower(Bot.name) == name.lower())


class Match(Base):
    """A Bummerl between two bots; its game state is the seed + the action log."""

    __tablename__ = "matches"
    __table_args__ = (
        # `state` alone, not the deadline: a move's update of the row stays a HOT update on
        # PostgreSQL (no new index entries); see migration 0006.
        Index("ix_matches_state", "state"),
        # (bot, id): a bot's newest matches are a walk down the index (migration 0012)
        Index("ix_matches_bot0", "bot0_id", "id"),
        Index("ix_matches_bot1", "bot1_id", "id"),
        # A duplicate pair's two matches, found by this key (a CreateMatch repeated after a
        # lost answer returns the match it made).
        Index("ix_matches_pair", "pair_id", "pair_leg", unique=True),
        # Exports page through finished matches in the order they finished (`db.records`);
        # set once per match, so a move's update stays HOT.
        Index("ix_matches_finished", "finished_at", "id"),
        {"postgresql_with": {"fillfactor": 80}},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot0_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    bot1_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    profile: Mapped[str] = mapped_column(String(10), default="soft")
    seed: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[str] = mapped_column(String(10), default=RUNNING)
    # Summary of the game state after the last action (rebuilt from seed + log on demand).
    seq: Mapped[int] = mapped_column(Integer, default=0)  # actions applied so far
    to_act: Mapped[int | None] = mapped_column(Integer)  # seat, None when over
    hand_number: Mapped[int] = mapped_column(Integer, default=0)
    counter0: Mapped[int] = mapped_column(Integer, default=7)
    counter1: Mapped[int] = mapped_column(Integer, default=7)
    winner: Mapped[int | None] = mapped_column(Integer)
    schneider: Mapped[bool] = mapped_column(Boolean, default=False)
    # How it ended (policy record).
    end_reason: Mapped[str | None] = mapped_column(String(20))
    end_detail: Mapped[str | None] = mapped_column(Text)
    forfeit_seat: Mapped[int | None] = mapped_column(Integer)
    # Time control and illegal-action policy.
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    max_illegal: Mapped[int] = mapped_column(Integer)
    bank0_ms: Mapped[int] = mapped_column(Integer)
    bank1_ms: Mapped[int] = mapped_column(Integer)
    illegal0: Mapped[int] = mapped_column(Integer, default=0)
    illegal1: Mapped[int] = mapped_column(Integer, default=0)
    turn_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    deadline_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Whether the result counts for ratings (challenges are unrated by default), and where the
    # match came from (ORIGIN_*: set by whatever creates the match; migration 0014_origins
    # backfilled the rows made before; a row added through the ORM without one is 'manual').
    rated: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    origin: Mapped[str] = mapped_column(String(12), default=ORIGIN_MANUAL)
    # The version each seat's bot ran in this match (`bots.version` of the stream that played
    # it); None where the bot said none.
    version0: Mapped[str | None] = mapped_column(String(100))
    version1: Mapped[str | None] = mapped_column(String(100))
    # The duplicate pair (`db.pairs`) this match is one leg of (leg 0: the pair's bot a in
    # seat 0), and the event it belongs to (per `origin`: the tournament's or the version
    # test's id) and its round; None for matches of no event. Set at creation, never changed.
    pair_id: Mapped[int | None] = mapped_column(Integer)
    pair_leg: Mapped[int | None] = mapped_column(Integer)
    event_id: Mapped[int | None] = mapped_column(Integer)
    event_round: Mapped[int | None] = mapped_column(Integer)
    # When the match's action log left `actions` (`bummerl db prune`, `db.prune`) and where it
    # went (ARCHIVE_TABLE or ARCHIVE_RECORDS); None while the log is in `actions`. Its result,
    # hands' scores and ratings stay.
    actions_pruned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    actions_archive: Mapped[str | None] = mapped_column(String(10))

    bot0: Mapped[Bot] = relationship(foreign_keys=[bot0_id], lazy="joined")
    bot1: Mapped[Bot] = relationship(foreign_keys=[bot1_id], lazy="joined")

    def bot_id(self, seat: int) -> int:
        return self.bot1_id if seat else self.bot0_id

    def bot(self, seat: int) -> Bot:
        return self.bot1 if seat else self.bot0

    def seat_name(self, seat: int) -> str:
        """Who plays `seat`, for a person: the bot's name, with the version it runs
        (mybot@2.0) when both seats are the same bot (a version test)."""
        name = self.bot(seat).name
        version = self.version1 if seat else self.version0
        return f"{name}@{version}" if self.bot0_id == self.bot1_id and version else name

    def seat_of(self, bot_id: int) -> int | None:
        """The seat `bot_id` plays in this match (seat 0 if it plays both), or None."""
        if self.bot0_id == bot_id:
            return 0
        if self.bot1_id == bot_id:
            return 1
        return None


class Hand(Base):
    """One deal of a match; the result columns are set when the hand ends."""

    __tablename__ = "hands"
    __table_args__ = (UniqueConstraint("match_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)  # from 0, as in the engine
    dealer: Mapped[int] = mapped_column(Integer)
    first_seq: Mapped[int] = mapped_column(Integer)  # seq of its first action
    last_seq: Mapped[int | None] = mapped_column(Integer)  # seq of its last action, once over
    winner: Mapped[int | None] = mapped_column(Integer)
    game_points: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(String(20))
    points0: Mapped[int | None] = mapped_column(Integer)
    points1: Mapped[int | None] = mapped_column(Integer)
    tricks0: Mapped[int | None] = mapped_column(Integer)
    tricks1: Mapped[int | None] = mapped_column(Integer)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ActionLog(Base):
    """The append-only log of the actions applied in a match (never updated or deleted)."""

    __tablename__ = "actions"
    __table_args__ = (
        UniqueConstraint("match_id", "seq"),
        # A request id is its seat's own (migration 0019): one seat's id never blocks, answers
        # for or is refused to the other seat (issue 44).
        Index("ix_actions_request", "match_id", "seat", "request_id", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)  # 0, 1, 2, ... within the match
    seat: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(20))  # engine text, e.g. "play TH"
    request_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # How long the seat took: from the start of its turn (the previous action, the match's
    # creation, or a restart of the service) to this action, in ms; None before migration 0009.
    think_ms: Mapped[int | None] = mapped_column(Integer)


class ActionArchive(Base):
    """Pruned action logs of old finished matches (`db.prune`, ARCHIVE_TABLE): the rows of
    `actions` as they were, moved here so that `actions` and its indexes stay the size of the
    recent history."""

    __tablename__ = "actions_archive"
    __table_args__ = (UniqueConstraint("match_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(20))
    request_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    think_ms: Mapped[int | None] = mapped_column(Integer)


class Refusal(Base):
    """An action the service refused as illegal (the public record: who, what, which rule).

    Written in the same transaction that counts the seat's illegal action; the state of the
    match is unchanged by it. `action` and `message` are bounded (input is quoted, not kept)."""

    __tablename__ = "refusals"
    __table_args__ = (Index("ix_refusals_match", "match_id", "seq"),
                      Index("ix_refusals_created", "created_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)  # the match's seq when it was refused
    seat: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(40))  # the refused action's text (truncated)
    rule: Mapped[str | None] = mapped_column(String(10))  # e.g. "R3.4"
    message: Mapped[str] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
