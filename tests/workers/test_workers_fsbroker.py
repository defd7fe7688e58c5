"""The embedded broker under concurrent producers and consumers: every message arrives whole,
exactly once (kombu's plain filesystem transport could hand out a half-written file); and a
waiting consumer wakes on a message, not on its next poll."""

from __future__ import annotations

import multiprocessing
import queue as stdlib_queue
import statistics
import threading
import time
from pathlib import Path

import pytest
from kombu import Connection, Queue

import workers.app  # noqa: F401  (registers the bummerlfs transport)


def options(folder: Path, poll: float = 0.01) -> dict:
    return {"data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
            "control_folder": str(folder / "control"), "polling_interval": poll}


def produce(folder: str, tag: str, count: int) -> None:

    with Connection("bummerlfs://", transport_options=options(Path(folder))) as conn:
        q = conn.SimpleQueue(Queue("t", routing_key="t"))
        for i in range(count):
            q.put({"tag": tag, "i": i, "pad": "x" * 2000})
        q.close()


def consume(folder: str, out: multiprocessing.Queue, stop) -> None:  # type: ignore[type-arg]

    with Connection("bummerlfs://", transport_options=options(Path(folder))) as conn:
        q = conn.SimpleQueue(Queue("t", routing_key="t"))
        while not stop.is_set():
            try:
                message = q.get(timeout=0.05)
            except q.Empty:
                continue
            out.put((message.payload["tag"], message.payload["i"], len(message.payload["pad"])))
            message.ack()
        q.close()


def test_concurrent_producers_and_consumers(tmp_path):
    for sub in ("queue", "control"):
        (tmp_path / sub).mkdir()
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    stop = ctx.Event()
    consumers = [ctx.Process(target=consume, args=(str(tmp_path), out, stop)) for _ in range(2)]
    producers = [ctx.Process(target=produce, args=(str(tmp_path), tag, 300)) for tag in "ab"]
    for p in consumers + producers:
        p.start()
    got = []
    try:
        while len(got) < 600:
            got.append(out.get(timeout=30))
        try:
            extra = out.get(timeout=0.5)
        except stdlib_queue.Empty:
            extra = None
    finally:
        stop.set()
        for p in producers + consumers:
            p.join(timeout=10)
    assert extra is None
    assert sorted((tag, i) for tag, i, _ in got) == [(t, i) for t in "ab" for i in range(300)]
    assert {size for _, _, size in got} == {2000}
    assert all(p.exitcode == 0 for p in consumers + producers)


def test_a_waiting_consumer_wakes_on_a_message_not_on_its_poll(tmp_path):
    """With the poll set to 5 s only the inotify wake (workers.fsbroker.Wake) can deliver a
    message published while the consumer waits well under that: a sleeping poll would take
    about 5 s for each."""
    for sub in ("queue", "control"):
        (tmp_path / sub).mkdir()
    latencies: list[float] = []
    waiting = threading.Event()

    def consume() -> None:
        with Connection("bummerlfs://", transport_options=options(tmp_path, 5.0)) as conn:
            q = conn.SimpleQueue(Queue("w", routing_key="w"))
            for _ in range(7):
                waiting.set()
                message = q.get(timeout=30)
                latencies.append(time.monotonic() - message.payload["sent"])
                message.ack()
            q.close()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    with Connection("bummerlfs://", transport_options=options(tmp_path, 5.0)) as conn:
        q = conn.SimpleQueue(Queue("w", routing_key="w"))
        for i in range(7):
            assert waiting.wait(timeout=30)
            waiting.clear()
            time.sleep(0.2)  # the consumer has looked, found nothing, and waits
            q.put({"i": i, "sent": time.monotonic()})
        q.close()
    consumer.join(timeout=60)
    assert len(latencies) == 7, latencies
    assert statistics.median(latencies) < 0.05, latencies


def test_a_worker_told_to_stop_ends_its_wait_for_messages(tmp_path, monkeypatch):
    """A Celery worker's loop looks at its stop flag only between two drains, each waiting up
    to 2 s for a message: once the flag is set (the worker's SIGTERM handler sets
    `celery.worker.state.should_stop`) the embedded broker's wait ends at its next poll."""
    from celery.worker import state

    for sub in ("queue", "control"):
        (tmp_path / sub).mkdir()
    with Connection("bummerlfs://", transport_options=options(tmp_path, 0.05)) as conn:
        conn.SimpleQueue(Queue("s", routing_key="s"))  # declared, empty
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            conn.drain_events(timeout=0.3)
        assert time.monotonic() - started >= 0.3  # not told to stop: the whole timeout
        monkeypatch.setattr(state, "should_stop", 0)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            conn.drain_events(timeout=60)
        assert time.monotonic() - started < 30  # told to stop: not the 60 s
