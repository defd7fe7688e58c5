"""The ISMCTS variant of the champion (kept to compare the two searches): it finds known best
moves, keeps its budget, is deterministic with an iteration budget, and plays well enough that
the comparison in bench/strength.py means something."""

from __future__ import annotations

import random
import time

from test_champion import winning_close_hand

from bots import IsmctsBot, make_bot
from bots.batch import play_pair
from bots.ismcts import Node
from engine import Action, Hand, Profile, deck_for, observe


def fixed(iterations: int = 60) -> IsmctsBot:
    return IsmctsBot(ms=0, samples=iterations)


def test_a_winning_close_is_found():
    """Closing wins 3 game points on every deal (see test_champion): the tree finds it."""
    obs = observe(winning_close_hand(), 1)
    assert fixed(300).choose(obs, random.Random(2)) is Action.close()


def test_unvisited_actions_come_first_then_ucb():
    fresh, good, bad = Node(), Node(), Node()
    for node, total in ((good, 20.0), (bad, -20.0)):
        node.visits, node.total, node.avail = 10, total, 30
    assert fresh.score() == float("inf")
    assert good.score() > bad.score()
    before = bad.score()
    bad.avail = 10**6  # an action seldom tried while legal gains exploration
    assert bad.score() > before


def test_deterministic_with_an_iteration_budget():
    first = [play_pair(fixed(20), make_bot("bully"), seed=5, deal=d, profile=Profile.SOFT)
             for d in range(2)]
    again = [play_pair(fixed(20), make_bot("bully"), seed=5, deal=d, profile=Profile.SOFT)
             for d in range(2)]
    assert first == again


def test_time_budget_is_kept():
    bot = IsmctsBot(ms=40)
    hand = Hand(deck_for(13, 0), 0)
    slowest = 0.0
    while not hand.is_over:
        obs = observe(hand, hand.to_act)
        start = time.process_time()
        action = bot.choose(obs, random.Random(0))
        slowest = max(slowest, time.process_time() - start)
        hand.apply(hand.to_act, action)
    assert slowest < 0.12  # its own CPU time within 3x the budget (a shared machine)


def test_beats_bully():
    net = 0
    for deal in range(10):
        net += play_pair(fixed(40), make_bot("bully"), seed=31, deal=deal).net
    assert net > 0
