"""Retention: moving the action logs of old finished matches out of `actions` (`bummerl db
prune`).

The action log is most of a history's bytes (docs/history.md): some 70 rows per
match with two indexes. `prune` takes the finished matches that finished more than `days` ago
and whose rating is settled (not a ladder match still waiting to be rated), and for each batch
of them, in one transaction:
- keeps their log elsewhere: `archive="table"` copies the rows to `actions_archive` (the pages
  and exports still read them there), `archive="records"` writes their match records
  (`db.records`, docs/match-record.md) to a JSON-lines file in `directory` first (written
  whole, synced and renamed before the transaction commits);
- deletes their rows from `actions`;
- marks the matches (`actions_pruned_at`, `actions_archive`).
What stays: the match row (result, counters, seed, how it ended), its hands (dealer, scores,
tricks), its refused actions, its ladder row, the ratings and the rating history. Nothing that
rates a match or draws a page reads a finished match's log except its match page, hand replays
and its record.

A crash or a stop loses nothing: a batch's transaction commits whole or not at all, and a
pruned match is marked, so running it again goes on where it stopped (a records file of a
batch that did not commit is written again). Aborted matches (no result, no record) and running
ones are never touched. `dry_run` counts what would go and changes nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)

from db.base import utcnow
from db.models import ARCHIVE_RECORDS, ARCHIVE_TABLE, FINISHED, ActionArchive, ActionLog, Match
from db.ratings import LadderMatch

ARCHIVES = (ARCHIVE_TABLE, ARCHIVE_RECORDS)
BATCH = 500  # matches per transaction
MATCHES = Match.metadata.tables["matches"]
ACTIONS = ActionLog.metadata.tables["actions"]
ARCHIVE = ActionArchive.metadata.tables["actions_archive"]
LADDER = LadderMatch.metadata.tables["ladder_matches"]
COLUMNS = ("id", "match_id", "seq", "seat", "action", "request_id", "created_at", "think_ms")


class BadPrune(ValueError):
    """A prune that cannot run as asked; the message says what is wrong."""


@dataclass
class Pruned:
    """What a prune did (or, dry, would do)."""

    matches: int = 0
    actions: int = 0
    files: list[str] = field(default_factory=list)
    dry_run: bool = False
    cutoff: datetime | None = None


def _due(cutoff: datetime) -> list[ColumnElement[bool]]:
    """The matches whose logs may go: finished before `cutoff`, not pruned, rating settled."""
    m = MATCHES.c
    waiting = exists().where(LADDER.c.match_id == m.id, LADDER.c.rated_at.is_(None))
    return [m.state == FINISHED, m.finished_at < cutoff, m.actions_pruned_at.is_(None),
            ~waiting]


def prune(bind: Engine, days: float, archive: str, directory: str | Path | None = None, *,
          dry_run: bool = False, batch: int = BATCH, now: datetime | None = None,
          say: Callable[[str], None] | None = None) -> Pruned:
    """Move the logs of the matches that finished more than `days` ago (see the module)."""
    if days < 0:
        raise BadPrune(f"days must be 0 or more, not {days:g}")
    if archive not in ARCHIVES:
        raise BadPrune(f"unknown archive {archive!r}: one of {', '.join(ARCHIVES)}")
    if batch < 1:
        raise BadPrune(f"batch must be 1 or more, not {batch}")
    out_dir = None
    if archive == ARCHIVE_RECORDS:
        if directory is None:
            raise BadPrune("--archive records needs a directory for the record files")
        out_dir = Path(directory)
        if not out_dir.is_dir():
            raise BadPrune(f"{out_dir} is not a directory: make it first")
    elif directory is not None:
        raise BadPrune("a directory goes with --archive records only")
    moment = now or utcnow()
    cutoff = moment - timedelta(days=days)
    result = Pruned(dry_run=dry_run, cutoff=cutoff)
    due = _due(cutoff)
    if dry_run:
        with bind.connect() as c:
            result.matches = c.scalar(select(func.count()).select_from(MATCHES)
                                      .where(*due)) or 0
            result.actions = c.scalar(select(func.count()).select_from(ACTIONS).where(
                ACTIONS.c.match_id.in_(select(MATCHES.c.id).where(*due)))) or 0
        return result
    while True:
        with bind.begin() as c:
            ids = list(c.scalars(select(MATCHES.c.id).where(*due).order_by(MATCHES.c.id)
                                 .limit(batch)))
            if not ids:
                break
            if out_dir is not None:
                result.files.append(str(_write_records(c, ids, out_dir)))
            else:
                c.execute(insert(ARCHIVE).from_select(
                    list(COLUMNS), select(*(ACTIONS.c[name] for name in COLUMNS))
                    .where(ACTIONS.c.match_id.in_(ids))))
            gone = c.execute(delete(ACTIONS).where(ACTIONS.c.match_id.in_(ids))).rowcount
            c.execute(update(MATCHES).where(MATCHES.c.id.in_(ids))
                      .values(actions_pruned_at=moment, actions_archive=archive))
        result.matches += len(ids)
        result.actions += gone
        if say is not None:
            say(f"pruned {result.matches:,} matches ({result.actions:,} actions) ...")
    return result


def _write_records(c: Connection, ids: list[int], directory: Path) -> Path:
    """The records of matches `ids` in one JSON-lines file, whole on disk before it returns."""
    from db.records import records_for

    path = directory / f"actions-{ids[0]:09d}-{ids[-1]:09d}.jsonl"
    partial = path.with_suffix(".jsonl.partial")
    with partial.open("w", encoding="utf-8") as f:
        for record in records_for(c, ids):
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
        f.flush()
        os.fsync(f.fileno())
    partial.replace(path)
    return path
