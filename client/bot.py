"""The class a bot author subclasses."""

from __future__ import annotations

from typing import Any

import engine


class Bot:
    """A Schnapsen bot. Override `act`; the other methods are optional notifications.

    `act` gets an `engine.Observation` (what your seat may know, RULES.md §10) whose
    `legal_actions` lists what you may do, and returns one of them (an `engine.Action` or its
    text, like "play TH"). It is called once per turn, possibly for several matches in turn;
    `observation` carries no match id because the choice should depend on the game only.

    `version`: which version of the bot this is (a free string such as "1.4.0" or a git hash,
    at most 100 characters), said to the service when the kit connects (`Hello.version`); each
    match records the version each seat ran, and the dashboard shows each version's record.
    `bummerl bot run --version V` overrides it; empty: none said.
    """

    version: str = ""

    def act(self, observation: engine.Observation) -> engine.Action | str:
        raise NotImplementedError("override Bot.act(observation) -> action")

    def hand_ended(self, match_id: int, hand_number: int, result: dict[str, Any]) -> None:
        """A hand of one of your matches ended; `result` is like HandResult.to_dict()."""

    def match_ended(self, match_id: int, won: bool, detail: str) -> None:
        """One of your matches ended; `detail` says how (e.g. a forfeit and why)."""
