"""The chaos suite (issue 8): each scenario breaks the running site while ladder matches (house
and remote bots) and a batch simulation run, then checks that it recovered by itself:
every match's log replays with the engine to its recorded result, seqs are contiguous, each
finished ladder match is rated once, the simulation's totals are exact, no bot process died,
nothing is stuck; and prints how long recovery took.

Real processes (tests/chaos/chaossite.py): `bummerl serve`, a Celery worker and beat, two
remote bots run by the client kit; Redis and PostgreSQL reached through TCP proxies
(tests/faultproxy.py) the test controls; the shared servers themselves are never stopped.
One site is shared by the scenarios (module scope), in the order below.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from chaossite import Site
from faultproxy import BLACKHOLE, PASS, PAUSE, REFUSE

from workers import procs
from workers.testing import wait_until


@pytest.fixture(scope="module")
def site(redis_proxy, postgres_proxy, postgres_database, broker_prefix, tmp_path_factory
         ) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("chaos")
    site = Site(postgres_database, tmp, redis_proxy, postgres_proxy, prefix=broker_prefix)
    try:
        site.start()
        wait_until(lambda: len(site.running_ladder()) >= 2, 90, every=0.3,
                   what="ladder matches to start")
        yield site
    finally:
        for proxy in (redis_proxy, postgres_proxy):
            proxy.set(PASS)
        site.stop()
        print(f"\nchaos site logs: {tmp}")


def scenario(site: Site, name: str, fault: Callable[[], None],
             ready: Callable[[], bool] | None = None) -> None:
    """Start a simulation, wait until the site is busy (ladder matches running, and `ready`:
    by default a chunk running), run `fault` (it returns once the fault is cleared), then
    measure recovery and check every invariant."""
    site.revive_bots()
    sim_id = site.start_simulation()

    def busy() -> bool:
        # A simulation that finished before the ladder had matches running again (after the
        # previous scenario's fault) is followed by another: the fault must meet both at work.
        nonlocal sim_id
        if ready is None and site.simulation_done(sim_id):
            sim_id = site.start_simulation()
        return bool(site.running_ladder()) and (ready() if ready is not None
                                                else site.chunk_running(sim_id))

    try:
        wait_until(busy, 90, every=0.02, what=f"{name}: a busy site")
        fault()
        cleared = time.monotonic()
        since = site.last_action()
        moved = site.recovery(since, cleared)
        print(f"\n{name}: recovered: {moved}; {site.check(sim_id)}")
    except AssertionError as e:  # what the site was doing, for a failure in CI
        raise AssertionError(f"{e}\n{site.report(sim_id)}") from None


def test_service_sigkill_and_restart(site):
    def fault() -> None:
        assert site.service is not None
        procs.kill(site.service)
        site.start_service()

    scenario(site, "service SIGKILL + restart", fault)


def test_worker_sigkill_mid_move(site):
    def fault() -> None:
        assert site.worker is not None
        procs.kill(site.worker)
        site.start_worker()

    scenario(site, "worker SIGKILL mid-move", fault, ready=site.house_thinking)


def test_worker_sigkill_mid_chunk(site):
    def fault() -> None:
        assert site.worker is not None
        procs.kill(site.worker)
        site.start_worker()

    scenario(site, "worker SIGKILL mid-chunk", fault)


def test_redis_paused_20s(site):
    def fault() -> None:
        site.redis.set(PAUSE)
        time.sleep(20)
        site.redis.set(PASS)

    scenario(site, "Redis paused 20 s", fault)


def test_postgres_refused_20s(site):
    def fault() -> None:
        site.postgres.set(REFUSE)
        site.postgres.cut()
        time.sleep(20)
        site.postgres.set(PASS)

    scenario(site, "PostgreSQL refused 20 s", fault)


DATABASE_DOWN_NOTICE = "cannot reach its database"  # in the kit's log line of the notice
IN_FLIGHT_S = 4.0  # a call waiting at the cut is UNAVAILABLE by then (~3 s, a loaded machine)


def fail_fast(site: Site, match_id: int, cut: float, seconds: float) -> dict[str, float]:
    """Start a GetMatch call (a 5 s deadline, as a client would) every 0.1 s from the cut until
    `seconds` after it, and ask the health each time: when the health said NOT_SERVING, when
    the first call was answered UNAVAILABLE at once (the breaker open: in under 1 s), and how
    long the calls started after that took at most (each must be UNAVAILABLE)."""
    import threading

    import grpc
    from bummerl.v1 import match_pb2, match_pb2_grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    answers: list[tuple[float, float, grpc.StatusCode]] = []  # (started, answered, code)
    lock = threading.Lock()
    not_serving: float | None = None

    def done(started: float, call: grpc.Future) -> None:
        error = call.exception()
        with lock:
            answers.append((started - cut, time.monotonic() - cut,
                            grpc.StatusCode.OK if error is None else error.code()))

    with grpc.insecure_channel(f"127.0.0.1:{site.port}") as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        calls = []
        while time.monotonic() - cut < seconds:
            started = time.monotonic()
            call = stub.GetMatch.future(match_pb2.GetMatchRequest(match_id=match_id), timeout=5)
            call.add_done_callback(lambda c, t=started: done(t, c))
            calls.append(call)
            if not_serving is None and health.Check(
                    health_pb2.HealthCheckRequest(), timeout=5).status == \
                    health_pb2.HealthCheckResponse.NOT_SERVING:
                not_serving = time.monotonic() - cut
            time.sleep(0.1)
        for call in calls:
            call.exception()  # every call answered (its callback ran)
    fast = [(s, a) for s, a, code in answers if code == grpc.StatusCode.UNAVAILABLE and a - s < 1]
    assert fast, f"no call failed fast while the database was black-holed: {answers[:10]}"
    first = min(a for _, a in fast)
    later = [(a - s, code) for s, a, code in answers if s > first]
    wrong = [code for _, code in later if code != grpc.StatusCode.UNAVAILABLE]
    assert not wrong, f"{len(wrong)} calls after the breaker opened were answered {wrong[:3]}"
    # The calls sent before the breaker opened wait on sockets that will never answer: its
    # opening releases them (db.waits), ~3 s after the cut (1 s health interval + 2 s ping).
    waiting = [(a, code) for s, a, code in answers if s <= first and a - s >= 1]
    wrong = [(round(a, 2), code) for a, code in waiting
             if code != grpc.StatusCode.UNAVAILABLE or a > IN_FLIGHT_S]
    assert not wrong, f"calls waiting at the cut were answered (s after it, code) {wrong[:3]}"
    return {"not_serving": -1.0 if not_serving is None else not_serving, "first": first,
            "slowest": max((took for took, _ in later), default=0.0), "calls": len(later),
            "waiting": len(waiting), "released": max((a for a, _ in waiting), default=0.0)}


def test_postgres_blackholed_10s(site):
    """Black-holed (packets dropped, nothing closed): once the service's health check knows,
    calls fail at once with UNAVAILABLE (not a client's 5 s deadline, call after call), the
    calls already waiting on the database then too (within ~3 s of the cut), and
    each connected bot is told once on its Play stream, which stays open."""
    measured: dict[str, float] = {}
    told = {name: site.log(f"{name}.log").count(DATABASE_DOWN_NOTICE) for name in site.bots}

    def fault() -> None:
        match_id = site.running_ladder()[0].id
        site.postgres.set(BLACKHOLE)
        measured.update(fail_fast(site, match_id, time.monotonic(), 10))
        site.postgres.set(PASS)

    scenario(site, "PostgreSQL black-holed 10 s", fault)
    print(f"PostgreSQL black-holed: health NOT_SERVING {measured['not_serving']:.1f} s and "
          f"the first call UNAVAILABLE {measured['first']:.1f} s after the cut, the "
          f"{measured['waiting']:.0f} calls waiting by then released at most "
          f"{measured['released']:.1f} s after it, then {measured['calls']:.0f} calls "
          f"UNAVAILABLE in at most {measured['slowest']:.3f} s each")
    assert measured["slowest"] < 1.0
    for name, before in told.items():
        now = site.log(f"{name}.log").count(DATABASE_DOWN_NOTICE)
        assert now - before == 1, f"{name} was told {now - before} times"


def test_bot_disconnect_and_reconnect(site):
    def fault() -> None:
        site.front.set(REFUSE)
        site.front.cut()
        time.sleep(3)
        site.front.set(PASS)

    scenario(site, "bots disconnected 3 s", fault)
