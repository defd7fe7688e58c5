"""A worker's own check of its broker connection, and the heartbeat file its liveness probe reads.

The fault it answers: after a Redis outage a worker could silently stop taking tasks, or take one
at a time, until restarted. A task that finished during the outage could not be acknowledged
("Couldn't ack"), so its delivery stayed counted against the prefetch limit of the channel; the
channel itself survived (redis-py reconnects under it), so nothing ever reset that count.

`BrokerCheck`, a step of the worker's consumer, runs in the worker's event loop every
`BUMMERL_WORKER_CHECK_S` seconds (default 5):
- it pings the broker on the consumer's connection (bounded by the broker socket timeout), and
- it compares the deliveries the task channel holds unacknowledged with the tasks the worker
  knows it has reserved or is running: a delivery no task accounts for, on two checks in a row,
  is a leaked prefetch slot.
Either fault raises a connection error inside the event loop, which is how Celery learns of a
lost connection: the consumer closes the connection and reconnects (retrying until the broker
answers), with a fresh channel whose prefetch count starts from zero. The messages whose acks
were lost come back after the visibility timeout; the sweeper re-enqueues owed work sooner, and
every task is idempotent. So the worker recovers in place; it is not restarted.

When a check passes it writes the heartbeat file (`heartbeat_path`), JSON with the time and the
counts. `bummerl worker --check` (`check()`) fails once the file is older than `--max-age`: the
event loop is stuck, the broker has been unreachable that long, or a leak was not cured. That is
the liveness probe, for a supervisor to restart the worker.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from celery import bootsteps
from celery.worker import state

from db.base import var_dir

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent


def check_every() -> float:
    return float(os.environ.get("BUMMERL_WORKER_CHECK_S", "5"))


def heartbeat_path(name: str) -> Path:
    """The heartbeat file of the worker named `name` (the part of its node name before '@'):
    `BUMMERL_WORKER_HEARTBEAT` if set, else var/worker-<name>.alive."""
    return Path(os.environ.get("BUMMERL_WORKER_HEARTBEAT") or var_dir() / f"worker-{name}.alive")


class BrokerLost(ConnectionError):
    """Raised in the event loop to make the consumer reconnect."""


class BrokerCheck(bootsteps.StartStopStep):
    """The consumer step: ping, leak check, heartbeat (see the module's docstring)."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.entry: Any = None
        self.suspect = 0
        self.path = heartbeat_path(str(parent.hostname).partition("@")[0])

    def start(self, parent: Any) -> None:
        self.suspect = 0
        if parent.hub is not None:
            self.entry = parent.hub.call_repeatedly(check_every(), self.check, parent)

    def stop(self, parent: Any) -> None:
        if self.entry is not None:
            self.entry.cancel()
            self.entry = None

    shutdown = stop

    def check(self, parent: Any) -> None:
        connection = parent.connection
        if connection is None:
            return
        channel: Any = getattr(getattr(parent, "task_consumer", None), "channel", None)
        try:
            # Redis only (the filesystem broker has no connection to lose). A client of the task
            # channel's pool: never `channel.client`, whose connection may be waiting on BRPOP.
            # (Using this channel's pool also makes sure it exists when Celery closes the channel
            # after the error below and puts its unacknowledged messages back.)
            if hasattr(channel, "conn_or_acquire"):
                with channel.conn_or_acquire() as client:
                    client.ping()
        except connection.connection_errors as e:
            log.warning("broker check: the broker does not answer (%r); reconnecting", e)
            raise BrokerLost(f"broker ping failed: {e!r}") from e
        held = unacked(parent)
        known = len(set(state.reserved_requests) | set(state.active_requests))
        if held is not None and held > known:
            self.suspect += 1
            if self.suspect >= 2:
                self.suspect = 0
                log.warning("broker check: %d deliveries held unacknowledged but only %d tasks "
                            "reserved or running (acks lost in an outage); reconnecting",
                            held, known)
                raise BrokerLost(f"{held - known} prefetch slot(s) leaked")
            return  # no heartbeat while a slot looks leaked
        self.suspect = 0
        write_heartbeat(self.path, {"at": time.time(), "pid": os.getpid(),
                                    "unacked": held, "tasks": known})


def unacked(parent: Any) -> int | None:
    """Deliveries the task channel counts against its prefetch limit (kombu's virtual
    transports: Redis, the filesystem broker); None when it cannot tell."""
    consumer = getattr(parent, "task_consumer", None)
    qos = getattr(getattr(consumer, "channel", None), "qos", None)
    if qos is None or not getattr(qos, "prefetch_count", None):
        return None
    estimate = qos.can_consume_max_estimate()
    return None if estimate is None else qos.prefetch_count - estimate


def write_heartbeat(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def check(name: str, max_age: float) -> tuple[bool, str]:
    """(alive, message) for the worker named `name`: its heartbeat is at most `max_age` s old."""
    path = heartbeat_path(name)
    try:
        data = json.loads(path.read_text())
        age = time.time() - float(data["at"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        return False, f"worker {name!r}: no readable heartbeat at {path} ({e})"
    if age > max_age:
        return False, (f"worker {name!r}: heartbeat {age:.0f} s old (max {max_age:.0f} s): "
                       f"its event loop is stuck or the broker has been unreachable that long")
    return True, (f"worker {name!r} alive: heartbeat {age:.1f} s old, "
                  f"{data.get('unacked')} unacked, {data.get('tasks')} tasks (pid "
                  f"{data.get('pid')})")
