"""The legs of duplicate pairs (`db.pairs`): CreateMatch with a pair id and a leg.

A pair's two matches are made from the pair's row alone: leg 0 seats bot a in seat 0, leg 1
bot b; both get the pair's seed (the same decks and the same first dealer seat, R2), profile,
time control and rating, and carry the pair, its event and round (`matches.pair_id`,
`pair_leg`, `event_id`, `event_round`; origin 'tournament' or 'test' from the pair's owner).

Idempotent: `(pair_id, pair_leg)` is unique among matches, so a leg asked for again (the
scheduler's answer was lost, or it crashed before it heard it) returns the match made the first
time, and two requests racing make one match. The match id is written on the pair in the same
transaction as the match (`services.core.matches.record_leg`), under a lock of the pair's row
that also refuses a pair no longer being played (withdrawn, cancelled).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from db.models import ORIGIN_TEST, ORIGIN_TOURNAMENT, Match
from db.pairs import OWNER_TOURNAMENT, DuplicatePair
from db.settings import Settings, settings
from services.core.connections import factory_of
from services.core.errors import InvalidArgument, NotFound
from services.core.matches import PairLeg, create_match


def existing_leg(session: Session, pair_id: int, leg: int) -> Match | None:
    return session.scalars(select(Match).where(Match.pair_id == pair_id,
                                               Match.pair_leg == leg)).unique().one_or_none()


def create_pair_match(pair_id: int, leg: int, *, asked: Asked | None = None,
                      sessions: sessionmaker[Session] | None = None,
                      config: Settings | None = None) -> Match:
    """Leg `leg` (0 or 1) of duplicate pair `pair_id`: made now, or the one made before.
    `asked` is what the request also said, which must be unset or the pair's own.

    Raises InvalidArgument (a bad leg, or `asked` disagrees), NotFound (no such pair) or
    FailedPrecondition (the pair is not being played: it is waiting, decided or void)."""
    if leg not in (0, 1):
        raise InvalidArgument(f"pair_leg must be 0 (bot a in seat 0) or 1 (bot b in seat 0), "
                              f"not {leg}")
    factory = factory_of(sessions)
    with factory() as session:
        pair = session.get(DuplicatePair, pair_id)
        if pair is None:
            raise NotFound(f"no duplicate pair with id {pair_id}")
        session.expunge(pair)
        (asked or Asked()).check(pair, leg)
        found = existing_leg(session, pair_id, leg)
        if found is not None:
            return found
    origin = ORIGIN_TOURNAMENT if pair.owner == OWNER_TOURNAMENT else ORIGIN_TEST
    try:
        return create_match(
            pair.bots(leg), profile=pair.profile, seed=pair.seed, move_ms=pair.move_ms,
            bank_ms=pair.bank_ms, origin=origin, rated=pair.rated,
            pair=PairLeg(pair_id, leg, pair.owner_id, pair.round),
            versions=pair_versions(pair, leg), sessions=sessions, config=config or settings())
    except IntegrityError:  # made meanwhile by a request racing this one: that one is it
        with factory() as session:
            found = existing_leg(session, pair_id, leg)
        if found is None:
            raise
        return found


def pair_versions(pair: DuplicatePair, leg: int) -> tuple[str | None, str | None]:
    """The versions of seat 0's and seat 1's bot in leg `leg` of `pair` (None: any)."""
    return (pair.version_a, pair.version_b) if leg == 0 else (pair.version_b, pair.version_a)


@dataclass(frozen=True)
class Asked:
    """What a CreateMatch for a pair's leg said besides the pair (each unset: None or empty)."""

    bot_ids: tuple[int, ...] = ()
    seed: int | None = None
    profile: str | None = None
    move_ms: int | None = None
    bank_ms: int | None = None
    ladder: bool = False
    versions: tuple[str, ...] = ()

    def check(self, pair: DuplicatePair, leg: int) -> None:
        """InvalidArgument naming the first field that is set and is not the pair's."""
        mine = {"bot_ids": tuple(pair.bots(leg)), "seed": pair.seed, "profile": pair.profile,
                "time_control.move_ms": pair.move_ms, "time_control.bank_ms": pair.bank_ms}
        said = {"bot_ids": self.bot_ids, "seed": self.seed, "profile": self.profile,
                "time_control.move_ms": self.move_ms, "time_control.bank_ms": self.bank_ms}
        for name, value in said.items():
            if value not in (None, ()) and value != mine[name]:
                shown = "the pair's seed" if name == "seed" else repr(mine[name])
                raise InvalidArgument(
                    f"{name} {value!r} is not leg {leg} of duplicate pair {pair.id}'s "
                    f"({shown}): leave it unset, a pair's leg takes it from the pair")
        if self.versions and self.versions != tuple(v or "" for v in pair_versions(pair, leg)):
            raise InvalidArgument(
                f"seat_versions {list(self.versions)!r} are not leg {leg} of duplicate pair "
                f"{pair.id}'s ({[v or '' for v in pair_versions(pair, leg)]!r}): leave them "
                "unset, a pair's leg takes them from the pair", field="seat_versions")
        if self.ladder:
            raise InvalidArgument("a duplicate pair's leg is not a ladder match: leave ladder "
                                  "false")
