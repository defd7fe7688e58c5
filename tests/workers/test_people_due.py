"""`workers.tasks.move_message`: when a house bot's answer to a person is due."""

from __future__ import annotations

import time


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
