"""Exercises in a test database: finished matches written as the service writes them
(bench/export.py's `fill`), analysed with a small sampling budget (only the exact decisions make
exercises) and stored as the `bummerl.analyse` task stores them, then cut by the workers' cutter."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from analysis import analyse_record
from db import records
from db.analyses import store
from workers.exercises import cut_match

ROOT = Path(__file__).resolve().parents[1]


def finished_matches(sessions: sessionmaker[Session], count: int, seed: int = 31) -> list[int]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import export as bench_export
    finally:
        sys.path.remove(str(ROOT / "bench"))
    ids: list[int] = bench_export.fill(sessions.kw["bind"], count, seed=seed)
    return ids


def analyse(sessions: sessionmaker[Session], match_ids: list[int]) -> None:
    for match_id in match_ids:
        record = records.finished_record(sessions.kw["bind"], match_id)
        with sessions.begin() as s:
            store(s, match_id, analyse_record(record, samples=2))


def with_exercises(sessions: sessionmaker[Session], count: int = 6) -> int:
    """Analysed matches and their exercises; how many exercises were cut."""
    ids = finished_matches(sessions, count)
    analyse(sessions, ids)
    return sum(cut_match(match_id, sessions) for match_id in ids)
