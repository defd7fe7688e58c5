"""The Celery app: broker, queues, reliability settings, and the beat schedule.

| variable | meaning | default |
|---|---|---|
| `BUMMERL_BROKER_URL` | the Celery broker | `REDIS_URL` if set, else embedded |
| `REDIS_URL` | Redis (production broker) | none |
| `BUMMERL_BROKER_PREFIX` | prefix of every Redis key (sites sharing one Redis) | none |
| `BUMMERL_VAR` | folder of the local state (`var/` in the defaults below means it) | `var/` |
| `BUMMERL_BROKER_DIR` | folder of the embedded (filesystem) broker | `var/broker` |
| `BUMMERL_LADDER_MATCHES` | ladder matches kept going per profile | 2 |
| `BUMMERL_LADDER_PROFILES` | profiles the ladder runs, comma-separated | `soft` |
| `BUMMERL_LADDER_EVERY` | seconds between ladder ticks (beat) | 5 |
| `BUMMERL_SWEEP_EVERY` | seconds between sweeps (beat) | 10 |
| `BUMMERL_TESTS_EVERY` | seconds between version tests' steps (beat) | 2 |
| `BUMMERL_EVENTS_EVERY` | seconds between steps of each running tournament (beat) | 2 |
| `BUMMERL_HOSTED_EVERY` | seconds between rounds of the hosted bots' supervisor (beat) | 5 |
| `BUMMERL_SWEEP_STALE` | seconds without progress before owed work is re-enqueued | 60 |
| `BUMMERL_BATCH_WINDOW` | chunks of one simulation enqueued at a time | 16 |
| `BUMMERL_BEAT_SCHEDULE` | beat's schedule file | `var/celerybeat-schedule` |
| `BUMMERL_BROKER_TIMEOUT` | seconds any one Redis command or connect may take | 5 |
| `BUMMERL_WORKER_CHECK_S` | seconds between a worker's broker checks and heartbeats | 5 |
| `BUMMERL_WORKER_HEARTBEAT` | heartbeat file (`bummerl worker --check`) | `var/worker-NAME.alive` |

Embedded default: kombu's filesystem transport under `var/broker/` (no Redis), made safe for
several processes (workers.fsbroker, URL `bummerlfs://`), still real Celery workers; all
processes on one machine share the folder. Its messages are removed when a
worker takes them, so a killed worker loses its message: the sweeper re-enqueues from the
database, which is the truth (the queue is only a trigger).

Queues: `people` (latency-bound: a house bot's answer to a person at the table, due at a
set time), `moves` (house-bot moves of bots' matches, ladder ticks, sweeps, rating updates, the
events' steps) and `batch` (throughput-bound: simulation chunks, analyses). Run separate workers
per queue in production (`-Q people -c 2`, `-Q moves -c 4`, `-Q batch -c <cores>`), so a
person's answer never waits behind a ladder's flood of house moves (at 50 open tables beside 4
bots playing house bots flat out, sharing the `moves` workers put answers 0.5 s late at p99);
one worker may also serve all three. `hosting` (where BUMMERL_HOSTING is set): hosted bots'
builds, validation matches and the supervisor's rounds (workers.hosted), on a worker of its own
beside podman (or with the Kubernetes API's credentials). A person's house turn that no worker
took is re-sent on `moves` by the sweeper, like any house turn left waiting.

Broker outages: nothing waits on Redis for ever. Every Redis command and connect is bounded by
`BUMMERL_BROKER_TIMEOUT`, a publish is retried briefly then fails (the sweeper makes good a lost
trigger), a worker retries its connection for ever, and its `workers.liveness.BrokerCheck` step
reconnects it when the broker stops answering or acks lost in an outage leaked prefetch slots.
"""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery
from kombu import Queue
from kombu.transport import TRANSPORT_ALIASES

from db.base import var_dir
from workers import metrics as _metrics  # noqa: F401  (before prometheus_client: multiprocess metrics)
from workers.broker import broker_url

# The embedded broker: kombu's filesystem transport with atomic writes and claims.
TRANSPORT_ALIASES.setdefault("bummerlfs", "workers.fsbroker:Transport")

ROOT = Path(__file__).resolve().parent.parent
MOVES = "moves"
BATCH = "batch"
PEOPLE = "people"
HOSTING = "hosting"  # hosted bots: builds, validations, the supervisor (workers.hosted)


def _env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def broker_dir() -> Path:
    return Path(os.environ.get("BUMMERL_BROKER_DIR") or var_dir() / "broker")


def is_embedded() -> bool:
    return broker_url().startswith("bummerlfs")


def _periodic(task: str, every: float, queue: str | None = None) -> dict[str, object]:
    """A beat entry: `task` every `every` seconds, expiring if not started within them (on
    `queue` if given, else the task's own)."""
    options: dict[str, object] = {"expires": every}
    if queue:
        options["queue"] = queue
    return {"task": task, "schedule": every, "options": options}


def make_app(url: str | None = None, prefix: str | None = None) -> Celery:
    """The Celery app for broker `url` (default: `broker_url()`); Redis keys get `prefix`
    (default: `BUMMERL_BROKER_PREFIX`), so several sites (or test runs) can share a Redis."""
    app = Celery("bummerl", include=["workers.tasks"])
    var_dir().mkdir(parents=True, exist_ok=True)
    url = url or broker_url()
    prefix = os.environ.get("BUMMERL_BROKER_PREFIX", "") if prefix is None else prefix
    transport_options: dict[str, object] = {}
    if url.startswith("bummerlfs"):
        folder = broker_dir()
        for sub in ("queue", "control"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        transport_options = {
            "data_folder_in": str(folder / "queue"),
            "data_folder_out": str(folder / "queue"),
            "control_folder": str(folder / "control"),
            "polling_interval": 0.1,
        }
    elif url.startswith("redis"):
        # Redeliver an unacknowledged message after this long (a crashed worker's task); the
        # sweeper usually re-enqueues owed work sooner.
        timeout = _env_float("BUMMERL_BROKER_TIMEOUT", 5.0)
        transport_options = {
            "visibility_timeout": 1800,
            # Bounded waits: a Redis that stops answering (paused, packets dropped) makes a
            # command fail after `timeout` instead of blocking a publisher or the worker for
            # ever; health checks and keepalives find dead idle connections.
            "socket_timeout": timeout,
            "socket_connect_timeout": timeout,
            "socket_keepalive": True,
            "health_check_interval": 10,
        }
        if prefix:
            transport_options["global_keyprefix"] = prefix
        # kombu's Redis transport, reusing its clients (workers.redisbroker)
        app.conf.broker_transport = "workers.redisbroker:Transport"
    app.conf.update(
        broker_url=url,
        broker_transport_options=transport_options,
        broker_connection_retry_on_startup=True,
        broker_connection_retry=True,
        broker_connection_max_retries=None,  # a worker waits for its broker, however long
        broker_connection_timeout=_env_float("BUMMERL_BROKER_TIMEOUT", 5.0),
        # A publish (a hook's trigger, a chunk's successor) tries for about 2 s, then raises.
        task_publish_retry_policy={"max_retries": 3, "interval_start": 0, "interval_step": 0.5,
                                   "interval_max": 1},
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        task_queues=[Queue(PEOPLE), Queue(MOVES), Queue(BATCH), Queue(HOSTING)],
        task_default_queue=MOVES,
        # each task's queue (the `people` queue is chosen per message: workers.tasks.move_message)
        task_routes={
            "bummerl.move": {"queue": MOVES},
            "bummerl.chunk": {"queue": BATCH},
            "bummerl.analyse": {"queue": BATCH},
            "bummerl.cut_exercises": {"queue": BATCH},
            "bummerl.ladder_tick": {"queue": MOVES},
            "bummerl.rate": {"queue": MOVES},
            "bummerl.events_tick": {"queue": MOVES},
            "bummerl.event_step": {"queue": MOVES},
            "bummerl.sweep": {"queue": MOVES},
            "bummerl.versiontests_tick": {"queue": MOVES},
            "bummerl.hosted_build": {"queue": HOSTING},
            "bummerl.hosted_reconcile": {"queue": HOSTING},
        },
        # Reliability: acknowledge after the task ran; a worker lost mid-task puts it back.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        worker_send_task_events=False,
        worker_hijack_root_logger=False,
        beat_schedule_filename=os.environ.get("BUMMERL_BEAT_SCHEDULE")
        or str(var_dir() / "celerybeat-schedule"),
        # A periodic step that did not start within its period (the workers were busy or
        # their broker away) expires: the next one does the same work, and a backlog of stale
        # steps would hold the latency-bound queue's workers after an outage.
        beat_schedule={
            "ladder": _periodic("bummerl.ladder_tick", _env_float("BUMMERL_LADDER_EVERY", 5.0)),
            "sweep": _periodic("bummerl.sweep", _env_float("BUMMERL_SWEEP_EVERY", 10.0)),
            "versiontests": _periodic("bummerl.versiontests_tick",
                                      _env_float("BUMMERL_TESTS_EVERY", 2.0), queue=MOVES),
            "events": _periodic("bummerl.events_tick", _env_float("BUMMERL_EVENTS_EVERY", 2.0),
                                queue=MOVES),
            **({"hosted": _periodic("bummerl.hosted_reconcile",
                                    _env_float("BUMMERL_HOSTED_EVERY", 5.0), queue=HOSTING)}
               if os.environ.get("BUMMERL_HOSTING") else {}),
        },
    )
    from workers.liveness import BrokerCheck

    app.steps["consumer"].add(BrokerCheck)
    if url.startswith("bummerlfs"):
        # No broadcast needed: remote control would leave reply queues behind in the folder.
        app.conf.worker_enable_remote_control = False
    return app


app = make_app()
