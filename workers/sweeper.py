"""The sweeper: the database is the truth, the queue only a trigger.

Run by beat every `BUMMERL_SWEEP_EVERY` seconds. It re-enqueues
- the chunks of running simulations that made no progress for `BUMMERL_SWEEP_STALE` seconds
  (a worker died with the message, or it was never sent), and
- the move of every running match where a house bot is to act and nothing happened for
  `BUMMERL_SWEEP_MOVE_STALE` seconds.
Duplicates are harmless: every task is idempotent.
"""

from __future__ import annotations

import logging
import os

from sqlalchemy.orm import Session, sessionmaker

from workers.moves import redispatch_house_turns
from workers.simulations import redispatch_stalled

log = logging.getLogger(__name__)


def sweep(sessions: sessionmaker[Session] | None = None) -> dict[str, list]:
    stale = float(os.environ.get("BUMMERL_SWEEP_STALE", "60"))
    move_stale = float(os.environ.get("BUMMERL_SWEEP_MOVE_STALE", str(min(stale, 10.0))))
    return {
        "chunks": redispatch_stalled(stale, sessions),
        "moves": redispatch_house_turns(move_stale, sessions),
    }
