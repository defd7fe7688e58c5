"""The gRPC PeopleService: a thin adapter from bummerl.v1 people requests to
`services.ops.people`, each call checked against the web's token first."""

from __future__ import annotations

from typing import Any

import grpc
from bummerl import wire
from bummerl.v1 import common_pb2, people_pb2, people_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

from db.models import PEOPLE_CASUAL, PEOPLE_RATED
from db.people import PeopleRating
from db.settings import Settings
from services.api.people_hints_servicer import HintsMixin
from services.api.servicers import Streams, streaming, token_of, unary
from services.core import breaker, connections
from services.live import convert, tables
from services.ops import people, people_sessions

PEOPLE_SERVICE = people_pb2.DESCRIPTOR.services_by_name["PeopleService"].full_name
ACCEPTS = {PEOPLE_CASUAL: common_pb2.ACCEPTS_PEOPLE_CASUAL,
           PEOPLE_RATED: common_pb2.ACCEPTS_PEOPLE_RATED}


def rating_to_pb(row: PeopleRating | None) -> people_pb2.PeopleRating | None:
    if row is None:
        return None
    return people_pb2.PeopleRating(mu=row.mu, sigma=row.sigma, ordinal=row.mu - 3 * row.sigma,
                                   games=row.games)


def person_to_pb(view: people.PersonView) -> people_pb2.Person:
    p, bot = view.person, view.bot
    return people_pb2.Person(
        person_id=p.id, name=p.name, guest=p.guest, bot_id=bot.id, display_name=bot.name,
        created_at=wire.timestamp(p.created_at), rating=rating_to_pb(view.rating),
        suspended=bot.suspended_at is not None, suspended_reason=bot.suspended_reason or "")


def table_to_pb(view: people.TableView) -> people_pb2.Table:
    m, obs = view.match, view.observation
    over = m.state != "running"
    match = convert.match_to_pb(m)
    if over:  # the deal may be checked now: convert leaves the seed of a pair's leg out
        match.seed = m.seed
    observation = wire.observation_to_pb(obs)
    table = people_pb2.Table(
        match=match, seat=view.seat, observation=observation, seq=m.seq,
        claim_good=view.claim_good, claim_hint=view.claim_hint, points=obs.points,
        names=[m.bot0.name, m.bot1.name], game_points_needed=[m.counter0, m.counter1],
        bank_left_ms=[m.bank0_ms, m.bank1_ms],
        on_clock=-1 if over or m.to_act is None else m.to_act,
        deadline=None if over else wire.timestamp(m.deadline_at),
        hands=[people_pb2.TableHand(number=h.number, dealer=h.dealer,
                                    result=convert.hand_result_to_pb(h)) for h in view.hands],
        commitment=view.commitment, seed=m.seed if over else 0, seed_revealed=over,
        opponent_connected=view.opponent_connected, rated=m.rated,
        can_resign=not over and not m.rated)
    if obs.tricks:
        table.last_trick.CopyFrom(observation.tricks[-1])
    return table


class PeopleServicer(HintsMixin, people_pb2_grpc.PeopleServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings,
                 streams: Streams | None = None) -> None:
        self.sessions = sessions
        self.config = config
        self.streams = streams or Streams(None, config)  # the server's pool and safety net

    def _web(self, context: grpc.ServicerContext, what: str) -> None:
        people.require_web(token_of(context), self.config, what)

    @streaming
    async def FollowTables(self, request_iterator, context):  # type: ignore[no-untyped-def]
        """Pushed tables for a socket process (services.live.tables)."""
        self._web(context, "FollowTables")
        breaker.of_sessions(self.sessions).check()
        site = connections.site_of(connections.bound_engine(self.sessions))
        follows = tables.Follows(site, self._table_since, self.streams.run,
                                 self.streams.safety_net(self.sessions))
        async for response in tables.serve(request_iterator, follows):
            yield response

    def _table_since(self, person_id: int, match_id: int, after_seq: int,
                     heard: dict[int, tuple[int, str]], memo: dict[str, Any]
                     ) -> tuple[people_pb2.Table, list[tuple[int, int, str]]]:
        view, actions = people.table_since(person_id, match_id, after_seq,
                                           sessions=self.sessions, config=self.config,
                                           heard=heard, known_hands=memo.get("hands"))
        memo["hands"] = (view.match.hand_number, view.hands)
        return table_to_pb(view), actions

    @unary
    def RegisterPerson(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "RegisterPerson")
        view = people.register_person(request.name, request.password, sessions=self.sessions)
        return people_pb2.RegisterPersonResponse(person=person_to_pb(view),
                                                 session=self._session(view))

    @unary
    def Login(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "Login")
        view = people.login(request.name, request.password, sessions=self.sessions)
        return people_pb2.LoginResponse(person=person_to_pb(view), session=self._session(view))

    @unary
    def StartGuest(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "StartGuest")
        view = people.start_guest(request.name, sessions=self.sessions)
        return people_pb2.StartGuestResponse(person=person_to_pb(view),
                                             session=self._session(view))

    def _session(self, view: people.PersonView) -> str:
        return people_sessions.open_session(view.person.id, sessions=self.sessions)

    @unary
    def Logout(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "Logout")
        return people_pb2.LogoutResponse(
            revoked=people_sessions.logout(request.session, sessions=self.sessions))

    @unary
    def LogoutEverywhere(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "LogoutEverywhere")
        return people_pb2.LogoutEverywhereResponse(revoked=people_sessions.logout_everywhere(
            request.person_id, sessions=self.sessions))

    @unary
    def ChangePassword(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "ChangePassword")
        token, revoked = people_sessions.change_password(
            request.person_id, request.old_password, request.new_password,
            sessions=self.sessions)
        return people_pb2.ChangePasswordResponse(session=token, revoked=revoked)

    @unary
    def GetPerson(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "GetPerson")
        view = people.get_person(request.person_id, sessions=self.sessions)
        return people_pb2.GetPersonResponse(person=person_to_pb(view))

    @unary
    def ListOpponents(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "ListOpponents")
        rows = people.list_opponents(
            profile=wire.PROFILE_NAMES[request.profile].value
            if request.profile in wire.PROFILE_NAMES else "soft",
            sessions=self.sessions, config=self.config)
        return people_pb2.ListOpponentsResponse(opponents=[people_pb2.Opponent(
            bot_id=o.bot.id, name=o.bot.name, house=o.bot.kind == "house",
            house_strategy=o.bot.house_strategy or "", rating=rating_to_pb(o.rating),
            accepts=ACCEPTS.get(o.accepts, common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED),
            won=o.won, lost=o.lost) for o in rows])

    @unary
    def StartGame(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "StartGame")
        tc = request.time_control
        started = people.start_game(
            request.person_id, request.opponent,
            profile=wire.PROFILE_NAMES[request.profile].value
            if request.profile in wire.PROFILE_NAMES else "soft",
            move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None,
            max_illegal=tc.max_illegal or None, rated=request.rated,
            sessions=self.sessions, config=self.config)
        return people_pb2.StartGameResponse(match=convert.match_to_pb(started.match),
                                            seat=started.seat, commitment=started.commitment)

    @unary
    def CreateInvite(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "CreateInvite")
        tc = request.time_control
        code = people.create_invite(
            request.person_id, profile=wire.PROFILE_NAMES[request.profile].value
            if request.profile in wire.PROFILE_NAMES else "soft",
            move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None, sessions=self.sessions)
        return people_pb2.CreateInviteResponse(code=code)

    @unary
    def AcceptInvite(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "AcceptInvite")
        started = people.accept_invite(request.person_id, request.code,
                                       sessions=self.sessions, config=self.config)
        return people_pb2.AcceptInviteResponse(match=convert.match_to_pb(started.match),
                                               seat=started.seat, commitment=started.commitment)

    @unary
    def GetTable(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "GetTable")
        view = people.table(request.person_id, request.match_id, sessions=self.sessions,
                            config=self.config)
        return people_pb2.GetTableResponse(table=table_to_pb(view))

    @unary
    def Act(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "Act")
        result, view = people.act(request.person_id, request.match_id, request.expected_seq,
                                  request.action, request.request_id, sessions=self.sessions,
                                  config=self.config)
        return people_pb2.ActResponse(seq=result.seq, duplicate=result.duplicate,
                                      table=table_to_pb(view))

    @unary
    def Resign(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "Resign")
        view = people.resign(request.person_id, request.match_id, sessions=self.sessions,
                             config=self.config)
        return people_pb2.ResignResponse(table=table_to_pb(view))


def add_to_server(server: grpc.Server | grpc.aio.Server, sessions: sessionmaker[Session] | None,
                  config: Settings, streams: Streams | None = None) -> str:
    """Register the PeopleService on `server` (its streams with the server's `streams`);
    returns its full name (for reflection)."""
    people_pb2_grpc.add_PeopleServiceServicer_to_server(
        PeopleServicer(sessions, config, streams), server)
    return PEOPLE_SERVICE
