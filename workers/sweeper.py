"""The sweeper: the database is the truth, the queue only a trigger.

Run by beat every `BUMMERL_SWEEP_EVERY` seconds. It re-enqueues
- the chunks of running simulations that made no progress for `BUMMERL_SWEEP_STALE` seconds
  (a worker died with the message, or it was never sent), and
- the move of every running match where a house bot is to act and nothing happened for
  `BUMMERL_SWEEP_MOVE_STALE` seconds, and
- the requested analyses of finished matches not sent in `BUMMERL_ANALYSE_STALE` seconds
  (default 600; a new request goes at the next sweep).
Duplicates are harmless: every task is idempotent. It enqueues with the senders it is given
(`workers.tasks.send_chunks`, `workers.tasks.send_move`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

from workers.moves import MoveSender, redispatch_house_turns
from workers.simulations import Sender, redispatch_stalled

log = logging.getLogger(__name__)


def sweep(sessions: sessionmaker[Session] | None = None, *, send_chunks: Sender,
          send_move: MoveSender,
          send_analysis: Callable[[int], None] | None = None) -> dict[str, list]:
    stale = float(os.environ.get("BUMMERL_SWEEP_STALE", "60"))
    move_stale = float(os.environ.get("BUMMERL_SWEEP_MOVE_STALE", str(min(stale, 10.0))))
    out = {
        "chunks": redispatch_stalled(stale, sessions, send=send_chunks),
        "moves": redispatch_house_turns(move_stale, sessions, send=send_move),
    }
    if send_analysis is not None:
        from workers.analysis import redispatch_requested

        stale_analyses = float(os.environ.get("BUMMERL_ANALYSE_STALE", "600"))
        out["analyses"] = redispatch_requested(stale_analyses, sessions, send=send_analysis)
    return out
