"""A `bummerl worker` on the `moves` queue registers the house bots it plays when they are
missing (a site of separate processes, the image or k8s/, had none: only `bummerl up` made
them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import create_engine, text

from cli.up import HOUSE_BOTS

ROOT = Path(__file__).resolve().parents[2]


def house_bots(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT name FROM bots WHERE kind = 'house'"))
            return {name for (name,) in rows}
    except Exception:  # the table is not there yet (the worker migrates first)
        return set()
    finally:
        engine.dispose()


def start_worker(tmp_path: Path, url: str, queues: str) -> subprocess.Popen:  # type: ignore[type-arg]
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "BUMMERL_BROKER_URL", "BUMMERL_HOOKS")}
    env.update(DATABASE_URL=url, BUMMERL_BROKER_DIR=str(tmp_path / "broker"),
               BUMMERL_WORKER_HEARTBEAT=str(tmp_path / "alive"), BUMMERL_HOUSE_TOKEN="t")
    return subprocess.Popen([sys.executable, "-m", "cli.main", "worker", "-Q", queues, "-c", "1",
                             "-n", f"t{os.getpid()}"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_a_moves_worker_registers_the_house_bots(tmp_path):
    url = f"sqlite:///{tmp_path / 'site.db'}"
    proc = start_worker(tmp_path, url, "moves")
    try:
        deadline = time.monotonic() + 90
        while house_bots(url) != set(HOUSE_BOTS) and time.monotonic() < deadline:
            assert proc.poll() is None, "the worker exited"
            time.sleep(0.5)
    finally:
        stop(proc)
    assert house_bots(url) == set(HOUSE_BOTS)



def test_a_people_worker_runs_threads_unless_told_otherwise():
    """`bummerl worker -Q people` runs a pool of threads (each of its tasks mostly sleeps until
    the answer is due); every other worker a pool of processes, one per core."""
    from cli.main import build_parser
    from cli.worker import PEOPLE_THREADS, worker_args

    def pool(*argv: str) -> tuple[str, str]:
        args = worker_args(build_parser().parse_args(["worker", *argv]))
        return args[args.index("-P") + 1], args[args.index("-c") + 1]

    assert pool("-Q", "people") == ("threads", str(PEOPLE_THREADS))
    assert pool("-Q", "people", "-c", "8") == ("threads", "8")
    assert pool("-Q", "people", "-P", "prefork", "-c", "2") == ("prefork", "2")
    assert pool("-Q", "moves") == ("prefork", str(os.cpu_count() or 1))
    assert pool() == ("prefork", str(os.cpu_count() or 1))  # people,moves,batch
    assert pool("-Q", "moves", "-P", "threads") == ("threads", str(PEOPLE_THREADS))
