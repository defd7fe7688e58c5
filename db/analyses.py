"""Analyses of finished matches (docs/analysis.md): one row per match in `analyses`.

A row is *requested* (by AdminService.AnalyseMatch: the dashboard's "analyse" button), then
*done* with the analysis as JSON (`document`, and the per-seat tallies apart in `summary` for
the bot pages), or *failed* with the reason; with `BUMMERL_ANALYSE_ALL` every match's end
sends the task, which makes the row. The
workers' `bummerl.analyse` task computes it (`workers.analysis`); the sweeper re-sends the
requested rows nobody took (`owed`). Exports add the document to the match record as its
`analysis` field (`documents_for`).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, or_, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from db.base import Base, utcnow
from db.models import FINISHED, Match

REQUESTED = "requested"
DONE = "done"
FAILED = "failed"


class Analysis(Base):
    """The analysis of one finished match (see the module's docstring)."""

    __tablename__ = "analyses"
    __table_args__ = (Index("ix_analyses_state", "state"),)

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    state: Mapped[str] = mapped_column(String(10), default=REQUESTED)
    requested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # last enqueued
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    analysis_version: Mapped[int | None] = mapped_column(Integer)
    summary: Mapped[str | None] = mapped_column(Text)  # JSON: the analysis's `seats`
    document: Mapped[str | None] = mapped_column(Text)  # JSON: the whole analysis
    error: Mapped[str | None] = mapped_column(Text)


def request(s: Session, match_id: int) -> str:
    """Ask for match `match_id`'s analysis (once: a second request changes nothing, and a
    failed one is asked again); its state after. ValueError unless the match is finished."""
    match = s.get(Match, match_id)
    if match is None or match.state != FINISHED:
        raise ValueError(f"match {match_id} is not a finished match: only finished matches "
                         "are analysed")
    row = s.get(Analysis, match_id)
    if row is None:
        row = Analysis(match_id=match_id, state=REQUESTED, requested_at=utcnow())
        s.add(row)
    elif row.state == FAILED:
        row.state, row.error, row.sent_at = REQUESTED, None, None
    return row.state


def owed(s: Session, stale_s: float) -> list[int]:
    """The requested analyses not sent in the last `stale_s` seconds, marked sent now."""
    now = utcnow()
    rows = s.scalars(select(Analysis).where(
        Analysis.state == REQUESTED,
        or_(Analysis.sent_at.is_(None), Analysis.sent_at < now - timedelta(seconds=stale_s)))
        .order_by(Analysis.requested_at).limit(100)).all()
    for row in rows:
        row.sent_at = now
    return [row.match_id for row in rows]


def store(s: Session, match_id: int, document: dict[str, Any]) -> None:
    """Keep the analysis of match `match_id` (the row made if there was none)."""
    row = s.get(Analysis, match_id)
    if row is None:
        row = Analysis(match_id=match_id, requested_at=utcnow())
        s.add(row)
    row.state, row.finished_at, row.error = DONE, utcnow(), None
    row.analysis_version = document.get("analysis_version")
    row.summary = json.dumps(document["seats"])
    row.document = json.dumps(document)


def fail(s: Session, match_id: int, error: str) -> None:
    row = s.get(Analysis, match_id)
    if row is None:
        row = Analysis(match_id=match_id, requested_at=utcnow())
        s.add(row)
    row.state, row.finished_at, row.error = FAILED, utcnow(), error[:500]


def state_of(s: Session, match_id: int) -> Analysis | None:
    return s.get(Analysis, match_id)


def documents_for(s: Session | Any, match_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The done analyses of these matches, by match id (a Session or a Connection)."""
    table = Analysis.__table__
    rows = s.execute(select(table.c.match_id, table.c.document).where(
        table.c.match_id.in_(match_ids), table.c.state == DONE)).all()
    return {row.match_id: json.loads(row.document) for row in rows}


def losses_by_version(s: Session, bot_id: int) -> list[dict[str, Any]]:
    """The bot's game points lost per analysed match, exact and estimated apart, by kind, per
    version it ran (newest first by its last match): `version`, `matches`, and for `exact` and
    `estimate` the `loss` per match, `mistakes` per match and `by_kind` (per match)."""
    rows = s.execute(select(Match.id, Match.bot0_id, Match.bot1_id, Match.version0,
                            Match.version1, Analysis.summary)
                     .join(Analysis, Analysis.match_id == Match.id)
                     .where(Analysis.state == DONE,
                            or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id))
                     .order_by(Match.id)).all()
    versions: dict[str | None, dict[str, Any]] = {}
    for row in rows:
        seats = json.loads(row.summary)
        for seat in (0, 1):
            if (row.bot0_id, row.bot1_id)[seat] != bot_id:
                continue
            version = (row.version0, row.version1)[seat]
            entry = versions.pop(version, None) or {
                "version": version, "matches": 0,
                **{part: {"loss": 0.0, "mistakes": 0, "by_kind": {}}
                   for part in ("exact", "estimate")}}
            versions[version] = entry  # (re-inserted: the last one seen comes last)
            entry["matches"] += 1
            for part in ("exact", "estimate"):
                tally, total = seats[seat][part], entry[part]
                total["loss"] += tally["loss"]
                total["mistakes"] += tally["mistakes"]
                for kind, loss in tally["by_kind"].items():
                    total["by_kind"][kind] = total["by_kind"].get(kind, 0.0) + loss
    out = []
    for entry in reversed(list(versions.values())):
        n = entry["matches"]
        for part in ("exact", "estimate"):
            total = entry[part]
            total["loss"] = round(total["loss"] / n, 3)
            total["mistakes"] = round(total["mistakes"] / n, 2)
            total["by_kind"] = {k: round(v / n, 3) for k, v in sorted(
                total["by_kind"].items(), key=lambda kv: -kv[1])}
        out.append(entry)
    return out
