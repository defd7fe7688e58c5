"""A hosted bot whose every turn raises: its validation fails with the traceback's lines."""

from bummerl_kit import Bot, engine


class Raising(Bot):
    def act(self, observation: engine.Observation) -> engine.Action:
        return {}["no such key"]
