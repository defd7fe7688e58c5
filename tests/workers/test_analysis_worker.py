"""The `bummerl.analyse` task on a real Celery worker (real Redis and PostgreSQL): a match the
dashboard asked to analyse (a request row) is sent by the sweeper, analysed on the `batch`
queue, stored, and exported with its record; sent again it changes nothing (idempotent); the
stored analysis is the one the same record gives in-process."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
from sqlalchemy import select

from analysis import analyse_record
from db import records
from db.analyses import DONE, Analysis, request
from db.models import Match
from engine.matchrecord import verify_record
from workers import hooks as workers_hooks
from workers import procs, tasks
from workers.analysis import analyse_match
from workers.sweeper import sweep
from workers.testing import redis_site, wait_until

ROOT = Path(__file__).resolve().parents[2]


class Sender:
    """A task's `apply_async` on the test's own broker (as housekit.announce_on does)."""

    def __init__(self, app, name: str, queue: str) -> None:
        self.app, self.name, self.queue = app, name, queue

    def apply_async(self, args) -> None:
        self.app.send_task(self.name, args, queue=self.queue)


def analysis_state(sessions, match_id: int) -> str | None:
    with sessions() as s:
        row = s.get(Analysis, match_id)
        return None if row is None else row.state
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "match-record.schema.json").read_text()))


def bench_export():
    spec = importlib.util.spec_from_file_location("bench_export", ROOT / "bench" / "export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_requested_analysis_runs_on_a_worker_and_is_exported(postgres_sessions, redis_url,
                                                               tmp_path, monkeypatch):
    url, sessions = postgres_sessions
    app, broker_env = redis_site(redis_url)
    bench_export().fill(sessions.kw["bind"], 4, seed=8)
    with sessions() as s:  # the two shortest finished matches: the test's time
        match_id, ended_id = s.scalars(select(Match.id).where(Match.state == "finished")
                                       .order_by(Match.seq).limit(2)).all()
    with sessions.begin() as s:
        assert request(s, match_id) == "requested"  # what the dashboard's button does
    sent: list[int] = []

    def send(mid: int) -> None:
        sent.append(mid)
        app.send_task("bummerl.analyse", (mid,), queue="batch")

    worker = procs.start_worker({"DATABASE_URL": url, **broker_env,
                                 "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat")},
                                queues="batch", logfile=tmp_path / "worker.log")
    try:
        swept = sweep(sessions, send_chunks=lambda ids: None, send_move=lambda *a, **k: None,
                      send_analysis=send)
        assert swept["analyses"] == [match_id] == sent
        assert sweep(sessions, send_chunks=lambda ids: None, send_move=lambda *a, **k: None,
                     send_analysis=send)["analyses"] == []  # sent already: not twice

        def done() -> Analysis | None:
            with sessions() as s:
                row = s.get(Analysis, match_id)
                return row if row is not None and row.state == DONE else None

        row = wait_until(done, 240, what="the analysis")
        exported = records.finished_record(sessions.kw["bind"], match_id)
        SCHEMA.validate(exported)
        assert exported["analysis"] == json.loads(row.document)
        assert verify_record(exported)["verified"]  # `bummerl replay` still verifies it
        app.send_task("bummerl.analyse", (match_id,), queue="batch")  # a duplicate message
        # the worker's log shows the task's result: it found the analysis there already
        wait_until(lambda: "'already'" in (tmp_path / "worker.log").read_text(), 120,
                   what="the duplicate task")
        # the hooks (workers.hooks): an operator's request, and with BUMMERL_ANALYSE_ALL every
        # match's end, send the match (a duplicate finds it done: idempotent)
        ended: list[int] = []
        monkeypatch.setattr(tasks, "rate_match_task", Sender(app, "bummerl.rate", "moves"))
        monkeypatch.setattr(tasks, "send_analysis", lambda mid: (
            ended.append(mid), app.send_task("bummerl.analyse", (mid,), queue="batch")))
        monkeypatch.delenv("BUMMERL_ANALYSE_ALL", raising=False)
        workers_hooks.on_match_end(ended_id)
        assert ended == []  # off by default
        workers_hooks.on_analysis_requested(ended_id)  # AdminService.AnalyseMatch's hook
        assert ended == [ended_id]
        monkeypatch.setenv("BUMMERL_ANALYSE_ALL", "1")
        workers_hooks.on_match_end(ended_id)
        assert ended == [ended_id, ended_id]
        wait_until(lambda: analysis_state(sessions, ended_id) == DONE, 240,
                   what="the analysis of the ended match")
    finally:
        procs.stop(worker)
    again = done()
    assert again is not None and again.finished_at == row.finished_at  # left alone
    assert analyse_match(match_id, sessions) == "already"
    record = {k: v for k, v in exported.items() if k != "analysis"}
    fresh = analyse_record(record)
    stored = exported["analysis"]
    assert fresh["decisions"] == stored["decisions"] and fresh["seats"] == stored["seats"]


def test_an_unfinished_or_unknown_match_cannot_be_requested(postgres_sessions):
    _, sessions = postgres_sessions
    with sessions.begin() as s:
        try:
            request(s, 999)
        except ValueError as e:
            assert "match 999 is not a finished match" in str(e)
        else:
            raise AssertionError("a request for no match was taken")
        assert s.scalars(select(Analysis)).all() == []
