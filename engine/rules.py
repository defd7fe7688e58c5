"""Names and numbers that the rules fix: profiles (R9), hand reasons (R8.6), targets."""

from __future__ import annotations

from enum import StrEnum


class Profile(StrEnum):
    """A rules profile (R9.2, R9.3). Never mixed within one match."""

    SOFT = "soft"
    SHARP = "sharp"


class Reason(StrEnum):
    """Why a hand ended the way it did (R8.6)."""

    CLAIM = "claim"
    FALSE_CLAIM = "false_claim"
    CLOSER_CLAIM = "closer_claim"
    CLOSER_FAILED = "closer_failed"
    LAST_TRICK = "last_trick"


WINNING_POINTS = 66  # R7.2
HALF_POINTS = 33  # R8.1, R8.3: "fewer than 33 points"
MATCH_POINTS = 7  # R9.1: both players start at 7 game points
