"""House-bot moves in live matches: computed on a worker, submitted like any other action.

`play_house_move(match_id, seat, seq)` re-reads the match; unless the match is still waiting for
`seat` at sequence number `seq` and that seat is a house bot, it does nothing. It gives the bot
the seat's observation only (`services.matches.get_observation`), and submits the answer with
the service's `submit_action`, `expected_seq=seq` and the request id `house:<match>:<seq>`:
a duplicate task (redelivery, sweeper) is refused as stale or recognised as the same request,
never applied twice.
"""

from __future__ import annotations

import logging
import os
import random
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from db.base import aware, session_factory
from db.models import HOUSE, RUNNING, Bot, Match
from workers.bots import make_bot

log = logging.getLogger(__name__)


def think_seconds() -> float:
    """Time a house bot may think per move (search bots stop early), `BUMMERL_HOUSE_THINK_S`."""
    return float(os.environ.get("BUMMERL_HOUSE_THINK_S", "1.0"))


def bot_options(strategy: str) -> dict[str, object]:
    """Options of house bots in live play: `BUMMERL_RDEEP_SAMPLES` (playouts per action)."""
    if strategy == "rdeep" and os.environ.get("BUMMERL_RDEEP_SAMPLES"):
        return {"samples": int(os.environ["BUMMERL_RDEEP_SAMPLES"])}
    return {}


def play_house_move(match_id: int, seat: int, seq: int,
                    sessions: sessionmaker[Session] | None = None) -> bool:
    """Compute and submit the house bot's move; True if this call's action was applied."""
    from services import actions, matches
    from services.errors import ServiceError

    sessions = sessions or session_factory()
    with sessions() as s:
        match = s.get(Match, match_id)
        if match is None or match.state != RUNNING or match.seq != seq or match.to_act != seat:
            log.info("house move %s/%s/%s: nothing owed (match %s)", match_id, seat, seq,
                     "missing" if match is None else
                     f"{match.state} at seq {match.seq}, seat {match.to_act} to act")
            return False
        bot = match.bot(seat)
        if bot.kind != HOUSE or not bot.house_strategy:
            return False
        strategy = bot.house_strategy
    obs, match = matches.get_observation(match_id, seat, sessions=sessions)
    if match.seq != seq or obs.to_act != seat:
        log.info("house move %s/%s/%s: the match moved on (seq %s)", match_id, seat, seq,
                 match.seq)
        return False
    deadline_at = match.deadline_at
    budget = think_seconds()
    if deadline_at is not None:
        left = (aware(deadline_at) - datetime.now(UTC)).total_seconds() - 0.5
        budget = max(0.05, min(budget, left))
    rng = random.Random(f"house:{match_id}:{seq}")
    action = make_bot(strategy, **bot_options(strategy)).choose(
        obs, rng, deadline=time.monotonic() + budget)
    try:
        actions.submit_action(match_id, seat, action, expected_seq=seq,
                              request_id=f"house:{match_id}:{seq}", sessions=sessions)
    except ServiceError as e:  # stale (someone else moved), match over, ...: nothing owed
        log.info("house move %s/%s/%s not applied: %s", match_id, seat, seq, e)
        return False
    return True




def send_move(match_id: int, seat: int, seq: int) -> None:
    """Enqueue a house move (call after the commit that made it owed)."""
    from workers.tasks import play_move_task

    play_move_task.apply_async((match_id, seat, seq))


def redispatch_house_turns(stale_seconds: float,
                           sessions: sessionmaker[Session] | None = None) -> list[int]:
    """Sweeper part: enqueue the move of every running match waiting for a house bot for more
    than `stale_seconds`; the match ids."""
    sessions = sessions or session_factory()
    cutoff = datetime.now(UTC) - timedelta(seconds=stale_seconds)
    owed: list[tuple[int, int, int]] = []
    with sessions() as s:
        rows = s.scalars(select(Match).where(Match.state == RUNNING, Match.to_act.is_not(None)))
        for match in rows:
            seat = match.to_act
            assert seat is not None
            since = match.turn_started_at or match.created_at
            if aware(since) > cutoff:
                continue
            bot: Bot = match.bot(seat)
            if bot.kind == HOUSE:
                owed.append((match.id, seat, match.seq))
    for match_id, seat, seq in owed:
        send_move(match_id, seat, seq)
    if owed:
        log.warning("sweeper: re-enqueued %d house move(s): %s", len(owed), owed)
    return [m for m, _, _ in owed]
