"""A PettingZoo AEC environment of Schnapsen (docs/kit-envs.md, "PettingZoo").

    from bummerl_kit.envs import pettingzoo_env

    env = pettingzoo_env(profile="soft")
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else policy(observation)
        env.step(action)

Agents `seat_0` and `seat_1`. An episode is a match (Bummerl, R9): hands down from 7 game
points, the first at 0 or below wins (`episode="hand"`: one hand). When a hand ends its winner
gets the game points it scored as reward and the loser as many negative (`reward="match"`: +1
and -1 at the match's end instead). An agent observes what its seat may know, encoded by
`bummerl_kit.envs.encoding`: a Dict of `observation` (Box of OBSERVATION_SIZE float32) and
`action_mask` (NUM_ACTIONS int8, all 0 when it is not the agent's turn). Actions are the
encoding's fixed indices; an illegal one raises ValueError naming the rule. `reset(seed=s)`
plays the match of seed `s` (the engine's deal, `engine.deck_for`), the same in any run.

Needs pettingzoo and gymnasium (`pip install bummerl-kit[pettingzoo]`); only this module
imports them.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from bummerl_kit.envs.encoding import (
    HIGH,
    LOW,
    NUM_ACTIONS,
    action_of,
    legal_mask,
    observation_tensor,
)
from engine.errors import IllegalActionError
from engine.match import Match
from engine.rules import Profile

AGENTS = ("seat_0", "seat_1")
RENDER_MODES = ("ansi", "human")
EPISODES = ("match", "hand")
REWARDS = ("game_points", "match")


class SchnapsenEnv(AECEnv):  # type: ignore[misc]
    """A match (or one hand) of Schnapsen between `seat_0` and `seat_1` (module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "bummerl_schnapsen_v0",
                "is_parallelizable": False}

    def __init__(self, profile: str = "soft", episode: str = "match",
                 reward: str = "game_points", render_mode: str | None = None) -> None:
        super().__init__()
        if episode not in EPISODES:
            raise ValueError(f"episode is one of {EPISODES}, not {episode!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward is one of {REWARDS}, not {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode is one of {RENDER_MODES}, not {render_mode!r}")
        self.profile = Profile(profile)
        self.episode = episode
        self.reward = reward
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        box = spaces.Box(low=np.array(LOW, dtype=np.float32),
                         high=np.array(HIGH, dtype=np.float32), dtype=np.float32)
        self.observation_spaces = {
            a: spaces.Dict({"observation": box,
                            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)})
            for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self._seeds = random.Random()
        self.match: Match | None = None
        self.seed: int | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # --- the episode ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start the match of `seed` (without one: the next seed of this environment's
        sequence, itself seeded by the last `reset(seed=...)`)."""
        if seed is not None:
            self._seeds.seed(seed)
            self.seed = int(seed)
        else:
            self.seed = self._seeds.randrange(2**62)
        self.match = Match(seed=self.seed, profile=self.profile)
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self._skip_agent_selection = None
        self.agent_selection = self._agent(self.match.to_act)

    @staticmethod
    def _agent(seat: int | None) -> str:
        assert seat is not None
        return AGENTS[seat]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What `agent`'s seat may know now: its observation tensor and its legal mask."""
        assert self.match is not None, "call reset() first"
        obs = self.match.observe(AGENTS.index(agent))
        return {"observation": np.array(observation_tensor(obs), dtype=np.float32),
                "action_mask": np.array(legal_mask(obs), dtype=np.int8)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        assert match is not None, "call reset() first"
        if action is None:
            raise ValueError(f"{agent} is to act: give an action index, not None")
        seat = AGENTS.index(agent)
        try:
            result = match.apply(seat, action_of(int(action)))
        except IllegalActionError as error:
            raise ValueError(f"{agent}: {action_of(int(action))} is illegal: {error}") from None
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        done = False
        if result is not None:
            winner, loser = AGENTS[result.winner], AGENTS[1 - result.winner]
            done = match.is_over or self.episode == "hand"
            for a in AGENTS:  # the last hand's result, until the next one ends
                self.infos[a] = {"last_hand_result": result.to_dict()}
            if self.reward == "game_points":
                self.rewards[winner] = float(result.game_points)
                self.rewards[loser] = -float(result.game_points)
            elif done:  # the match's winner (or the hand's, with episode="hand")
                self.rewards[winner], self.rewards[loser] = 1.0, -1.0
        if done:
            self.terminations = {a: True for a in self.agents}
            for a in AGENTS:
                self.infos[a]["counters"] = list(match.counters)
        else:
            self.agent_selection = self._agent(match.to_act)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # --- showing it -------------------------------------------------------------------------
    def render(self) -> str | None:
        """The public state and the hands (an onlooker's view of a training match)."""
        if self.render_mode is None or self.match is None:
            return None
        match = self.match
        hand = match.hand
        lines = [f"hand {match.hand_number}, counters {match.counters[0]}:{match.counters[1]}, "
                 f"trump {hand.trump_card} ({hand.trump_suit}), stock {hand.stock_size}"
                 + (f", closed by seat {hand.closed_by}" if hand.closed_by is not None else "")]
        for seat in (0, 1):
            cards = " ".join(str(c) for c in hand.holding(seat))
            lines.append(f"seat_{seat}: {cards}  points {hand.points(seat)}")
        if hand.lead_card is not None:
            lines.append(f"led: {hand.lead_card}")
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def raw_env(profile: str = "soft", **kwargs: Any) -> SchnapsenEnv:
    """The environment without PettingZoo's wrappers."""
    return SchnapsenEnv(profile=profile, **kwargs)


def env(profile: str = "soft", **kwargs: Any) -> Any:
    """The environment in PettingZoo's usual wrappers (actions in bounds, calls in order)."""
    wrapped: Any = wrappers.AssertOutOfBoundsWrapper(raw_env(profile, **kwargs))
    return wrappers.OrderEnforcingWrapper(wrapped)
