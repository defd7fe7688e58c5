"""bummerl-kit: write a Schnapsen bot in Python and play it on a bummerl server (docs/kit.md).

    from bummerl_kit import Bot

    class MyBot(Bot):
        def act(self, observation):
            return observation.legal_actions[0]

Then `bummerl-kit mybot.py:MyBot --server HOST:PORT --token TOKEN`, or from Python
`bummerl_kit.run(MyBot(), server="HOST:PORT", token="...")`. The rules engine is
`bummerl_kit.engine` (`Match`, `Observation`, `Action`, ...), the one the server runs.

In the server's repository this package re-exports client/ and engine/ (so a bot written for
the kit runs there too, e.g. with `bummerl bot run`); the kit's build (tools/kit.py) puts
client/, engine/ and the contracts under `bummerl_kit` itself.
"""

import engine
from client import Backoff, Bot, Runner, run
from engine import Action, Observation

__all__ = ["Action", "Backoff", "Bot", "Observation", "Runner", "engine", "run"]
