"""The client kit: wire conversions are lossless, and the bot of the README's guide plays."""

from __future__ import annotations

import random
import re
from pathlib import Path

from bummerl import wire

import engine
from client import Bot
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot

README = Path(__file__).resolve().parent.parent / "README.md"


def play_locally(bots: list[Bot], seed: int) -> engine.Match:
    """A whole match with the engine, each observation sent through the wire form."""
    match = engine.Match(seed, "soft")
    while not match.is_over:
        seat = match.to_act
        observation = wire.observation_from_pb(wire.observation_to_pb(match.observe(seat)))
        action = bots[seat].act(observation)
        if isinstance(action, str):
            action = engine.Action.from_text(action)
        match.apply(seat, wire.action_from_pb(wire.action_to_pb(action)))
    return match


def test_observations_and_actions_survive_the_wire():
    rng = random.Random(3)
    for seed in range(20):
        match = engine.Match(seed, "sharp" if seed % 2 else "soft")
        while not match.is_over:
            for seat in (0, 1):
                obs = match.observe(seat)
                assert wire.observation_from_pb(wire.observation_to_pb(obs)) == obs
            for action in match.legal_actions():
                assert wire.action_from_pb(wire.action_to_pb(action)) == action
            match.apply(match.to_act, rng.choice(match.legal_actions()))


def test_an_observation_written_into_a_turn_is_its_own():
    """`fill_observation` writes into a Turn's own message (no copy of a whole observation);
    the tricks, marriages and exchanges it reuses are copied in, so changing one turn's
    message changes no other."""
    from bummerl.v1 import bot_pb2

    rng, seen = random.Random(5), 0
    for seed in range(12):
        match = engine.Match(seed, "sharp" if seed % 2 else "soft")
        while not match.is_over:
            obs = match.observe(match.to_act)
            turn = bot_pb2.Turn()
            wire.fill_observation(turn.observation, obs)
            assert wire.observation_from_pb(turn.observation) == obs
            for part in (turn.observation.tricks, turn.observation.marriages,
                         turn.observation.exchanges):
                if part:
                    seen += 1
                    part[0].Clear()  # this turn's copy
            assert wire.observation_from_pb(wire.observation_to_pb(obs)) == obs
            match.apply(match.to_act, rng.choice(match.legal_actions()))
    assert seen > 100  # (the parts it reuses were there to change)


def test_example_bots_play_whole_matches():
    for seed in range(10):
        match = play_locally([SimpleBot(), RandomBot(seed)], seed)
        assert match.winner in (0, 1)


def test_the_bot_of_the_guide_plays():
    guide = README.read_text().split("## Write a bot in 10 minutes", 1)[1]
    code = re.search(r"```python\n(.*?)```", guide, re.S).group(1)
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102  (our own documentation)
    bot = namespace["MyBot"]()
    for seed in range(5):
        assert play_locally([bot, RandomBot(seed)], seed).is_over
