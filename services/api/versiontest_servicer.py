"""The gRPC VersionTestService: a thin adapter from bummerl.v1 version-test requests to
`services.ops.versiontests` (who may do what is decided there, from the call's token)."""

from __future__ import annotations

import math

import grpc
from bummerl import wire
from bummerl.v1 import match_pb2, versiontest_pb2, versiontest_pb2_grpc
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.settings import Settings
from db.versiontests import Side, Summary
from services.api.servicers import token_of, unary
from services.live.convert import match_to_pb
from services.ops import versiontests

VERSION_TEST_SERVICE = versiontest_pb2.DESCRIPTOR.services_by_name["VersionTestService"].full_name
STATES = {
    "waiting": versiontest_pb2.TEST_STATE_WAITING,
    "running": versiontest_pb2.TEST_STATE_RUNNING,
    "H1": versiontest_pb2.TEST_STATE_H1,
    "H0": versiontest_pb2.TEST_STATE_H0,
    "capped": versiontest_pb2.TEST_STATE_CAPPED,
    "stopped": versiontest_pb2.TEST_STATE_STOPPED,
    "timed_out": versiontest_pb2.TEST_STATE_TIMED_OUT,
}
STATE_NAMES = {v: k for k, v in STATES.items()}


def _finite(x: float | None) -> float:
    return x if x is not None and math.isfinite(x) else 0.0


def side_to_pb(side: Side) -> versiontest_pb2.TestSide:
    return versiontest_pb2.TestSide(
        bot_id=side.bot_id, bot_name=side.name, version=side.version or "",
        connected=side.connected, mean_think_ms=side.mean_think_ms or 0.0)


def test_to_pb(summary: Summary) -> versiontest_pb2.VersionTest:
    t = summary.test
    return versiontest_pb2.VersionTest(
        test_id=t.id, candidate=side_to_pb(summary.candidate),
        baseline=side_to_pb(summary.baseline), state=STATES[t.state], sprt=summary.sprt,
        elo0=t.elo0 or 0.0, elo1=t.elo1 or 0.0, alpha=t.alpha, beta=t.beta,
        max_games=2 * t.max_pairs if t.max_pairs else 0,
        profile=wire.PROFILES[engine.Profile(t.profile)],
        time_control=match_pb2.TimeControl(move_ms=t.move_ms, bank_ms=t.bank_ms),
        concurrency=t.concurrency, lost_both=t.lost_both, split=t.split,
        won_both=t.won_both, forfeited_pairs=t.forfeited, void_pairs=t.voided, llr=t.llr,
        llr_lower=_finite(summary.llr_lower), llr_upper=_finite(summary.llr_upper),
        score=summary.score, score_low=summary.score_ci[0], score_high=summary.score_ci[1],
        elo=_finite(summary.elo), elo_low=_finite(summary.elo_ci[0]),
        elo_high=_finite(summary.elo_ci[1]), running_match_ids=summary.running_match_ids,
        started_by=t.started_by, reason=t.reason or "", created_at=wire.timestamp(t.created_at),
        started_at=wire.timestamp(t.started_at), finished_at=wire.timestamp(t.finished_at),
        matches=[versiontest_pb2.TestMatch(match=match_to_pb(m),
                                           counts=summary.counts.get(m.pair_id or 0, ""))
                 for m in summary.matches])


class VersionTestServicer(versiontest_pb2_grpc.VersionTestServiceServicer):
    def __init__(self, sessions: sessionmaker[Session] | None, config: Settings) -> None:
        self.sessions = sessions
        self.config = config

    @unary
    def StartTest(self, request, context):  # type: ignore[no-untyped-def]
        tc = request.time_control
        summary = versiontests.start_test(
            token_of(context), request.candidate, request.baseline,
            elo0=request.elo0 if request.HasField("elo0") else None,
            elo1=request.elo1 if request.HasField("elo1") else None,
            alpha=request.alpha if request.HasField("alpha") else None,
            beta=request.beta if request.HasField("beta") else None,
            games=request.games,
            profile=wire.PROFILE_NAMES[request.profile].value
            if request.profile in wire.PROFILE_NAMES else None,
            move_ms=tc.move_ms or None, bank_ms=tc.bank_ms or None,
            concurrency=request.concurrency, sessions=self.sessions, config=self.config)
        return versiontest_pb2.StartTestResponse(test=test_to_pb(summary))

    @unary
    def GetTest(self, request, context):  # type: ignore[no-untyped-def]
        summary = versiontests.get_test(token_of(context), request.test_id,
                                        sessions=self.sessions, config=self.config)
        return versiontest_pb2.GetTestResponse(test=test_to_pb(summary))

    @unary
    def ListTests(self, request, context):  # type: ignore[no-untyped-def]
        rows = versiontests.list_visible(
            token_of(context), state=STATE_NAMES.get(request.state), limit=request.page_size,
            sessions=self.sessions, config=self.config)
        return versiontest_pb2.ListTestsResponse(tests=[test_to_pb(r) for r in rows])

    @unary
    def StopTest(self, request, context):  # type: ignore[no-untyped-def]
        summary = versiontests.stop_test(token_of(context), request.test_id, request.reason,
                                         sessions=self.sessions, config=self.config)
        return versiontest_pb2.StopTestResponse(test=test_to_pb(summary))


def add_to_server(server: grpc.Server | grpc.aio.Server, sessions: sessionmaker[Session] | None,
                  config: Settings) -> str:
    """Register the VersionTestService on `server`; its full name (for reflection/health)."""
    versiontest_pb2_grpc.add_VersionTestServiceServicer_to_server(
        VersionTestServicer(sessions, config), server)
    return VERSION_TEST_SERVICE
