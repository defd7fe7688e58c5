"""A bot that spins the CPU for ever at its first turn: bench/hosted.py hosts it beside a remote
bot (the `slow` attack of tests/hosting/bots/hostile.py, on its own). Its match forfeits on
time; its container keeps spinning, held to its CPU quota (hosting.sandbox.Limits), until it
is stopped."""

from __future__ import annotations

from bummerl_kit import Bot, engine


class SpinBot(Bot):
    def act(self, observation: engine.Observation) -> engine.Action:
        while True:  # never answers
            pass
