"""The engine's one error type: an action the state does not allow (R11.1)."""

from __future__ import annotations


class IllegalActionError(ValueError):
    """An action was rejected; the state is unchanged.

    `rule` is the id from RULES.md that the action breaks (`"R3.4"`), `reason` says what is wrong
    in words a person can act on.
    """

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule} {reason}")
        self.rule = rule
        self.reason = reason
