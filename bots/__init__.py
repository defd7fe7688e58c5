"""House bots: strategies the service plays itself. Each sees only an `Observation`.

`make_bot(name)` builds one from its strategy name (`random`, `bully`, `rdeep`, `champion`, and
`ismcts`, the champion with tree search instead of flat Monte Carlo, and `champion-v1`, the
champion's search before its per-move table and pruning, both kept for comparison), and
the house opponents for every level, `level-1` … `level-5` (`bots.levels`, their table
with descriptions and ratings in `events.levels`).

Pure computation over the engine (and the levels' table), no I/O but reading the champion's
opponent model beside its module: the workers play these on the site, the analyst uses the exact
endgame solver (`bots.endgame`), and the kit plays them locally. Beside the strategies:
`bots.batch` (duplicate deals played in-process), `bots.stats` (their statistics) and
`bots.practice` (an author's bot against a house bot, `bummerl bot test` and `bummerl-kit
practice`).
"""

from __future__ import annotations

from bots.base import Bot
from bots.bully import BullyBot
from bots.champion import ChampionBot, ChampionV1Bot
from bots.ismcts import IsmctsBot
from bots.levels import LEVEL_BOTS
from bots.random_bot import RandomBot
from bots.rdeep import RdeepBot

STRATEGIES: dict[str, type[Bot]] = {"random": RandomBot, "bully": BullyBot, "rdeep": RdeepBot,
                                     "champion": ChampionBot, "champion-v1": ChampionV1Bot,
                                     "ismcts": IsmctsBot, **LEVEL_BOTS}


def make_bot(name: str, **options: object) -> Bot:
    """The house bot for strategy `name`; `options` go to its constructor (e.g. rdeep samples)."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        known = ", ".join(sorted(STRATEGIES))
        raise ValueError(f"unknown house strategy {name!r} (known: {known})") from None
    return cls(**options)


__all__ = ["STRATEGIES", "Bot", "BullyBot", "ChampionBot", "IsmctsBot", "RandomBot", "RdeepBot",
           "make_bot"]
