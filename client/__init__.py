"""The bot-author kit: subclass `Bot`, implement `act(observation) -> action`, then `run()` it.

    from client import Bot, run

    class MyBot(Bot):
        def act(self, observation):
            return observation.legal_actions[0]

    run(MyBot(), server="127.0.0.1:50051", token="...")

Or from the shell: `python -m client examples.random_bot:RandomBot --token ...`.
"""

from client.bot import Bot
from client.runner import Backoff, Runner, run

__all__ = ["Backoff", "Bot", "Runner", "run"]
