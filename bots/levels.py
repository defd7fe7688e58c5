"""The house opponents for every level (`level-1` … `level-5`): each an existing strategy with the
fixed options of its row in `events.levels.LEVELS` (the table, with descriptions and measured
ratings, lives there so the web can read it without importing the workers)."""

from __future__ import annotations

import random

from bots.base import Bot
from bots.bully import BullyBot
from bots.champion import ChampionBot
from bots.random_bot import RandomBot
from bots.rdeep import RdeepBot
from engine import Action, Observation
from events.levels import LEVELS, Level

BASES: dict[str, type[Bot]] = {"random": RandomBot, "bully": BullyBot, "rdeep": RdeepBot,
                               "champion": ChampionBot}


class LevelBot(Bot):
    """A level: its base strategy built with the level's options (`options` passed here are
    refused: a level is its table row, so a level's rating stays true)."""

    level: Level

    def __init__(self, **options: object) -> None:
        if options:
            raise ValueError(f"{self.level.strategy} takes no options (got "
                             f"{', '.join(sorted(options))}); its options are fixed in "
                             "events/levels.py")
        self.bot = BASES[self.level.base](**self.level.options)  # type: ignore[arg-type]

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        return self.bot.choose(observation, rng, deadline)


def _level_class(level: Level) -> type[LevelBot]:
    return type(f"Level{level.number}Bot", (LevelBot,),
                {"level": level, "name": level.strategy,
                 "__doc__": f"Level {level.number} ({level.name}): {level.description}"})


LEVEL_BOTS: dict[str, type[Bot]] = {level.strategy: _level_class(level) for level in LEVELS}
