"""The `bummerl.analyse` task's work: analyse one finished match (`analysis.analyse_record`,
docs/analysis.md) and keep the result (`db.analyses`).

Idempotent: a match analysed already (by this analysis version) is left alone; the record is
re-read from the database (the task carries only the match id). A leg of a duplicate pair
whose other leg is still running is withheld from exports, so it stays requested and the
sweeper sends it again later. Requests come from the dashboard (a row `db.analyses.request`
made) and, with `BUMMERL_ANALYSE_ALL=1`, from every match's end (`workers.hooks`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

from analysis import ANALYSIS_VERSION, analyse_record
from db import records
from db.analyses import DONE, fail, owed, request, state_of, store
from db.base import session_factory

log = logging.getLogger(__name__)


def analyse_match(match_id: int, sessions: sessionmaker[Session] | None = None) -> str:
    """Analyse finished match `match_id` and store it; what became of it: `done`, `already`
    (analysed before), `withheld` (a pair's leg: later) or `failed`."""
    sessions = sessions or session_factory()
    with sessions() as s:
        row = state_of(s, match_id)
        if row is not None and row.state == DONE and row.analysis_version == ANALYSIS_VERSION:
            return "already"
    try:
        record = records.finished_record(sessions.kw["bind"], match_id)
    except records.Withheld:  # asked again by the sweeper once its pair's other leg is over
        with sessions.begin() as s:
            request(s, match_id)
        return "withheld"
    except records.NoSuchThing as e:
        with sessions.begin() as s:
            fail(s, match_id, str(e))
        return "failed"
    record.pop("analysis", None)
    try:
        document = analyse_record(record)
    except ValueError as e:  # a record that does not replay: say so on the row
        log.warning("match %s cannot be analysed: %s", match_id, e)
        with sessions.begin() as s:
            fail(s, match_id, str(e))
        return "failed"
    with sessions.begin() as s:
        store(s, match_id, document)
    return "done"


def redispatch_requested(stale_s: float, sessions: sessionmaker[Session] | None = None,
                         *, send: Callable[[int], None]) -> list[int]:
    """Send the requested analyses nobody took in `stale_s` seconds (the sweeper's part)."""
    sessions = sessions or session_factory()
    with sessions.begin() as s:
        ids = owed(s, stale_s)
    for match_id in ids:
        send(match_id)
    return ids
