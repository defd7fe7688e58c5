"""The house opponents for every level: the table is whole, each level plays legal actions from
its own observation the same way from the same seed (both profiles), and each level beats the
one below it. (tests/workers/test_bots_house.py checks the strategies the levels are built on.)
"""

from __future__ import annotations

import random

import pytest

from bots import STRATEGIES, make_bot
from bots.batch import play_pair
from bots.levels import BASES
from bots.stats import Totals, summary
from cli.up import HOUSE_BOTS
from engine import Hand, Observation, Profile, deck_for, observe
from events.levels import LEVELS, level_for_strategy

# Neighbouring levels and the duplicate deals the ordering test plays for each. The round-robin of
# events.levels.MEASURED_BY measured, per neighbouring pair over 200 deals, the upper level's net
# game points per deal (and the spread of one deal's net): 1→2 +1.94 (0.87), 2→3 +0.90 (0.90),
# 3→4 +0.60 (1.05), 4→5 +0.75 (1.15). The test asks the lower end of the 95 % interval to clear
# 0, so two levels of equal strength pass with a chance of 2.5 %; the deals are sized so that at
# the measured gap the mean lies about 4 standard errors above 0 (about 30 s of CPU in all).
ORDERING_DEALS = {1: 10, 2: 20, 3: 50, 4: 40}


def test_the_table_is_whole_and_ordered():
    assert [lv.number for lv in LEVELS] == list(range(1, len(LEVELS) + 1))
    assert 5 <= len(LEVELS) <= 6  # a handful, beginner to expert
    for lv in LEVELS:
        assert lv.strategy in STRATEGIES and lv.base in BASES
        assert level_for_strategy(lv.strategy) is lv
        assert HOUSE_BOTS[lv.bot_name] == lv.strategy
        assert lv.description and "\n" not in lv.description
        assert lv.rating is not None
    ratings = [lv.rating for lv in LEVELS]
    assert ratings == sorted(ratings) and len(set(ratings)) == len(ratings)
    assert level_for_strategy("champion") is None and level_for_strategy(None) is None


def test_a_level_takes_no_options():
    with pytest.raises(ValueError, match="level-4 takes no options"):
        make_bot("level-4", samples=100)


def moves(strategy: str, seed: int, profile: Profile) -> list:
    """Every action of `strategy` over four hands against `random`, checking each is legal and
    chosen from the seat's own observation."""
    bot, other = make_bot(strategy), make_bot("random")
    actions = []
    for deal in range(4):
        hand = Hand(deck_for(seed, deal), deal % 2, profile)
        rngs = (random.Random(f"{seed}:{deal}:0"), random.Random(f"{seed}:{deal}:1"))
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            assert type(obs) is Observation and obs.to_act == obs.seat
            action = (bot if seat == 0 else other).choose(obs, rngs[seat])
            assert action in obs.legal_actions
            if seat == 0:
                actions.append(action)
            hand.apply(seat, action)
    return actions


@pytest.mark.parametrize("profile", list(Profile))
@pytest.mark.parametrize("strategy", [lv.strategy for lv in LEVELS])
def test_each_level_is_legal_and_deterministic_from_a_seed(strategy, profile):
    first = moves(strategy, 7, profile)
    assert len(first) >= 8
    assert moves(strategy, 7, profile) == first
    assert moves(strategy, 8, profile) != first  # another seed, another game


@pytest.mark.parametrize("number", sorted(ORDERING_DEALS))
def test_each_level_beats_the_one_below(number):
    lower, upper = LEVELS[number - 1], LEVELS[number]
    deals = ORDERING_DEALS[number]
    bot_a, bot_b = make_bot(upper.strategy), make_bot(lower.strategy)
    totals = Totals()
    for deal in range(deals):
        pair = play_pair(bot_a, bot_b, seed=3100 + number, deal=deal)
        totals.add_pair(pair.net, pair.wins_a, pair.points_a, pair.points_b)
    s = summary(totals)
    low, high = s["net_per_deal_ci"]
    assert low > 0, (f"{upper.strategy} vs {lower.strategy} over {deals} deals: net "
                     f"{s['net_per_deal']:+.2f} game points per deal, 95% [{low:+.2f}, "
                     f"{high:+.2f}]")
