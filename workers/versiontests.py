"""Playing version tests (`db.versiontests`): the periodic step that keeps each open test's
duplicate pairs going and decides it (task `bummerl.versiontests_tick`, beat every
`BUMMERL_TESTS_EVERY` seconds on the `moves` queue).

Each step, for each open test (`waiting` or `running`), one worker at a time (`only_one`):

1. settle its finished pairs (`workers.pairs.settle`), then count every decided pair again
   from the database (so a step run twice, or after a crash, counts nothing twice): `done`
   and one-sided `forfeited` pairs are counted from the candidate's points (0 lost both, 1
   split, 2 won both); pairs `void` or forfeited by both sides are not. The LLR and the
   decision come from `bots.stats` (paired SPRT). H1 or H0, or the cap of games reached, ends
   the test: its open pairs (not started, or being played) are void at once, their matches
   still running played out but not counted (`db.versiontests.void_open`; a pair left
   open would withhold its legs and keep its bots out of the ladder). Each step also voids
   the open pairs of tests that ended (`workers.pairs.void_orphans`: what a crash left).
2. whether both sides can play: a house bot always, a remote bot while a Play stream of it
   with the side's version is open (`bot_versions`). If one cannot, the test is `waiting`
   (from `wait_since`) and starts nothing; after `Settings.test_wait_s` of waiting it ends
   `timed_out`. When both can again, it is `running`.
3. top up: new pairs (owner "test", candidate as bot a, baseline as bot b, a new seed per pair
   derived from the test's seed and the pair's number) up to `concurrency` open pairs and the
   cap, then `workers.pairs.start_due` starts them through the engine service (CreateMatch
   with the pair: unrated, the seats' versions from the pair).
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from bots.stats import PairOutcomes, paired_decision, paired_llr
from db import settings as service_config
from db.base import aware, session_factory, utcnow
from db.models import Bot
from db.pairs import (
    DONE,
    FORFEIT_BOTH,
    FORFEITED,
    OPEN,
    OWNER_TEST,
    VOID,
    WAITING,
    DuplicatePair,
)
from db.presence import CHALLENGE
from db.versiontests import (
    CAPPED,
    RUNNING,
    TIMED_OUT,
    VersionTest,
    is_side_connected,
    void_open,
)
from db.versiontests import OPEN as TEST_OPEN
from db.versiontests import WAITING as TEST_WAITING
from workers import pairs
from workers.locks import only_one

log = logging.getLogger(__name__)




def tick(sessions: sessionmaker[Session] | None = None, client: pairs.Creator | None = None,
         config: service_config.Settings | None = None,
         now: datetime | None = None) -> dict[int, str]:
    """One step for every open test (see the module's docstring); test id -> its state."""
    sessions = sessions or session_factory()
    config = config or service_config.settings()
    if client is None:
        from workers.service import service

        client = service()
    with only_one(sessions, "versiontests-tick") as mine:
        if not mine:
            log.info("version tests tick skipped: another worker is running one")
            return {}
        with sessions() as s:
            ids = list(s.scalars(select(VersionTest.id).where(
                VersionTest.state.in_(TEST_OPEN)).order_by(VersionTest.id)))
        # an ended test's pairs left open (a crash between its end and `void_open`): void, so
        # their legs are released and the ladder sees their bots free (db.pairs.bots_in_play)
        pairs.void_orphans(sessions, owner=OWNER_TEST, open_ids=select(VersionTest.id).where(
            VersionTest.state.in_(TEST_OPEN)), why="the test had ended before the pair was "
            "complete: not counted", now=now)
        return {test_id: step(sessions, client, test_id, config, now) for test_id in ids}


def count(s: Session, test_id: int) -> tuple[PairOutcomes, int, int]:
    """The candidate's outcomes over the test's decided pairs, the forfeited pairs among them,
    and the pairs not counted (void, or forfeited by both)."""
    outcomes = PairOutcomes(0, 0, 0)
    forfeited = uncounted = 0
    rows = s.execute(select(DuplicatePair.state, DuplicatePair.points_a, DuplicatePair.forfeit)
                     .where(DuplicatePair.owner == OWNER_TEST,
                            DuplicatePair.owner_id == test_id,
                            DuplicatePair.state.in_((DONE, FORFEITED, VOID))))
    for state, points, forfeit in rows:
        if state == VOID or forfeit == FORFEIT_BOTH or points is None:
            uncounted += 1
            continue
        outcomes.add(int(points))
        forfeited += state == FORFEITED
    return outcomes, forfeited, uncounted


def decide(test: VersionTest, outcomes: PairOutcomes) -> tuple[float, str | None, str | None]:
    """The LLR, the final state if the test is over now (None: not), and why."""
    llr = 0.0
    if test.elo0 is not None and test.elo1 is not None:
        llr = paired_llr(outcomes, test.elo0, test.elo1)
        verdict = paired_decision(outcomes, test.elo0, test.elo1, test.alpha, test.beta)
        if verdict is not None:
            # what the SPRT decides (which hypothesis the pairs favour), not a measured
            # difference: the estimate and its interval are shown beside it
            favoured = (f"at least {test.elo1:+g} Elo (elo1)" if verdict == "H1"
                        else f"at most {test.elo0:+g} Elo (elo0)").replace("+0 ", "0 ")
            return llr, verdict, (f"the SPRT accepted {verdict} after {outcomes.pairs} "
                                  f"pair{'s' * (outcomes.pairs != 1)}: an Elo difference of "
                                  f"{favoured} (LLR {llr:.2f})")
    if test.max_pairs is not None and outcomes.pairs >= test.max_pairs:
        return llr, CAPPED, f"{2 * outcomes.pairs} games played (the cap) without a decision"
    return llr, None, None


def step(sessions: sessionmaker[Session], client: pairs.Creator, test_id: int,
         config: service_config.Settings, now: datetime | None = None) -> str:
    """One step of test `test_id`; its state after it."""
    now = now or utcnow()
    pairs.settle(sessions, owner=OWNER_TEST, owner_id=test_id, now=now)
    with sessions.begin() as s:
        test = s.get(VersionTest, test_id, with_for_update=True)
        if test is None or test.state not in TEST_OPEN:
            return test.state if test is not None else "gone"
        outcomes, forfeited, uncounted = count(s, test_id)
        llr, final, why = decide(test, outcomes)
        test.lost_both, test.split, test.won_both = outcomes.as_list()
        test.forfeited, test.voided, test.llr = forfeited, uncounted, llr
        if final is not None:
            _end(s, test, final, why, now)
            return final
        sides = [(s.get(Bot, test.candidate_bot_id), test.candidate_version),
                 (s.get(Bot, test.baseline_bot_id), test.baseline_version)]
        away = [side_label_of(bot, version) for bot, version in sides
                if bot is None or not is_side_connected(s, bot, version, config.heartbeat_s,
                                                        now)]
        if away:
            since = aware(test.wait_since) if test.state == TEST_WAITING else None
            if since is None:
                test.state, test.wait_since = TEST_WAITING, now
                since = now
            test.reason = (f"waiting for {' and '.join(away)} to connect (a Play stream with "
                           f"that version); times out {config.test_wait_s:g} s after "
                           f"{since:%H:%M:%S} UTC")
            if now - since > timedelta(seconds=config.test_wait_s):
                _end(s, test, TIMED_OUT, f"{' and '.join(away)} did not connect within "
                     f"{config.test_wait_s:g} s", now)
                return TIMED_OUT
            return TEST_WAITING
        test.state, test.wait_since, test.reason = RUNNING, None, None
        test.started_at = test.started_at or now
        _top_up(s, test, outcomes.pairs, now)
        concurrency = test.concurrency
    pairs.start_due(sessions, client, owner=OWNER_TEST, owner_id=test_id,
                    limit=2 * concurrency, per_bot=None, grace_s=config.test_wait_s,
                    heartbeat_s=config.heartbeat_s, now=now, kind=CHALLENGE)
    return RUNNING


def side_label_of(bot: Bot | None, version: str | None) -> str:
    if bot is None:
        return "a deleted bot"
    return f"{bot.name}@{version}" if version else bot.name


def _end(s: Session, test: VersionTest, state: str, why: str | None, now: datetime) -> None:
    test.state, test.finished_at, test.wait_since, test.reason = state, now, None, why
    void_open(s, test.id, f"the test ended ({state}) before the pair was complete: not counted")
    log.info("version test %s ended %s: %s", test.id, state, why)


def pair_seed(test: VersionTest, board: int) -> int:
    """The seed of the test's pair number `board`: new for each pair, reproducible."""
    return random.Random(test.seed * 100_003 + board).getrandbits(62)


def _top_up(s: Session, test: VersionTest, counted: int, now: datetime) -> None:
    """Add waiting pairs up to the test's concurrency and cap (in `s`'s transaction)."""
    open_now = s.scalar(select(func.count(DuplicatePair.id)).where(
        DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test.id,
        DuplicatePair.state.in_(OPEN))) or 0
    wanted = test.concurrency - open_now
    if test.max_pairs is not None:
        wanted = min(wanted, test.max_pairs - counted - open_now)
    last = s.scalar(select(func.max(DuplicatePair.board)).where(
        DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test.id)) or 0
    for board in range(last + 1, last + 1 + max(0, wanted)):
        s.add(DuplicatePair(
            owner=OWNER_TEST, owner_id=test.id, round=None, board=board,
            seed=pair_seed(test, board), bot_a_id=test.candidate_bot_id,
            bot_b_id=test.baseline_bot_id, version_a=test.candidate_version,
            version_b=test.baseline_version, profile=test.profile, move_ms=test.move_ms,
            bank_ms=test.bank_ms, rated=False, state=WAITING, due_at=now))
