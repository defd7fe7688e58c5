"""House bots: the post-commit hooks announce their turns, and a worker-like caller plays them
with the plain functions while a remote bot plays over gRPC."""

from __future__ import annotations

import random

import pytest
from servicekit import fresh_database, play_in_threads, running_service

from examples.simple_bot import SimpleBot
from services.core import actions, dispatch, hooks
from services.core import matches as plain
from services.ops import bots


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    with fresh_database(request.param, request, tmp_path) as database, \
            running_service(database) as svc:
        yield svc


def test_house_bot_turns_are_announced_after_commit(service):
    remote_id, token = service.register("remote")
    house, none = bots.register_bot("house-random", kind="house", house_strategy="random",
                                    sessions=service.sessions)
    assert none is None
    turns: list[tuple[int, int, int]] = []
    ended: list[int] = []
    rng = random.Random(4)

    def on_turn(match_id: int, seat: int, seq: int, turn: hooks.HouseTurn) -> None:
        turns.append((match_id, seat, seq))
        # what the service knew of the turn: the strategy, and the seat's observation at seq
        assert turn.strategy == "random" and turn.seq == seq
        assert turn.observation is None or (turn.observation.seat == seat
                                            and turn.observation.to_act == seat)
        m = plain.get_match(match_id, sessions=service.sessions)
        assert m.seq == seq and m.to_act == seat  # the hook sees the committed state
        obs, _ = plain.get_observation(match_id, seat, sessions=service.sessions)
        actions.submit_action(match_id, seat, rng.choice(obs.legal_actions), expected_seq=seq,
                              request_id=f"house:{match_id}:{seq}", sessions=service.sessions,
                              config=service.config)

    hooks.on_turn.append(on_turn)
    hooks.on_match_end.append(ended.append)
    try:
        m = plain.create_match([house.id, remote_id], seed=12, sessions=service.sessions,
                               config=service.config)
        play_in_threads(service, [(SimpleBot(), token)], matches=1)
        assert dispatch.flush(10)  # the hooks run on a dispatcher thread, soon after
    finally:
        hooks.on_turn.remove(on_turn)
        hooks.on_match_end.remove(ended.append)
    final = plain.get_match(m.id, sessions=service.sessions)
    assert final.state == "finished" and final.end_reason == "played"
    assert turns and all(seat == 0 for _, seat, _ in turns)
    assert ended == [m.id]


def test_a_failing_hook_does_not_break_the_service(service):
    a_id, _ = service.register("a")
    b_id, _ = service.register("b")

    def broken(*args):
        raise RuntimeError("boom")

    hooks.on_match_end.append(broken)
    try:
        m = plain.create_match([a_id, b_id], seed=1, sessions=service.sessions,
                               config=service.config)
        seat = m.to_act
        obs, _ = plain.get_observation(m.id, seat, sessions=service.sessions)
        actions.submit_action(m.id, seat, obs.legal_actions[0], expected_seq=0,
                              sessions=service.sessions, config=service.config)
    finally:
        hooks.on_match_end.remove(broken)


def test_install_from_spec():
    calls = []
    import sys
    import types

    module = types.ModuleType("fake_hooks_module")
    module.install = lambda: calls.append(1)  # type: ignore[attr-defined]
    sys.modules["fake_hooks_module"] = module
    hooks.install("fake_hooks_module:install, not_a_module_at_all:install")
    assert calls == [1]
