"""The client kit: wire conversions are lossless, and the bot of the README's guide plays."""

from __future__ import annotations

import queue
import random
import re
from pathlib import Path

import pytest
from bummerl import wire

import engine
from client import Bot
from examples.random_bot import RandomBot
from examples.simple_bot import SimpleBot

README = Path(__file__).resolve().parents[2] / "README.md"


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


def test_an_observation_is_the_message_built_field_by_field():
    """`fill_observation` merges the encodings of the repeated fields' items, made once per
    value: the message is the one built field by field, items in the same order."""
    from bummerl.v1 import common_pb2 as pb

    def plain(obs: engine.Observation) -> pb.Observation:
        seat = (lambda v: -1 if v is None else v)  # noqa: E731
        return pb.Observation(
            seat=obs.seat, profile=wire.PROFILES[obs.profile], hand_number=obs.hand_number,
            dealer=obs.dealer, to_act=seat(obs.to_act), hand=[str(c) for c in obs.hand],
            trump_suit=obs.trump_suit.value, trump_card=str(obs.trump_card),
            trump_card_face_up=obs.trump_card_face_up, stock_size=obs.stock_size,
            closed_by=seat(obs.closed_by), leader=obs.leader,
            lead_card=str(obs.lead_card) if obs.lead_card is not None else "",
            tricks=[pb.Trick(leader=t.leader, lead=str(t.lead), follow=str(t.follow),
                             winner=t.winner) for t in obs.tricks],
            marriages=[pb.Marriage(seat=m.seat, suit=m.suit.value, trick=m.trick)
                       for m in obs.marriages],
            exchanges=[pb.Exchange(seat=e.seat, taken=str(e.taken)) for e in obs.exchanges],
            points=obs.points, pending_points=obs.pending_points, tricks_won=obs.tricks_won,
            opponent_tricks_won=obs.opponent_tricks_won, counters=list(obs.counters),
            legal_actions=[wire.action_to_pb(a) for a in obs.legal_actions],
            opponent_hand_size=obs.opponent_hand_size, closed_after=seat(obs.closed_after))

    rng, parts = random.Random(11), 0
    for seed in range(16):
        match = engine.Match(seed, "sharp" if seed % 2 else "soft")
        while not match.is_over:
            for seat in (0, 1):
                obs = match.observe(seat)
                built = wire.observation_to_pb(obs)
                assert built == plain(obs)
                assert built.SerializeToString() == plain(obs).SerializeToString()
                parts += len(obs.tricks) > 1 and bool(obs.marriages or obs.exchanges)
            match.apply(match.to_act, rng.choice(match.legal_actions()))
    assert parts > 50  # (observations with several items of the repeated fields were seen)


def test_the_version_the_hello_says():
    """--version (Runner's `version`), else the bot class's `version`, else none; checked."""
    from client.errors import KitError
    from client.runner import Runner

    class Versioned(Bot):
        version = "2.3.1"

    assert Runner(Bot(), "127.0.0.1:1", "t").version == ""
    assert Runner(Versioned(), "127.0.0.1:1", "t").version == "2.3.1"
    assert Runner(Versioned(), "127.0.0.1:1", "t", version="abc123").version == "abc123"
    assert Runner(Versioned(), "127.0.0.1:1", "t", version="").version == ""
    hello = next(Runner(Versioned(), "127.0.0.1:1", "t")._requests(queue.SimpleQueue()))
    assert hello.hello.version == "2.3.1"
    with pytest.raises(KitError, match="at most 100"):
        Runner(Bot(), "127.0.0.1:1", "t", version="x" * 101)
    with pytest.raises(KitError, match="printable"):
        Runner(Bot(), "127.0.0.1:1", "t", version="1.0\n")
