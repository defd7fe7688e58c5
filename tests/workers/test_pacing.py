"""`workers.pacing`: sends held until their time, started in the order of their times; a send
that fails or is slow does not stop the ones after it."""

from __future__ import annotations

import threading
import time

from workers import pacing


def test_sends_run_at_their_time_in_order_of_time():
    done: list[tuple[str, float]] = []
    finished = threading.Event()
    now = time.time()

    def send(name: str):
        def call() -> None:
            done.append((name, time.time()))
            if len(done) == 3:
                finished.set()
        return call

    pacing.at(now + 0.30, send("late"))
    pacing.at(now + 0.10, send("early"))
    pacing.at(now + 0.20, send("middle"))
    assert pacing.held() == 3
    assert finished.wait(5)
    assert [name for name, _ in done] == ["early", "middle", "late"]
    for (name, at), due in zip(done, (0.10, 0.20, 0.30), strict=True):
        assert at >= now + due, (name, at - now)
        assert at < now + due + 0.5, (name, at - now)  # a loaded machine's bound
    assert pacing.held() == 0


def test_no_time_sends_at_once_on_the_callers_thread():
    threads: list[str] = []
    pacing.at(None, lambda: threads.append(threading.current_thread().name))
    assert threads == [threading.current_thread().name]


def test_a_failing_send_is_logged_and_the_next_one_still_runs(caplog):
    after = threading.Event()

    def fail() -> None:
        raise ConnectionError("broker gone")

    now = time.time()
    pacing.at(now + 0.05, fail)
    pacing.at(now + 0.10, after.set)
    assert after.wait(5)
    assert "a held send failed" in caplog.text


def test_a_slow_send_does_not_hold_up_the_next_one():
    """The first send waits until the second one has run: sent one after the other, the second
    would never run (the first's wait would end by its timeout, unset)."""
    second = threading.Event()
    first_saw: list[bool] = []
    now = time.time()
    pacing.at(now + 0.05, lambda: first_saw.append(second.wait(5)))
    pacing.at(now + 0.10, second.set)
    assert second.wait(5)
    deadline = time.time() + 5
    while not first_saw and time.time() < deadline:
        time.sleep(0.01)
    assert first_saw == [True]


def test_a_persons_answer_is_due_the_minimum_think_after_the_commit(monkeypatch):
    """`move_message`: due `BUMMERL_HOUSE_MIN_THINK_MS` after the person's action was committed
    (the hook's `since`), not after the hook ran: a hook that runs late eats into the think
    time, not the person's wait. A commit time in the future (another clock) counts as now."""
    from workers import tasks

    monkeypatch.setenv("BUMMERL_HOUSE_MIN_THINK_MS", "700")
    committed = time.time() - 0.25  # the hook runs a quarter of a second after the commit
    _, kwargs, options = tasks.move_message(7, 1, 12, person=True, since=committed)
    assert options["queue"] == "people"
    assert kwargs["not_before"] == committed + 0.7
    before = time.time()
    for since in (None, time.time() + 60):
        _, kwargs, _ = tasks.move_message(7, 1, 12, person=True, since=since)
        assert before + 0.7 <= kwargs["not_before"] <= time.time() + 0.7
    _, kwargs, options = tasks.move_message(7, 1, 12, person=False, since=committed)
    assert "not_before" not in kwargs and "queue" not in options  # a bot's answer: at once
