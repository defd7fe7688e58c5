"""The error policy's parts (services/api/status.py): quoting, the status of each kind of exception,
the size of what a client receives, and the rate-limited log."""

from __future__ import annotations

import logging

import grpc
import pytest
from bummerl.v1 import match_pb2
from psycopg.errors import DeadlockDetected
from servicekit import fresh_database, running_service
from sqlalchemy import exc as sa

from services.api import status
from services.core import errors, failures
from services.core.errors import FailedPrecondition, InvalidArgument, ResourceExhausted, Unavailable

SECRET = 'connection to server at "db.internal" (10.0.0.7), port 5432 failed'


def test_quote_cuts_long_input_and_says_its_length():
    assert errors.quote("abc") == "'abc'"
    long = errors.quote("n" * 20_000)
    assert len(long) < 130 and long.endswith("… (20000 characters)")
    assert errors.quote(list(range(5000))).endswith("… (5000 items)")
    assert errors.cut("x" * 600) == "x" * 499 + "…"


@pytest.mark.parametrize("error, code", [
    (sa.OperationalError("SELECT 1", {}, Exception(SECRET)), "UNAVAILABLE"),
    (sa.InterfaceError("SELECT 1", {}, Exception(SECRET)), "UNAVAILABLE"),
    (sa.TimeoutError(SECRET), "UNAVAILABLE"),
    (sa.IntegrityError("INSERT", {}, Exception(SECRET)), "ABORTED"),
    (sa.OperationalError("UPDATE", {}, DeadlockDetected(SECRET)), "ABORTED"),
    (sa.DataError("INSERT", {}, Exception(SECRET)), "INVALID_ARGUMENT"),
    (OverflowError("Python int too large to convert to SQLite INTEGER"), "INVALID_ARGUMENT"),
    (RuntimeError(SECRET), "INTERNAL"),
    (KeyError(SECRET), "INTERNAL"),
])
def test_every_exception_gets_a_code_and_a_safe_message(error, code):
    failure = failures.failure_of(error, "test")
    assert failure.code == code
    assert "db.internal" not in failure.message and "5432" not in failure.message
    assert "SELECT" not in failure.message and "Traceback" not in failure.message


@pytest.mark.parametrize("error", [ResourceExhausted("at most 8 open streams per token"),
                                   Unavailable("the change bus is down: retry")])
def test_service_errors_for_limits_and_outages_keep_their_code(error):
    failure = failures.failure_of(error)
    assert (failure.code, failure.message) == (error.code, error.message)


def test_service_errors_keep_code_rule_and_a_bounded_message():
    failure = failures.failure_of(FailedPrecondition("R3.4 " + "y" * 20_000, rule="R3.4",
                                                   illegal_left=2))
    assert failure.code == "FAILED_PRECONDITION" and failure.rule == "R3.4"
    assert len(failure.message) == errors.MAX_MESSAGE and failure.details == {"illegal_left": "2"}
    rich = status.rich_status(failure)
    trailers = sum(len(k) + len(v) for k, v in rich.trailing_metadata)
    assert trailers < 8 * 1024, "the status must fit gRPC's 16 KiB trailers"
    assert ("bummerl-rule", "R3.4") in rich.trailing_metadata


def test_logs_one_short_line_per_client_error_and_a_traceback_per_bug(caplog):
    caplog.set_level(logging.INFO, logger="bummerl.errors")
    failures.CLIENT_LOG.start = float("-inf")  # a fresh window
    failures.BUG_LOG.start = float("-inf")
    failures.failure_of(InvalidArgument("bad seat"), "GetObservation")
    failures.failure_of(RuntimeError("boom"), "GetMatch")
    client, bug = caplog.records[-2:]
    assert client.getMessage() == "GetObservation: INVALID_ARGUMENT bad seat"
    assert client.exc_info is None
    assert bug.levelno == logging.ERROR and bug.exc_info is not None


def test_a_flood_of_client_errors_is_rate_limited(caplog):
    caplog.set_level(logging.INFO, logger="bummerl.errors")
    limited = failures.RateLimitedLog(burst=20, window=3600)
    for _ in range(1000):
        limited.emit(logging.INFO, "x")
    assert len(caplog.records) == 20 and limited.dropped == 980
    limited.start = float("-inf")  # the window is over: the next line says how many were dropped
    limited.emit(logging.INFO, "y")
    assert caplog.records[-1].getMessage() == "y (980 similar lines dropped)"


@pytest.fixture
def service(request, tmp_path):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


@pytest.mark.parametrize("error, code", [
    (sa.OperationalError("SELECT", {}, Exception(SECRET)), grpc.StatusCode.UNAVAILABLE),
    (RuntimeError(SECRET), grpc.StatusCode.INTERNAL),
])
def test_over_grpc_internals_never_reach_the_client(service, monkeypatch, error, code):
    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("services.core.matches.match_hands", broken)
    monkeypatch.setattr("services.core.matches.match_actions", broken)
    with pytest.raises(grpc.RpcError) as info:
        service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=1))
    assert info.value.code() == code and "db.internal" not in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        list(service.matches.WatchMatch(match_pb2.WatchMatchRequest(match_id=1)))
    assert info.value.code() == code and "db.internal" not in info.value.details()
