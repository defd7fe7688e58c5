"""Cutting exercises for people from analysed matches (issue 31; docs/analysis.md, "Hints and
exercises for people"): the I/O around `analysis.exercises.cut`.

`cut_match(match_id)` reads a finished match's record and its done analysis and stores each
position with exactly one right action in `exercises` (once per match and seq: cutting again
adds nothing). `cut_all()` does it for every analysed match that has no exercise yet (one
that gave none is looked at again). They run after each analysis (the `bummerl.analyse`
task), as the `bummerl.cut_exercises` task on the `batch` queue, and from `bummerl exercises
cut`.
"""

from __future__ import annotations

import json
import logging

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from analysis.exercises import cut
from db import records
from db.analyses import DONE, Analysis, documents_for
from db.base import session_factory
from db.exercises import Exercise

log = logging.getLogger(__name__)


def cut_match(match_id: int, sessions: sessionmaker[Session] | None = None) -> int:
    """Store the exercises of analysed match `match_id`; how many were new (0 when it is not
    analysed, or its record cannot be read)."""
    sessions = sessions or session_factory()
    with sessions() as s:
        document = documents_for(s, [match_id]).get(match_id)
        known = set(s.scalars(select(Exercise.seq).where(Exercise.match_id == match_id)))
    if document is None:
        return 0
    try:
        record = records.finished_record(sessions.kw["bind"], match_id)
    except (records.Withheld, records.NoSuchThing) as why:
        log.info("no exercises from match %s: %s", match_id, why)
        return 0
    new = [e for e in cut(record, document) if e["seq"] not in known]
    with sessions.begin() as s:
        for e in new:
            s.add(Exercise(match_id=match_id, seq=e["seq"], seat=e["seat"],
                           observation=json.dumps(e["observation"]), answer=e["answer"],
                           values=json.dumps(e["values"]), losses=json.dumps(e["losses"]),
                           taken=e["taken"], kind=e["kind"],
                           difficulty=e["difficulty"], cards_left=e["cards_left"],
                           deals=e["deals"]))
    return len(new)


def cut_all(sessions: sessionmaker[Session] | None = None, limit: int | None = None
            ) -> dict[str, int]:
    """Cut exercises from every analysed match that has none yet (at most `limit` matches):
    `matches` looked at, `exercises` stored."""
    sessions = sessions or session_factory()
    with sessions() as s:
        query = (select(Analysis.match_id).where(Analysis.state == DONE)
                 .where(Analysis.match_id.not_in(select(Exercise.match_id)))
                 .order_by(Analysis.match_id))
        ids = list(s.scalars(query if limit is None else query.limit(limit)))
    stored = sum(cut_match(match_id, sessions) for match_id in ids)
    return {"matches": len(ids), "exercises": stored}
