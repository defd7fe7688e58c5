"""The house opponents for every level: a pure table (no imports of the project), so the web, the
workers and the command line read the same facts. It lives in `events/`, the pure low package
every layer may import (`db/` would pull in SQLAlchemy and every table for a lookup).

Each level is a house strategy (`level-1` … `level-5`, the `bots.house_strategy` of the house bot
`house-level-N`) built from an existing strategy of `bots` with fixed options and no
clock (a sample budget, not a time budget), so it plays the same from the same seed on any
machine. `rating` is the level's Elo from a round-robin of all levels on duplicate deals (level 1
anchored at 0; `measured_by` is the command that printed it; `games` the hands it rests on).

Read it with `level_for_strategy(bot.house_strategy)` (None for a bot that is not a level).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Level:
    number: int  # 1 (weakest) … 5 (strongest)
    name: str  # a short title for the play page
    strategy: str  # the house strategy name (bots.house_strategy)
    base: str  # the strategy of bots it plays with
    options: dict[str, object] = field(default_factory=dict)  # the base's constructor options
    description: str = ""  # one line: how it plays
    rating: float | None = None  # measured Elo, level 1 = 0 (see MEASURED_BY)

    @property
    def bot_name(self) -> str:
        """The name of its house bot."""
        return f"house-{self.strategy}"


# The round-robin the ratings come from: every pair of levels on the same 200 duplicate deals
# (seed 31), 4,000 hands; the Elo fit's 95 % half-widths are 36–43 for levels 2–5 (measured
# 2026-12-03, 900 s on the loaded 2-core machine; the levels play without a clock, so the command
# gives the same games and figures on any machine).
MEASURED_BY = "nice -n 19 .venv/bin/python bench/levels.py -n 200 --minutes 40 --procs 2"
MEASURED_GAMES = 4000

LEVELS: tuple[Level, ...] = (
    Level(1, "Beginner", "level-1", "random", {},
          "Plays a random legal action: random cards, random closings, false claims.",
          rating=0),
    Level(2, "Novice", "level-2", "bully", {},
          "Plays its highest trump, else follows suit high; claims when right, never closes "
          "or declares.", rating=255),
    Level(3, "Casual", "level-3", "rdeep", {"samples": 2},
          "Tries each legal action on 2 random deals of the unseen cards, played out with "
          "random cards, and keeps the best.", rating=495),
    Level(4, "Club", "level-4", "rdeep", {"samples": 12},
          "Tries each legal action on 12 random deals of the unseen cards, played out with "
          "random cards, and keeps the best.", rating=606),
    # (no pruning: the level plays as when it was rated, before the champion's pruning)
    Level(5, "Expert", "level-5", "champion", {"ms": 0, "samples": 32, "prune": False},
          "The champion's search on 32 sampled deals a move: playouts while the stock is open, "
          "the exact solver once it is closed or exhausted.", rating=697),
)

BY_STRATEGY = {level.strategy: level for level in LEVELS}


def level_for_strategy(strategy: str | None) -> Level | None:
    """The level whose house strategy is `strategy`, or None."""
    return BY_STRATEGY.get(strategy or "")
