"""bummerl_kit.envs.pettingzoo_env (issue 45): PettingZoo's own API test passes in both
profiles; each agent observes its seat's encoding (no leak: deals its seat cannot tell apart
look the same to it); the mask is the engine's legal actions; an episode of random legal
actions is the engine's match, its rewards the game points."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from envkit import twins
from pettingzoo.test import api_test

from bummerl_kit.envs import pettingzoo_env
from bummerl_kit.envs.aec import SchnapsenEnv
from bummerl_kit.envs.encoding import (
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    action_index,
    action_of,
    legal_mask,
    observation_tensor,
)
from engine import Match

# What api_test says of every Dict observation (PettingZoo's classic card games too).
DICT_OBSERVATION_WARNINGS = ("Observation space for each agent probably should be",
                             "Observation is not a NumPy array")


@pytest.mark.parametrize("profile", ["soft", "sharp"])
def test_pettingzoos_api_test_passes(profile, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(pettingzoo_env(profile), num_cycles=1000)
    assert "Passed API test" in capsys.readouterr().out
    others = [str(w.message) for w in caught
              if not str(w.message).startswith(DICT_OBSERVATION_WARNINGS)]
    assert others == []


@pytest.mark.parametrize("profile", ["soft", "sharp"])
def test_random_episode_is_the_engines_match_and_rewards_are_game_points(profile):
    rng = random.Random(3)
    for seed in range(5):
        env = pettingzoo_env(profile)
        env.reset(seed=seed)
        raw: SchnapsenEnv = env.unwrapped
        played: list[tuple[int, str]] = []
        returns = {"seat_0": 0.0, "seat_1": 0.0}
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            returns[agent] += reward
            if termination or truncation:
                env.step(None)
                continue
            seat = int(agent[-1])
            match = raw.match
            assert match is not None and match.to_act == seat
            mask = observation["action_mask"]
            assert observation["observation"].shape == (OBSERVATION_SIZE,)
            assert mask.dtype == np.int8
            assert {action_of(i) for i in np.flatnonzero(mask)} == set(match.legal_actions())
            for other, other_seat in (("seat_0", 0), ("seat_1", 1)):
                seen = env.observe(other)
                obs = match.observe(other_seat)
                assert seen["observation"].tolist() == pytest.approx(observation_tensor(obs))
                assert seen["action_mask"].tolist() == legal_mask(obs)
                if other_seat != seat:
                    assert not seen["action_mask"].any()
            action = int(rng.choice(np.flatnonzero(mask)))
            played.append((seat, str(action_of(action))))
            env.step(action)
        assert env.agents == []
        engine = Match.replay(seed, profile, [(s, action_of(action_index(a)))
                                              for s, a in played])
        assert engine.is_over and engine.counters == raw.match.counters
        assert engine.winner == raw.match.winner
        c0, c1 = engine.counters
        # Each hand: its winner +game points, the loser as many negative.
        assert returns == {"seat_0": float(c1 - c0), "seat_1": float(c0 - c1)}


def test_reset_with_a_seed_deals_the_engines_match_of_that_seed():
    env = pettingzoo_env("soft")
    env.reset(seed=11)
    first = env.observe(env.agent_selection)["observation"].tolist()
    match = Match(seed=11)
    assert env.agent_selection == f"seat_{match.to_act}"
    assert first == pytest.approx(observation_tensor(match.observe(match.to_act)))
    env.reset(seed=12)
    env.reset(seed=11)
    assert env.observe(env.agent_selection)["observation"].tolist() == first
    env.reset()  # the next seed of the sequence: the same after the same seeded reset
    after = env.unwrapped.seed
    env.reset(seed=11)
    env.reset()
    assert env.unwrapped.seed == after


def test_no_leak_each_agent_sees_the_same_in_deals_its_seat_cannot_tell_apart():
    compared = 0
    for hand, twin, seat in twins(150, seed=13):
        views = []
        for dealt in (hand, twin):
            env = SchnapsenEnv(profile=dealt.profile.value)
            env.reset(seed=0)
            match = Match(profile=dealt.profile, first_dealer=dealt.dealer,
                          decks=[dealt.deck])
            for actor, action in dealt.history:
                match.apply(actor, action)
            env.match = match
            views.append(env.observe(f"seat_{seat}"))
        assert views[0]["observation"].tolist() == views[1]["observation"].tolist()
        assert views[0]["action_mask"].tolist() == views[1]["action_mask"].tolist()
        compared += 1
    assert compared > 100


def test_one_hand_episodes_and_match_rewards():
    env = pettingzoo_env("sharp", episode="hand", reward="match")
    env.reset(seed=5)
    raw = env.unwrapped
    rewards = {}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        rewards[agent] = reward
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert len(raw.match.results) == 1
    winner = raw.match.results[0].winner
    assert rewards == {f"seat_{winner}": 1.0, f"seat_{1 - winner}": -1.0}


def test_an_illegal_action_is_refused_with_its_rule():
    env = pettingzoo_env("soft")
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = next(i for i in range(NUM_ACTIONS) if not mask[i])
    with pytest.raises(ValueError, match=r"is illegal: R\d"):
        env.step(illegal)
