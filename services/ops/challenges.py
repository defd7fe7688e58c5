"""Challenges: a bot starts unrated matches against an opponent of its choice, right away.

- The challenger is the bot whose token calls; the opponent is named: a house bot (played by the
  workers, so there are house bots only where workers run: `bummerl up`, not `bummerl serve`
  alone), or a remote bot that is connected now (a Play stream open, `services.live.presence`).
  Connected bots accept challenges: there is no asking step (a bot that wants none disconnects),
  unless the bot is finishing its running matches (its kit drained the stream: `db.presence`;
  checked again under a lock of its row as the matches are created).
- An unknown name is answered with the names that would do: the house bots there are (or that
  there are none on this server), and some connected bots.
- Suspended bots neither challenge nor are challenged. A challenger may have at most
  `MAX_RUNNING` challenge matches running at once.
- The matches are created with `origin = 'challenge'` and `rated = False` (in the INSERT itself,
  so no failure can leave one looking like an ordinary match). The ladder counts and
  rates only its own matches (`ladder_matches`), so it never blocks a challenge and a challenge
  never blocks (nor moves) the ladder.
"""

from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from db.models import HOUSE, ORIGIN_CHALLENGE, PERSON, RUNNING, Bot, Match, bot_named
from db.presence import CHALLENGE, refusal, takes_challenges
from db.settings import Settings, settings
from services.core import matches
from services.core.connections import factory_of
from services.core.errors import FailedPrecondition, InvalidArgument, NotFound, ServiceError
from services.live.presence import is_connected
from services.ops import bots

MAX_MATCHES = 20  # per challenge
NOT_CONNECTED = "opponent_not_connected"  # ErrorInfo metadata `why`: a client may wait for it
MAX_RUNNING = 20  # running challenge matches of one challenger


class TooManyChallenges(ServiceError):
    code = "RESOURCE_EXHAUSTED"


def challenge(token: str | None, opponent: str, count: int = 1, *, profile: str = "soft",
              move_ms: int | None = None, bank_ms: int | None = None,
              sessions: sessionmaker[Session] | None = None,
              config: Settings | None = None) -> list[Match]:
    """Start `count` unrated matches between the token's bot and the bot named `opponent`,
    seats alternating (the challenger sits in seat 0 first). The new matches, in order."""
    config = config or settings()
    challenger = bots.bot_for_token(token, sessions=sessions)
    count = count or 1
    if not 1 <= count <= MAX_MATCHES:
        raise InvalidArgument(f"matches must be between 1 and {MAX_MATCHES}, got {count}")
    name = (opponent or "").strip()
    if not name:
        raise InvalidArgument("name the opponent: a house bot (e.g. house-rdeep) or a "
                              "connected bot")
    with factory_of(sessions)() as s:
        other = s.scalar(select(Bot).where(bot_named(name)))
        if other is None:
            raise NotFound(f"no bot named {name[:100]!r}: " + _who_is_there(s, config))
        if other.id == challenger.id:
            raise InvalidArgument("a bot cannot challenge itself")
        if other.kind == PERSON:
            raise FailedPrecondition(f"{other.name} is a person: people choose their games at "
                                     "the site's table (run your kit with --people)")
        if challenger.suspended_at is not None:
            raise FailedPrecondition(f"bot {challenger.name} is suspended: no challenges")
        if other.suspended_at is not None:
            raise FailedPrecondition(f"bot {other.name} is suspended: it cannot be challenged")
        if other.kind != HOUSE and not is_connected(other, config.heartbeat_s):
            raise FailedPrecondition(
                f"bot {other.name} is not connected: a remote bot can be challenged only while "
                "its Play stream is open (or challenge a house bot)", why=NOT_CONNECTED)
        if other.kind != HOUSE and not takes_challenges(other, config.heartbeat_s):
            raise FailedPrecondition(refusal(other.name, other.accepts, CHALLENGE))
        running = s.scalar(select(func.count()).select_from(Match).where(
            Match.origin == ORIGIN_CHALLENGE, Match.state == RUNNING,
            or_(Match.bot0_id == challenger.id, Match.bot1_id == challenger.id))) or 0
    if running + count > MAX_RUNNING:
        raise TooManyChallenges(
            f"{running} challenge matches of {challenger.name} are running; at most "
            f"{MAX_RUNNING} at once: wait for some to end")
    seatings = [[challenger.id, other.id] if i % 2 == 0 else [other.id, challenger.id]
                for i in range(count)]
    return matches.create_matches(  # all of them, or none
        seatings, profile=profile, move_ms=move_ms, bank_ms=bank_ms, origin=ORIGIN_CHALLENGE,
        rated=False, must_take={other.id: CHALLENGE}, sessions=sessions, config=config,
        # a hosted version's container: its seats are its version's (db.hosted)
        bot_versions={challenger.id: challenger.hosted_version}
        if challenger.hosted_version else None)


NAMES_SHOWN = 8


def _who_is_there(s: Session, config: Settings) -> str:
    """Which bots could be challenged instead (for an unknown name)."""
    house = list(s.scalars(select(Bot.name).where(Bot.kind == HOUSE, Bot.suspended_at.is_(None))
                           .order_by(Bot.name).limit(NAMES_SHOWN)))
    remote = [b.name for b in s.scalars(select(Bot).where(
        Bot.kind != HOUSE, Bot.suspended_at.is_(None), Bot.connected_since.is_not(None))
        .order_by(Bot.name).limit(100)) if takes_challenges(b, config.heartbeat_s)]
    connected = (f"connected bots now: {', '.join(remote[:NAMES_SHOWN])}"
                 + (", ..." if len(remote) > NAMES_SHOWN else "")) if remote else \
        "no remote bot is connected now"
    if house:
        return f"house bots here: {', '.join(house)}; {connected}"
    return ("this server has no house bots (they exist only where workers play them, e.g. "
            f"`bummerl up`; `bummerl serve` alone has none); {connected}")
