"""bench/seeing.py: what the benches' seeing champions are given (`--see-all`, `--see-hand`)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from bots.champion import ChampionBot
from engine import Hand, deck_for, observe

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def seeing():
    spec = importlib.util.spec_from_file_location("bench_seeing", ROOT / "bench" / "seeing.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_seeing"] = module
    spec.loader.exec_module(module)
    return module


def drawn(seeing, see: str, hand: Hand, times: int) -> list[Hand]:
    bot = ChampionBot(ms=0, samples=1)
    seeing.give_sight(bot, lambda: hand, see)
    obs, rng = observe(hand, 0), random.Random(5)
    return [bot.deal(obs, rng, 0, None) for _ in range(times)]


def test_see_all_gives_the_hand_in_play(seeing):
    hand = Hand(deck_for(3, 1), dealer=1)
    for deal in drawn(seeing, "all", hand, 3):
        assert deal is not hand
        assert deal._hands == hand._hands and deal._stock == hand._stock


def test_see_hand_gives_both_hands_but_not_the_stocks_order(seeing):
    hand = Hand(deck_for(3, 1), dealer=1)
    before = hand._stock[:]
    deals = drawn(seeing, "hand", hand, 20)
    for deal in deals:
        assert deal._hands == hand._hands
        assert sorted(deal._stock) == sorted(hand._stock)
        assert deal._stock[0] == hand._stock[0]  # the face-up trump card is still drawn last
    assert len({tuple(d._stock) for d in deals}) > 10  # an order of its own for each deal
    assert hand._stock == before  # the hand in play is untouched


def test_an_unknown_sight_is_refused(seeing):
    with pytest.raises(ValueError, match="see must be one of all, hand, not 'stock'"):
        seeing.give_sight(ChampionBot(ms=0, samples=1), lambda: None, "stock")
