"""People at the table (issue 30; docs/people.md): plain functions under the gRPC
PeopleService (`services.api.people_servicer`), whose one client is the web server.

- The web's credential (`BUMMERL_WEB_TOKEN`) opens every call (`require_web`); a call that acts
  for a person names its `person_id`, and the person must hold the seat (PermissionDenied) and
  not be suspended (FailedPrecondition: the suspension is its seat holder's, so `bummerl admin
  suspend` works for a person as for a bot).
- A person is a `people` row with a seat holder, a `bots` row of kind 'person' named `@name`
  (guests `@name~guest-xxxxxx`): matches, records, exports and spectators work unchanged.
  Passwords are hashed with werkzeug.security (scrypt); a guest has none and plays casual only.
- Games: origin 'people'; `rated` only for a signed-up person who asked and an opponent that
  takes rated games (house bots do; a remote bot says so in its Hello). Rated games of one
  person against one bot alternate the person's seat (the count of their rated games so far,
  even: seat 0), each with a fresh secret seed. The table shows the commitment
  sha256(str(seed)) from the start and the seed once the match is over.
- The table (`table`) is built from the engine's observation of the person's seat only
  (`services.core.matches.get_observation`, as for a bot), plus public facts of the match.
- An action goes through `services.core.actions.submit_action`, the path of SubmitAction.
- A log-in costs one password hash whether the name is known or not (an unknown name is
  checked against a dummy hash), so that time does not tell names apart. The service locks no
  name (anyone could lock anyone out): the web throttles failed log-ins per name and address,
  and per address (web.security).
- Sessions: services/ops/people_sessions.py (issued at sign-in, revocable).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Select, bindparam, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from werkzeug.security import check_password_hash, generate_password_hash

import engine
from db.base import utcnow
from db.models import (
    HOUSE,
    PEOPLE_RATED,
    PERSON,
    REMOTE,
    RUNNING,
    ActionLog,
    Bot,
    Hand,
    Match,
    bot_named,
)
from db.people import INVITE_TTL, ORIGIN_PEOPLE, PeopleRating, Person, PersonInvite
from db.presence import CHALLENGE
from db.ratings import Rating
from db.settings import Settings, settings, sha256
from events.levels import level_for_strategy
from services.core import actions, matches
from services.core.cache import live_match
from services.core.connections import factory_of, writing
from services.core.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    quote,
)
from services.live.presence import is_connected

NAME = re.compile(r"[A-Za-z0-9_-]{2,20}")
MIN_PASSWORD, MAX_PASSWORD = 8, 200
MAX_OPEN_TABLES = 5  # running games of one person at once, however they were started
MAX_OPEN_INVITES = 3  # invites of one person not yet taken nor expired (db.people.INVITE_TTL)
WRONG_LOGIN = "wrong name or password"
PROFILES = ("soft", "sharp")


def commitment(seed: int) -> str:
    """The commitment to a match's deal: the hex SHA-256 of the seed's decimal text."""
    return hashlib.sha256(str(seed).encode()).hexdigest()


# --- the web's credential ----------------------------------------------------------------------
def is_web(token: str | None, config: Settings) -> bool:
    """Is `token` the web's credential (BUMMERL_WEB_TOKEN)?"""
    return bool(token and config.web_token_sha256
                and hmac.compare_digest(sha256(token), config.web_token_sha256))


def require_web(token: str | None, config: Settings | None = None, what: str = "") -> None:
    """Raise Unauthenticated (no token) or PermissionDenied unless `token` is the web's."""
    config = config or settings()
    if not token:
        raise Unauthenticated(f"{what} needs the web token: send metadata "
                              "'authorization: Bearer <BUMMERL_WEB_TOKEN>'")
    if not config.web_token_sha256 or not hmac.compare_digest(sha256(token),
                                                              config.web_token_sha256):
        raise PermissionDenied(f"{what} needs the web token (BUMMERL_WEB_TOKEN); this token is "
                               "not it" + ("" if config.web_token_sha256 else
                                           ": this service has no web token set"))


# --- people --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PersonView:
    person: Person
    bot: Bot
    rating: PeopleRating | None


def _name(name: str) -> str:
    name = (name or "").strip()
    if not NAME.fullmatch(name):
        raise InvalidArgument(f"bad name {quote(name)}: 2-20 letters, digits, '_' or '-'",
                              field="name")
    return name


def _view(s: Session, person: Person) -> PersonView:
    bot = s.get(Bot, person.bot_id)
    assert bot is not None
    return PersonView(person, bot, s.get(PeopleRating, bot.id))


def _new_person(s: Session, name: str, password_hash: str | None, display: str) -> Person:
    bot = Bot(name=display, kind=PERSON)
    s.add(bot)
    s.flush()
    person = Person(name=name, name_key=None if password_hash is None else name.lower(),
                    password_hash=password_hash, guest=password_hash is None, bot_id=bot.id)
    s.add(person)
    s.flush()
    return person


def register_person(name: str, password: str, *,
                    sessions: sessionmaker[Session] | None = None) -> PersonView:
    """A new signed-up person `name` (unique case-insensitively) with `password`."""
    name = _name(name)
    if not MIN_PASSWORD <= len(password or "") <= MAX_PASSWORD:
        raise InvalidArgument(f"the password must be {MIN_PASSWORD}-{MAX_PASSWORD} characters",
                              field="password")
    hashed = generate_password_hash(password)
    taken = AlreadyExists(f"the name {name!r} is taken: choose another")
    with factory_of(sessions)() as s, writing(s):
        try:
            with s.begin():
                if s.scalar(select(Person.id).where(Person.name_key == name.lower())):
                    raise taken
                person = _new_person(s, name, hashed, f"@{name}")
        except IntegrityError:  # taken meanwhile
            raise taken from None
        return _view(s, person)


def login(name: str, password: str, *, sessions: sessionmaker[Session] | None = None
          ) -> PersonView:
    """The signed-up person `name` if `password` is theirs; Unauthenticated otherwise (the same
    message for an unknown name)."""
    key = (name or "").strip().lower()
    dummy = _dummy_hash()  # (made at the first log-in, whichever name it names)
    with factory_of(sessions)() as s:
        person = s.scalar(select(Person).where(Person.name_key == key)) if key else None
        hashed = dummy  # one hash either way: an unknown name is checked against a dummy
        if person is not None and person.password_hash is not None:
            hashed = person.password_hash
        right = check_password_hash(hashed, password or "")
        if person is None or person.password_hash is None or not right:
            raise Unauthenticated(WRONG_LOGIN)
        return _view(s, person)


@functools.cache
def _dummy_hash() -> str:
    """A hash of a random password no one knows, made as the real ones are (the same work to
    check); once per process."""
    return generate_password_hash(secrets.token_urlsafe(24))


def start_guest(name: str, *, sessions: sessionmaker[Session] | None = None) -> PersonView:
    """A new guest named `name` (seat holder `@name~guest-xxxxxx`)."""
    name = _name(name)
    with factory_of(sessions)() as s, writing(s):
        for _ in range(5):
            try:
                with s.begin():
                    person = _new_person(s, name, None,
                                         f"@{name}~guest-{secrets.token_hex(3)}")
                return _view(s, person)
            except IntegrityError:  # the same suffix twice: another
                continue
    raise FailedPrecondition("no free guest name; try again")


def get_person(person_id: int, *, sessions: sessionmaker[Session] | None = None) -> PersonView:
    with factory_of(sessions)() as s:
        return _view(s, _person(s, person_id))


def _person(s: Session, person_id: int) -> Person:
    person = s.get(Person, person_id)
    if person is None:
        raise NotFound(f"no person with id {person_id}")
    return person


def _may_play(bot: Bot) -> None:
    if bot.suspended_at is not None:
        raise FailedPrecondition(
            f"{bot.name} is suspended: {bot.suspended_reason or 'no reason given'}; ask the "
            "operator to reinstate you")


# --- opponents ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpponentView:
    bot: Bot
    rating: PeopleRating | None
    accepts: str  # PEOPLE_CASUAL or PEOPLE_RATED
    won: int
    lost: int


def _record_against_people(s: Session, bot_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(won, lost) of each bot in finished games with people."""
    out: dict[int, tuple[int, int]] = {}
    if not bot_ids:
        return out
    rows = s.execute(select(Match.bot0_id, Match.bot1_id, Match.winner).where(
        Match.origin == ORIGIN_PEOPLE, Match.winner.is_not(None),
        or_(Match.bot0_id.in_(bot_ids), Match.bot1_id.in_(bot_ids))))
    for bot0, bot1, winner in rows:
        for seat, bot_id in enumerate((bot0, bot1)):
            if bot_id in bot_ids:
                won, lost = out.get(bot_id, (0, 0))
                out[bot_id] = (won + (winner == seat), lost + (winner != seat))
    return out


def accepts_of(bot: Bot, config: Settings) -> str | None:
    """What `bot` takes of people now: house bots casual and rated; a remote bot what its
    Hello said, while connected; nothing else."""
    if bot.suspended_at is not None:
        return None
    if bot.kind == HOUSE:
        return PEOPLE_RATED
    if bot.kind == REMOTE and bot.accepts_people and is_connected(bot, config.heartbeat_s):
        return bot.accepts_people
    return None


def list_opponents(*, profile: str | None = "soft",
                   sessions: sessionmaker[Session] | None = None,
                   config: Settings | None = None) -> list[OpponentView]:
    """House bots strongest first, then the connected remote bots that accept people, strongest
    first. Strength is one measure for every bot: its ladder rating in `profile` (mu - 3 sigma,
    from its games against the other bots: every house bot plays the ladder). A rating against
    people is not mixed in: few games make it a poor measure, and on another scale of
    opponents it put house-random above house-champion. Bots with no ladder rating yet come
    after those with one: the house levels by their measured strength (events.levels), then
    by name."""
    config = config or settings()
    profile = _profile(profile)
    with factory_of(sessions)() as s:
        bots = list(s.scalars(select(Bot).where(
            Bot.suspended_at.is_(None),
            or_(Bot.kind == HOUSE, Bot.accepts_people.is_not(None))).order_by(Bot.name)))
        bots = [b for b in bots if accepts_of(b, config)]
        ratings = {r.bot_id: r for r in s.scalars(select(PeopleRating).where(
            PeopleRating.bot_id.in_([b.id for b in bots])))} if bots else {}
        record = _record_against_people(s, [b.id for b in bots])
        ladder = {r.bot_id: r.mu - 3 * r.sigma for r in s.scalars(select(Rating).where(
            Rating.profile == profile, Rating.bot_id.in_([b.id for b in bots])))} if bots else {}
    views = [OpponentView(b, ratings.get(b.id), accepts_of(b, config) or "",
                          *record.get(b.id, (0, 0))) for b in bots]

    def strength(v: OpponentView) -> tuple[int, int, float, float, str]:
        ordinal = ladder.get(v.bot.id)
        level = level_for_strategy(v.bot.house_strategy) if v.bot.kind == HOUSE else None
        measured = level.rating if level is not None and level.rating is not None else None
        return (0 if v.bot.kind == HOUSE else 1, 0 if ordinal is not None else 1,
                -(ordinal or 0.0), -measured if measured is not None else math.inf, v.bot.name)

    return sorted(views, key=strength)


# --- games ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Started:
    match: Match
    seat: int
    commitment: str


def _profile(profile: str | None) -> str:
    profile = profile or "soft"
    if profile not in PROFILES:
        raise InvalidArgument(f"unknown profile {quote(profile)}: 'soft' or 'sharp' (R9)")
    return profile


def _open_tables(s: Session, bot_id: int) -> int:
    return s.scalar(select(func.count()).select_from(Match).where(
        Match.state == RUNNING, or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))) or 0


def _room_for_a_game(s: Session, bot_id: int, who: str = "you have") -> None:
    """FailedPrecondition when the seat holder `bot_id` plays MAX_OPEN_TABLES games already
    (against bots and people, from invites too)."""
    if _open_tables(s, bot_id) >= MAX_OPEN_TABLES:
        raise FailedPrecondition(f"{who} {MAX_OPEN_TABLES} games running, the most one person "
                                "may play at once: finish one first")


def start_game(person_id: int, opponent: str, *, profile: str | None = "soft",
               move_ms: int | None = None, bank_ms: int | None = None,
               max_illegal: int | None = None, rated: bool = False,
               sessions: sessionmaker[Session] | None = None,
               config: Settings | None = None) -> Started:
    """A new game of person `person_id` against the bot named `opponent`."""
    config = config or settings()
    profile = _profile(profile)
    name = (opponent or "").strip()
    if not name:
        raise InvalidArgument("name the opponent (ListOpponents)", field="opponent")
    with factory_of(sessions)() as s:
        view = _view(s, _person(s, person_id))
        _may_play(view.bot)
        if rated and view.person.guest:
            raise FailedPrecondition("guests play casual games only: sign up to play rated")
        other = s.scalar(select(Bot).where(bot_named(name)))
        if other is None or other.kind == PERSON:
            raise NotFound(f"no bot named {name[:100]!r} to play: see ListOpponents")
        accepts = accepts_of(other, config)
        if accepts is None:
            raise FailedPrecondition(
                f"bot {other.name} does not play people now (suspended, not connected, or its "
                "kit does not run with --people)")
        if rated and accepts != PEOPLE_RATED:
            raise FailedPrecondition(f"bot {other.name} plays casual games with people only")
        _room_for_a_game(s, view.bot.id)
        seat = 0
        if rated:  # alternate seats against this bot
            before = s.scalar(select(func.count()).select_from(Match).where(
                Match.origin == ORIGIN_PEOPLE, Match.rated.is_(True),
                or_((Match.bot0_id == view.bot.id) & (Match.bot1_id == other.id),
                    (Match.bot1_id == view.bot.id) & (Match.bot0_id == other.id)))) or 0
            seat = before % 2
        else:
            seat = secrets.randbelow(2)
    seed = secrets.randbits(63)  # fresh and secret: only its commitment is shown
    seating = [view.bot.id, other.id] if seat == 0 else [other.id, view.bot.id]
    m = matches.create_match(
        seating, profile=profile, seed=seed, move_ms=move_ms, bank_ms=bank_ms,
        max_illegal=max_illegal, origin=ORIGIN_PEOPLE, rated=rated,
        must_take=None if other.kind == HOUSE else {other.id: CHALLENGE},
        sessions=sessions, config=config)
    return Started(m, seat, commitment(seed))


def create_invite(person_id: int, *, profile: str | None = "soft", move_ms: int | None = None,
                  bank_ms: int | None = None,
                  sessions: sessionmaker[Session] | None = None) -> str:
    """A new invite code of person `person_id` (a casual game against whoever accepts)."""
    profile = _profile(profile)
    code = secrets.token_urlsafe(18)
    with factory_of(sessions)() as s, writing(s), s.begin():
        view = _view(s, _person(s, person_id))
        _may_play(view.bot)
        _room_for_a_game(s, view.bot.id)
        open_invites = s.scalar(select(func.count()).select_from(PersonInvite).where(
            PersonInvite.person_id == person_id, PersonInvite.accepted_by.is_(None),
            PersonInvite.created_at > utcnow() - INVITE_TTL)) or 0
        if open_invites >= MAX_OPEN_INVITES:
            minutes = int(INVITE_TTL.total_seconds() // 60)
            raise FailedPrecondition(
                f"you have {MAX_OPEN_INVITES} open invites, the most one person may have: wait "
                f"until a friend takes one (an invite expires {minutes} minutes after it is "
                "made)")
        s.add(PersonInvite(code=code, person_id=person_id, profile=profile,
                           move_ms=move_ms or None, bank_ms=bank_ms or None))
    return code


def accept_invite(person_id: int, code: str, *, sessions: sessionmaker[Session] | None = None,
                  config: Settings | None = None) -> Started:
    """Seat person `person_id` against the invite's maker: the first to accept wins it."""
    config = config or settings()
    factory = factory_of(sessions)
    with factory() as s:
        invite = s.get(PersonInvite, (code or "")[:40])
        if invite is None:
            raise NotFound("no such invite: check the link")
        if invite.person_id == person_id:
            raise FailedPrecondition("this is your own invite: send the link to a friend")
        if invite.expired():
            minutes = int(INVITE_TTL.total_seconds() // 60)
            raise FailedPrecondition(f"this invite expired: nobody took it within {minutes} "
                                     "minutes of its making; ask your friend for a new link")
        guest = _view(s, _person(s, person_id))
        host = _view(s, _person(s, invite.person_id))
        _may_play(guest.bot)
        _may_play(host.bot)
        _room_for_a_game(s, guest.bot.id)
        _room_for_a_game(s, host.bot.id, f"{host.person.name} has")
    with factory() as s, writing(s), s.begin():  # claim it: one person only
        claimed = s.execute(update(PersonInvite).where(
            PersonInvite.code == invite.code, PersonInvite.accepted_by.is_(None),
            PersonInvite.created_at > utcnow() - INVITE_TTL)
            .values(accepted_by=person_id))
        if claimed.rowcount == 0:  # type: ignore[attr-defined]
            raise FailedPrecondition("this invite was accepted already")
    seat = secrets.randbelow(2)
    seed = secrets.randbits(63)
    seating = [guest.bot.id, host.bot.id] if seat == 0 else [host.bot.id, guest.bot.id]
    try:
        m = matches.create_match(seating, profile=invite.profile, seed=seed,
                                 move_ms=invite.move_ms, bank_ms=invite.bank_ms,
                                 origin=ORIGIN_PEOPLE, rated=False, sessions=sessions,
                                 config=config)
    except Exception:  # no match: the invite is open again
        with factory() as s, writing(s), s.begin():
            s.execute(update(PersonInvite).where(PersonInvite.code == invite.code)
                      .values(accepted_by=None))
        raise
    with factory() as s, writing(s), s.begin():
        s.execute(update(PersonInvite).where(PersonInvite.code == invite.code)
                  .values(match_id=m.id))
    return Started(m, seat, commitment(seed))


# --- the table -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableView:
    match: Match
    seat: int
    observation: engine.Observation
    hands: list[Hand]
    commitment: str
    opponent_connected: bool

    @property
    def claim_hint(self) -> bool:
        """The service says whether a claim is good in the soft profile only (in the sharp
        profile the person counts)."""
        return self.match.profile == "soft"

    @property
    def claim_good(self) -> bool:
        """A claim is legal now and correct (R7.2: 66 or more, effective marriages counted)."""
        obs = self.observation
        return self.claim_hint and obs.points >= 66 and any(
            a.kind == engine.ActionKind.CLAIM for a in obs.legal_actions)


class SeatBot(NamedTuple):
    """A bot of a table as a plain value: what the table's readers use of it (its name and
    kind, a suspension, a remote bot's presence)."""

    id: int
    name: str
    kind: str
    house_strategy: str | None
    suspended_at: datetime | None
    suspended_reason: str | None
    connected_since: datetime | None
    last_seen_at: datetime | None


def _seat_query() -> Select[Any]:
    """SELECT a match row, its two bots' `SeatBot` columns and the bot of person :person_id,
    by the match's id :match_id (built once: building a statement costs more than running it,
    and a table is read on every change of every open table)."""
    bots = Bot.__table__
    b0, b1 = bots.alias("b0"), bots.alias("b1")
    person_bot = select(Person.bot_id).where(Person.id == bindparam("person_id"))
    matches_table = Match.__table__
    return (select(matches_table,
                   *(b.c[f].label(f"b{i}_{f}") for i, b in enumerate((b0, b1))
                     for f in SeatBot._fields),
                   person_bot.scalar_subquery().label("person_bot"))
            .join(b0, b0.c.id == matches_table.c.bot0_id)
            .join(b1, b1.c.id == matches_table.c.bot1_id)
            .where(matches_table.c.id == bindparam("match_id")))


_SEAT_QUERY = _seat_query()


def _seat_of(s: Session, person_id: int, match_id: int) -> tuple[Bot, Match, int]:
    """The person's bot, the match (a plain copy of its row, with its bots as `SeatBot`s) and
    the seat the person plays in it; one query, without the ORM's objects (a table is read on
    every change of every open table)."""
    row = s.connection().execute(_SEAT_QUERY, {"person_id": person_id,
                                               "match_id": match_id}).first()
    if row is None:
        _person(s, person_id)  # a missing person is named first, as before
        raise NotFound(f"no match with id {match_id}")
    if row.person_bot is None:
        raise NotFound(f"no person with id {person_id}")
    values = row._mapping
    bots = tuple(SeatBot(*(values[f"b{i}_{f}"] for f in SeatBot._fields)) for i in (0, 1))
    m = live_match(row, (bots[0], bots[1]))
    seat = m.seat_of(row.person_bot)
    if seat is None:
        raise PermissionDenied(f"person {person_id} plays no seat of match {match_id}")
    return m.bot(seat), m, seat


def table(person_id: int, match_id: int, *, sessions: sessionmaker[Session] | None = None,
          config: Settings | None = None, known_hands: tuple[int, list[Hand]] | None = None
          ) -> TableView:
    """Match `match_id` as person `person_id`'s seat sees it (PermissionDenied for another).
    `known_hands`: the finished hands read when the match was at hand number N, as (N, hands):
    not read again while it still is and runs."""
    config = config or settings()
    with factory_of(sessions)() as s:
        _, m, seat = _seat_of(s, person_id, match_id)
        obs = matches.observe_match(m, seat, sessions=sessions)
        hands: list[Hand] = []
        if known_hands is not None and known_hands[0] == m.hand_number \
                and obs.to_act is not None:
            hands = known_hands[1]
        elif m.hand_number or obs.to_act is None:  # else the first hand is under way
            hands = list(s.scalars(select(Hand).where(Hand.match_id == match_id,
                                                      Hand.winner.is_not(None))
                                   .order_by(Hand.number)))
        other = m.bot(1 - seat)
        connected = other.kind != REMOTE or is_connected(other, config.heartbeat_s)
        return TableView(m, seat, obs, hands, commitment(m.seed), connected)


MAX_ACTIONS_SENT = 500  # the most actions a followed table's update carries (a long gap)


def table_since(person_id: int, match_id: int, after_seq: int, *,
                sessions: sessionmaker[Session] | None = None, config: Settings | None = None,
                heard: dict[int, tuple[int, str]] | None = None,
                known_hands: tuple[int, list[Hand]] | None = None
                ) -> tuple[TableView, list[tuple[int, int, str]]]:
    """The person's table now (`table`, with `known_hands`) and the match's actions from seq
    `after_seq` on (the seq of the table its viewer has seen), as (seq, seat, text): what a
    followed table sends. `heard`: actions by seq already known (from the changes announced),
    so the log is read only for those missing."""
    view = table(person_id, match_id, sessions=sessions, config=config,
                 known_hands=known_hands)
    if view.match.seq <= after_seq:
        return view, []
    wanted = range(after_seq, view.match.seq)
    if heard is not None and len(wanted) <= MAX_ACTIONS_SENT and all(q in heard for q in wanted):
        return view, [(q, *heard[q]) for q in wanted]
    with factory_of(sessions)() as s:
        rows = s.execute(select(ActionLog.seq, ActionLog.seat, ActionLog.action)
                         .where(ActionLog.match_id == match_id, ActionLog.seq >= after_seq,
                                ActionLog.seq < view.match.seq)
                         .order_by(ActionLog.seq.desc()).limit(MAX_ACTIONS_SENT)).all()
    return view, [(seq, seat, text) for seq, seat, text in reversed(rows)]


def act(person_id: int, match_id: int, expected_seq: int, action: str,
        request_id: str | None = None, *, sessions: sessionmaker[Session] | None = None,
        config: Settings | None = None) -> tuple[actions.SubmitResult, TableView]:
    """Submit `action` (engine text) for person `person_id`'s seat: SubmitAction's path."""
    with factory_of(sessions)() as s:
        bot, _, seat = _seat_of(s, person_id, match_id)
    _may_play(bot)
    result = actions.submit_action(match_id, seat, action, expected_seq=expected_seq,
                                   request_id=request_id or None, bot_id=bot.id,
                                   sessions=sessions, config=config)
    return result, table(person_id, match_id, sessions=sessions, config=config)


def resign(person_id: int, match_id: int, *, sessions: sessionmaker[Session] | None = None,
           config: Settings | None = None) -> TableView:
    """Person `person_id` resigns casual match `match_id`: their seat forfeits it."""
    with factory_of(sessions)() as s:
        bot, m, seat = _seat_of(s, person_id, match_id)
        if m.rated:
            raise FailedPrecondition("a rated game cannot be resigned: play it out (or let "
                                     "your clock run out)")
    actions.resign_match(match_id, seat, f"{bot.name} resigned", sessions=sessions)
    return table(person_id, match_id, sessions=sessions, config=config)
