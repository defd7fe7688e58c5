"""The values every layer of the service passes: a match's summary (`MatchState`) and a
committed change of it (`Change`). Named tuples: one of each is made for every action (a
frozen dataclass took four times as long to make)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from db.models import HOUSE, ORIGIN_CHALLENGE, ORIGIN_MANUAL, ORIGIN_TEST, RUNNING

if TYPE_CHECKING:
    from db.models import Match


class MatchState(NamedTuple):
    """The columns of a match that a Play stream needs each time it looks (a plain Core read,
    no ORM objects), with the kinds of its two bots."""

    id: int
    bot0_id: int
    bot1_id: int
    profile: str
    seed: int
    state: str
    seq: int
    to_act: int | None
    hand_number: int
    winner: int | None
    deadline_at: datetime | None
    bank0_ms: int
    bank1_ms: int
    kind0: str
    kind1: str
    # The event the match belongs to (`matches.origin`, `event_id`, `event_round`) and the
    # duplicate pair it is a leg of; None for a match of no event.
    origin: str | None = None
    event_id: int | None = None
    event_round: int | None = None
    pair_id: int | None = None
    pair_leg: int | None = None
    # The version each seat's bot runs in this match; in a version test's match (origin
    # 'test') the version the seat must be played with (`seat_for`).
    version0: str | None = None
    version1: str | None = None

    @staticmethod
    def of(m: Match) -> MatchState:
        """The summary of the match row `m` (its bots loaded)."""
        return MatchState(
            id=m.id, bot0_id=m.bot0_id, bot1_id=m.bot1_id, profile=m.profile, seed=m.seed,
            state=m.state, seq=m.seq, to_act=m.to_act, hand_number=m.hand_number,
            winner=m.winner, deadline_at=m.deadline_at, bank0_ms=m.bank0_ms,
            bank1_ms=m.bank1_ms, kind0=m.bot(0).kind, kind1=m.bot(1).kind, origin=m.origin,
            event_id=m.event_id, event_round=m.event_round, pair_id=m.pair_id,
            pair_leg=m.pair_leg, version0=m.version0, version1=m.version1)

    def seat_of(self, bot_id: int) -> int | None:
        """The seat `bot_id` plays in this match (seat 0 if it plays both), or None."""
        if self.bot0_id == bot_id:
            return 0
        if self.bot1_id == bot_id:
            return 1
        return None

    def house_to_act(self) -> bool:
        """A house bot (moved by the workers) is to act."""
        if self.state != RUNNING or self.to_act is None:
            return False
        return (self.kind1 if self.to_act else self.kind0) == HOUSE


# The matches a Play stream connected for challenges only is given (`seat_for`): those
# someone asked for by name (a challenge, an operator's CreateMatch) and a version test's
# legs. Never the ladder's nor a tournament's (pairings: `db.presence`).
FOR_CHALLENGE_STREAMS = frozenset((ORIGIN_CHALLENGE, ORIGIN_MANUAL, ORIGIN_TEST))


def seat_for(m: Any, bot_id: int, version: str | None,
             challenges_only: bool = False) -> int | None:
    """The seat that a Play stream of `bot_id` whose Hello said `version` (and, with
    `challenges_only`, challenges only) plays in match `m` (a `MatchState`, a `Match` row or a
    row with its bot0_id, bot1_id, origin, version0 and version1), or None. One match is
    given to one process of the bot (docs/version-tests.md, "Routing"):

    - a stream for challenges only is given no match of another origin than
      `FOR_CHALLENGE_STREAMS` (the ladder never reaches it);
    - a seat whose version is set is played only by a stream of that version: in a version
      test's match the seat's pinned version, elsewhere the version the match was made for
      (the bot's version then, `bots.version`: its newest stream of those taking the widest
      kind of match, `services.live.presence`). Two versions of one bot, each its own
      process, may so sit in one match, and a match is never played by both.

    A seat with no version (the bot said none) is any stream's of the bot (seat 0 if it plays
    both)."""
    if challenges_only and m.origin not in FOR_CHALLENGE_STREAMS:
        return None
    for seat, (seat_bot, pinned) in enumerate(((m.bot0_id, m.version0),
                                               (m.bot1_id, m.version1))):
        if seat_bot == bot_id and (pinned is None or pinned == (version or "")):
            return seat
    return None


class Change(NamedTuple):
    """A committed change of a match: its state after it, and where it happened."""

    site: str  # the database (see `services.core.connections.site_of`)
    match: MatchState  # the match's summary after the change
    everyone: bool = True  # False: only the bot to act needs to hear of it
    action: tuple[int, str] | None = None  # (seat, action) appended at seq - 1, if one was
