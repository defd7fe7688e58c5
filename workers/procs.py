"""Start and stop real Celery processes (worker, beat) as subprocesses.

Used by `bummerl up`, `bench/batch.py` and the tests. Each process gets its own process group,
so it can be killed with everything it forked (a prefork worker's pool children).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

PEOPLE_THREADS = 32  # a people's worker's threads (-P threads): each waits for a due time

ROOT = Path(__file__).resolve().parent.parent


def celery_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "workers.app", *args]


def start_worker(env: dict[str, str] | None = None, queues: str = "people,moves,batch",
                 concurrency: int = 1, beat: bool = False, logfile: str | Path | None = None,
                 name: str = "w1", loglevel: str = "INFO", pool: str = "prefork"
                 ) -> subprocess.Popen:
    """A Celery worker process on `queues`: a `pool` (prefork, or threads) of `concurrency`."""
    return _start(celery_command(*worker_args(queues, concurrency, pool, name, loglevel, beat)),
                  env, logfile)


def worker_args(queues: str, concurrency: int, pool: str, name: str, loglevel: str,
                beat: bool) -> list[str]:
    """`celery worker`'s arguments for a bummerl worker (`start_worker`, `bummerl worker`)."""
    return ["worker", "-Q", queues, "-c", str(concurrency), "-P", pool, "--without-mingle",
            "--without-gossip", "-n", f"{name}@%h", "-l", loglevel, *(["-B"] if beat else [])]


def start_beat(env: dict[str, str] | None = None, logfile: str | Path | None = None,
               loglevel: str = "INFO") -> subprocess.Popen:
    """The Celery beat scheduler (ladder ticks and sweeps)."""
    return _start(celery_command("beat", "-l", loglevel), env, logfile)


def _start(cmd: list[str], env: dict[str, str] | None, logfile: str | Path | None
           ) -> subprocess.Popen:
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT),
                                                          full_env.get("PYTHONPATH")]))
    out = open(logfile, "ab") if logfile else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        if logfile:
            out.close()  # type: ignore[union-attr]


def children(proc: subprocess.Popen) -> list[int]:
    """Pids of the direct children of `proc` (a prefork worker's pool processes)."""
    try:
        text = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
    except OSError:
        return []
    return [int(pid) for pid in text.split()]


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process and its whole group, no clean-up (a crash)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def stop_all(procs: list[subprocess.Popen], timeout: float = 15) -> None:
    """Warm shutdown of several processes at once."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        stop(proc, timeout)


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """Warm shutdown (SIGTERM: finish the current task), then SIGKILL if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # the main process stops its pool itself
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
    kill(proc)  # whatever is left of the group
