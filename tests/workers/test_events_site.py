"""Tournaments played to the end by real processes (the service, a Celery worker with beat on
the real Redis, remote bots from the client kit) on PostgreSQL, created and steered with
`bummerl tournament`: an 8-bot Swiss with both the service and the worker killed (SIGKILL)
mid-round, a 4-bot double round-robin, an absent bot forfeiting after its grace period, a
withdrawal and a cancel. After each, the database is checked: every pair complete with its two
legs (one after the other, none made twice), the export's crosstable equal to the match rows,
no Swiss pairing repeated, each bot in each seat equally often."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from eventsite import check_complete, event_site

from db.models import RUNNING
from db.pairs import FORFEITED, PLAYING, VOID
from workers.testing import wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

HOUSE = [f"house{i}" for i in range(6)]
REMOTE = ["kit-a", "kit-b"]
FAST = ["--time-control", "2s+6s", "--grace", "20"]


@pytest.fixture
def site(postgres_url, redis_url, tmp_path):
    with event_site(postgres_url, redis_url, tmp_path) as site:
        yield site


def test_a_swiss_survives_kills_of_the_service_and_the_worker_and_finishes(site):
    site.add_house(HOUSE[:3], "random")
    site.add_house(HOUSE[3:], "bully")
    for name in REMOTE:
        site.add_remote(name)
    site.start_worker()
    wait_until(lambda: site.connected(REMOTE), 30, every=0.2, what="the kit bots to connect")
    field = ",".join([*HOUSE, *REMOTE])
    tid = site.create("--format", "swiss", "--rounds", "3", "--bots", field, "--concurrency",
                      "4", "--seed", "11", *FAST)

    def playing_in(round_: int) -> bool:
        return any(p.round == round_ and p.state == PLAYING for p in site.pairs(tid)) and any(
            m.state == RUNNING and m.event_round == round_ for m in site.matches().values())

    wait_until(lambda: playing_in(2), 60, every=0.1, what="round 2 under way")
    site.restart_service()  # SIGKILL mid-round, then a new service process
    wait_until(lambda: playing_in(2) or playing_in(3), 30, every=0.1, what="play again")
    site.kill_worker()  # SIGKILL of the worker (and its beat) mid-round
    site.start_worker()
    site.wait_finished(tid, 90)
    pairs = check_complete(site, tid, pairs_per_round=4)
    met = [frozenset((p.bot_a_id, p.bot_b_id)) for p in pairs]
    assert len(set(met)) == len(met), "a Swiss pairing repeated"
    # Seats balance: every bot played seat 0 and seat 1 equally often (each pair seats it once
    # in each).
    matches = [m for m in site.matches().values() if m.event_id == tid]
    seat0 = Counter(m.bot0_id for m in matches)
    seat1 = Counter(m.bot1_id for m in matches)
    assert seat0 == seat1 and set(seat0.values()) == {3}, (seat0, seat1)
    shown = site.cli("show", str(tid))
    assert "finished" in shown and all(name in shown for name in [*HOUSE, *REMOTE])


def test_a_double_round_robin_plays_to_the_end_and_exports(site):
    site.add_house(["dr0", "dr1"], "random")
    site.add_house(["dr2", "dr3"], "bully")
    site.start_worker()
    tid = site.create("--format", "double-round-robin", "--bots", "dr0,dr1,dr2,dr3",
                      "--concurrency", "2", *FAST)
    site.wait_finished(tid, 60)
    pairs = check_complete(site, tid, pairs_per_round=2)
    met = Counter(frozenset((p.bot_a_id, p.bot_b_id)) for p in pairs)
    assert set(met.values()) == {2} and len(met) == 6  # each two bots twice
    for pair, again in ((p, q) for p in pairs for q in pairs if p.round + 3 == q.round
                        and {p.bot_a_id, p.bot_b_id} == {q.bot_a_id, q.bot_b_id}):
        assert (pair.bot_a_id, pair.bot_b_id) == (again.bot_b_id, again.bot_a_id)
    data = json.loads(site.cli("export", str(tid), "--format", "json"))
    assert len(data["pairs"]) == 12 and len(data["crosstable"]) == 12
    rows = site.cli("export", str(tid), "--format", "csv").splitlines()
    assert rows[0].startswith("rank,bot,opponent,points") and len(rows) == 13
    games = {int(i) for row in rows[1:] for i in row.split(",")[-1].split()}
    assert games == {i for p in pairs for i in (p.match_a_id, p.match_b_id)}


def test_an_absent_bot_forfeits_after_its_grace_period(site):
    site.add_house(["g0", "g1"], "random")
    site.add_remote("absent", start=False)
    site.start_worker()
    tid = site.create("--format", "gauntlet", "--bots", "g0,absent,g1", "--time-control",
                      "2s+6s", "--grace", "2")
    site.wait_finished(tid, 60)
    pairs = site.pairs(tid)
    lost = [p for p in pairs if "absent" in (p.detail or "")]
    assert len(lost) == 1 and lost[0].state == FORFEITED and lost[0].match_a_id is None
    assert lost[0].started_at is None and lost[0].finished_at is not None
    waited = (lost[0].finished_at - lost[0].due_at).total_seconds()
    assert waited >= 2, f"forfeited after {waited:.1f} s, before its grace period"
    export = site.export(tid)
    absent = next(r for r in export.standings if r.name == "absent")
    assert (absent.points, absent.forfeits) == (0, 1)
    assert next(r for r in export.standings if r.name == "g0").points >= 2


def test_withdraw_and_cancel_from_the_command_line(site):
    site.add_house([f"w{i}" for i in range(4)], "random")
    site.start_worker()
    tid = site.create("--format", "round-robin", "--bots", "w0,w1,w2,w3", "--concurrency",
                      "2", "--time-control", "20s+20s")
    wait_until(lambda: any(p.state == PLAYING for p in site.pairs(tid)), 30, every=0.1,
               what="a pair to start")
    out = site.cli("withdraw", str(tid), "w0", "--reason", "misbehaved")
    assert "forfeited 3 pairs" in out
    out = site.cli("cancel", str(tid), "--reason", "done testing")
    assert "cancelled" in out
    pairs = site.pairs(tid)
    assert sorted(p.state for p in pairs) == [FORFEITED] * 3 + [VOID] * 3
    wait_until(lambda: not any(m.state == RUNNING for m in site.matches().values()), 10,
               every=0.2, what="every leg stopped")
    listed = site.cli("list", "--state", "cancelled")
    assert str(tid) in listed
