"""A duplicate pair's score: two Bummerls from one seed with the seats swapped, scored as one
pairing (docs/events.md, "Scoring").

- Match points: the number of the two matches a bot won: 2 (won both), 1 (split), 0 (lost
  both); the two bots' points add up to 2.
- Game points of one match: its winner counts 7 (a Bummerl is won at 7, R9.1), its loser what
  it scored before the end (7 minus its counter, at most 6). A match won by the opponent's
  forfeit on time or illegal actions counts the same way: the winner 7, the loser what it had
  scored. A pair's game points are the sum over its two matches.
- A forfeited pair (a bot absent past its grace period, or withdrawn): the forfeiting bot gets
  0 match points and its opponent 2; neither gets game points (nothing was played, so the
  tie-breaks count only what was). Both forfeiting: 0 each.
"""

from __future__ import annotations

from typing import NamedTuple

MATCH_POINTS = 7  # a Bummerl is played down from 7 (R9.1)
FORFEIT_A = "a"
FORFEIT_B = "b"
FORFEIT_BOTH = "both"


class Leg(NamedTuple):
    """How one match of a pair ended: the winning seat and both counters (seat 0 first)."""

    winner: int
    counters: tuple[int, int]


class PairResult(NamedTuple):
    """A pair's score in its two bots' terms (bot a: seat 0 of leg 0, seat 1 of leg 1)."""

    points_a: int
    points_b: int
    game_points_a: int
    game_points_b: int
    forfeit: str | None = None  # FORFEIT_A, FORFEIT_B, FORFEIT_BOTH or None


def game_points(leg: Leg) -> tuple[int, int]:
    """Each seat's game points in one match: the winner 7, the loser what it scored."""
    scored = [min(MATCH_POINTS - 1, max(0, MATCH_POINTS - c)) for c in leg.counters]
    scored[leg.winner] = MATCH_POINTS
    return scored[0], scored[1]


def pair_result(leg_a: Leg, leg_b: Leg) -> PairResult:
    """The score of a pair from its two matches: `leg_a` with bot a in seat 0, `leg_b` with
    bot b in seat 0."""
    for leg in (leg_a, leg_b):
        if leg.winner not in (0, 1):
            raise ValueError(f"a leg's winner is seat 0 or 1, not {leg.winner!r}")
    wins_a = int(leg_a.winner == 0) + int(leg_b.winner == 1)
    gp_a0, gp_b0 = game_points(leg_a)
    gp_b1, gp_a1 = game_points(leg_b)
    return PairResult(wins_a, 2 - wins_a, gp_a0 + gp_a1, gp_b0 + gp_b1)


def forfeit_result(forfeit: str) -> PairResult:
    """The score of a pair forfeited by bot a, bot b or both."""
    if forfeit == FORFEIT_A:
        return PairResult(0, 2, 0, 0, FORFEIT_A)
    if forfeit == FORFEIT_B:
        return PairResult(2, 0, 0, 0, FORFEIT_B)
    if forfeit == FORFEIT_BOTH:
        return PairResult(0, 0, 0, 0, FORFEIT_BOTH)
    raise ValueError(f"who forfeits is 'a', 'b' or 'both', not {forfeit!r}")
