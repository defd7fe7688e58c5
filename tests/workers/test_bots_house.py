"""House bots: legal, observation-only, and about as strong as they should be."""

from __future__ import annotations

import random

import pytest

from bots import STRATEGIES, BullyBot, make_bot
from bots.batch import play_deals, play_pair
from engine import ActionKind, Hand, Observation, Profile, deck_for, observe


class Spy:
    """Wraps a bot; checks it is only ever handed an Observation of its own seat, to act."""

    def __init__(self, bot):
        self.bot = bot
        self.calls = 0

    def choose(self, observation, rng, deadline=None):
        assert type(observation) is Observation
        assert observation.to_act == observation.seat
        action = self.bot.choose(observation, rng, deadline)
        assert action in observation.legal_actions
        self.calls += 1
        return action


@pytest.mark.parametrize("profile", list(Profile))
@pytest.mark.parametrize("strategy", sorted(s for s in STRATEGIES if not s.startswith("level-")))
def test_plays_only_legal_actions_from_its_observation(strategy, profile):
    # (the levels, fixed configurations of these strategies: tests/workers/test_levels.py)
    options = {"rdeep": {"samples": 2}, "champion": {"ms": 0, "samples": 2},
               "champion-v1": {"ms": 0, "samples": 2},
               "ismcts": {"ms": 0, "samples": 8}}
    spy = Spy(make_bot(strategy, **options.get(strategy, {})))
    other = Spy(make_bot("random"))
    for deal in range(20):
        play_pair(spy, other, seed=99, deal=deal, profile=profile)
    assert spy.calls > 100


def test_unknown_strategy():
    with pytest.raises(ValueError, match="unknown house strategy"):
        make_bot("nope")


def test_bully_trumps_first_then_follows_then_highest():
    bully = BullyBot()
    rng = random.Random(1)
    for deal in range(30):
        hand = Hand(deck_for(5, deal), dealer=deal % 2)
        while not hand.is_over:
            seat = hand.to_act
            obs = observe(hand, seat)
            action = bully.choose(obs, rng)
            cards = [a.card for a in obs.legal_actions if a.kind is ActionKind.PLAY]
            if action.kind is ActionKind.PLAY:
                trumps = [c for c in cards if c.suit == obs.trump_suit]
                follow = [c for c in cards
                          if obs.lead_card is not None and c.suit == obs.lead_card.suit]
                pool = trumps or follow or cards
                assert action.card in pool
                assert action.card.points == max(c.points for c in pool)
            else:
                assert action.kind is ActionKind.CLAIM and obs.points >= 66
            hand.apply(seat, action)


def test_duplicate_pairs_cancel_card_luck():
    # A deterministic bot against itself: both plays of a deal mirror each other exactly.
    totals = play_deals("bully", "bully", seed=3, first=0, count=50)
    assert totals.net == 0 and totals.wins_a == 50


def test_strength_order():
    assert play_deals("bully", "random", seed=1, first=0, count=60).net > 0
    rdeep_vs_bully = play_deals("rdeep", "bully", seed=1, first=0, count=30)
    assert rdeep_vs_bully.net > 0


def test_chunks_are_reproducible():
    whole = play_deals("rdeep", "random", seed=8, first=0, count=10)
    parts = (play_deals("rdeep", "random", seed=8, first=0, count=4)
             + play_deals("rdeep", "random", seed=8, first=4, count=6))
    assert whole == parts
