"""Batch play in-process with the engine: duplicate pairs, no gRPC, no database.

Deal `i` of a simulation with seed `s` is the deck `deck_for(s, i)` with dealer `i % 2`. It is
played twice: first with bot A in seat 0 and bot B in seat 1, then with the seats swapped, so
each bot gets exactly the cards the other had (card luck cancels). Every random choice of a bot
comes from an rng seeded by (seed, deal, play, seat), so a chunk played twice gives the same
numbers: a re-run chunk (after a crash) changes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from bots import Bot, make_bot
from bots.stats import Totals
from engine import Hand, HandResult, Profile, deck_for, observe


@dataclass(frozen=True)
class PairResult:
    """One duplicate pair, from bot A's side."""

    deal: int
    points_a: int  # game points A won over both plays
    points_b: int
    wins_a: int  # hands A won: 0, 1 or 2

    @property
    def net(self) -> int:
        return self.points_a - self.points_b


def play_hand(deck: list, dealer: int, profile: Profile, bots: tuple[Bot, Bot],
              rngs: tuple[random.Random, random.Random],
              watch: Callable[[Hand], None] | None = None) -> HandResult:
    """Play one hand between `bots` (seat 0, seat 1); each sees only its own observation.
    `watch`, if given, is handed the hand in play first (a measuring bench's hook: the bots
    still get only their observations)."""
    hand = Hand(deck, dealer, profile)
    if watch is not None:
        watch(hand)
    while True:
        seat = hand.to_act
        if seat is None:
            break
        action = bots[seat].choose(observe(hand, seat), rngs[seat])
        hand.apply(seat, action)
    assert hand.result is not None
    return hand.result


def rngs(seed: int, deal: int, play: int) -> tuple[random.Random, random.Random]:
    """The two seats' generators of play `play` (0, 1) of deal `deal` of seed `seed`."""
    return (random.Random(f"batch:{seed}:{deal}:{play}:0"),
            random.Random(f"batch:{seed}:{deal}:{play}:1"))


def play_pair(bot_a: Bot, bot_b: Bot, seed: int, deal: int,
              profile: Profile = Profile.SOFT,
              watch: Callable[[Hand], None] | None = None) -> PairResult:
    """Play deal `deal` twice, seats swapped; the result from A's side (`watch`: as
    `play_hand`'s)."""
    deck = deck_for(seed, deal)
    dealer = deal % 2
    first = play_hand(deck, dealer, profile, (bot_a, bot_b), rngs(seed, deal, 0), watch)
    second = play_hand(deck, dealer, profile, (bot_b, bot_a), rngs(seed, deal, 1), watch)
    points = [0, 0]  # [A, B]
    wins_a = 0
    for result, seat_of_a in ((first, 0), (second, 1)):
        if result.winner == seat_of_a:
            points[0] += result.game_points
            wins_a += 1
        else:
            points[1] += result.game_points
    return PairResult(deal, points[0], points[1], wins_a)


def play_deals(strategy_a: str, strategy_b: str, seed: int, first: int, count: int,
               profile: Profile | str = Profile.SOFT) -> Totals:
    """Play deals `first` .. `first + count - 1` as duplicate pairs; their summed totals."""
    bot_a, bot_b = make_bot(strategy_a), make_bot(strategy_b)
    profile = Profile(profile)
    totals = Totals()
    for deal in range(first, first + count):
        pair = play_pair(bot_a, bot_b, seed, deal, profile)
        totals.add_pair(pair.net, pair.wins_a, pair.points_a, pair.points_b)
    return totals
