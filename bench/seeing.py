"""What a bench's seeing champion is given in place of the deals `ChampionBot.deal` draws
(bench/vu.py and bench/strength.py, `--see-all` and `--see-hand`). Measuring tools, never a
house bot's setting: the gap between the fair champion and a seeing one is what the hidden cards
cost its search.

- `all`: the hand in play itself, every card where it is, the stock's order included.
- `hand`: the opponent's true hand, with the face-down stock in an order drawn anew for each
  deal (the face-up trump card stays the last one drawn). No player can know the stock's order,
  so this is the most that inferring the opponent's hand from its play could give the search.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable

from bots.champion import ChampionBot
from engine import Hand, Observation

SIGHTS = {"all": "seeing every card", "hand": "seeing the opponent's hand"}


def add_sight_options(parser: argparse.ArgumentParser) -> None:
    """`--see-all` and `--see-hand` (one at most), read as `args.see`: "all", "hand" or ""."""
    sight = parser.add_mutually_exclusive_group()
    sight.add_argument("--see-all", dest="see", action="store_const", const="all", default="",
                       help="give the champion's search the true deal (it sees every card: not "
                            "a fair player, the bound of its search)")
    sight.add_argument("--see-hand", dest="see", action="store_const", const="hand",
                       help="give it the opponent's true hand, not the stock's order (the most "
                            "that inferring the opponent's hand could give it)")


def give_sight(bot: ChampionBot, hand_in_play: Callable[[], Hand], see: str) -> None:
    """Make `bot`'s search draw its deals from `hand_in_play()` as `see` (a key of SIGHTS)
    says."""
    if see not in SIGHTS:
        raise ValueError(f"see must be one of {', '.join(SIGHTS)}, not {see!r}")

    def deal(obs: Observation, rng: random.Random, excluded: int,
             answers: list[tuple[int, int]] | None) -> Hand:
        hand = hand_in_play().copy()
        if see == "hand":
            below = hand._stock[1:]  # _stock[0] is the face-up trump card, drawn last
            rng.shuffle(below)
            hand._stock[1:] = below
        return hand

    bot.deal = deal  # type: ignore[method-assign]
