"""The Swiss pairing of one round: score groups, no repeated pairing while another is possible,
a bye for an odd field, bot a balanced.

A round is a maximum-weight perfect matching (Edmonds' blossom algorithm, networkx's
`max_weight_matching`) of the field, plus a placeholder when the field is odd (whoever meets it
has the bye). Each possible pairing costs, in this order of priority (each level outweighs
everything below it put together, so it is a strict order, not a trade):

1. a bye to a bot that already had one (only when every bot had one);
2. a repeat of a pairing already played (so a round repeats none while a round without
   repeats exists, and otherwise as few as possible);
3. the difference of the two bots' match points, squared (pairs within score groups, the
   fewest and shortest floats between groups); a bye costs its bot's points squared (the
   lowest score group has it);
4. the seats: two bots that were both bot a more often than bot b (or both less) cost the
   smaller of their two imbalances, capped at 2 (one of them must take the seat it had more
   often), so seats stay balanced where the score groups allow;
5. within a score group, the Dutch rule: the top half meets the bottom half (first against
   first of the lower half, and so on); the bye goes to the lowest-placed bot of its group.

Which bot of a pair is bot a (seat 0 of the first leg) goes to the one whose seat balance
(times bot a minus times bot b) is lower. Deterministic: the same field, scores and history
give the same round.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

import networkx as nx

BYE = -1  # the placeholder of an odd field
# The weights of the levels (see the docstring); a level's largest possible total, over a
# whole round of up to 64 bots, is below the weight of one unit of the level above.
TIE = 1
SEATS = 1 << 14  # > 33 pairs x 128 (the largest Dutch term)
SCORE = 1 << 28  # > 33 pairs x 2 (the largest seats term) x SEATS
REPEAT = 1 << 50  # > 33 pairs x 256**2 points' difference squared x SCORE
REBYE = 1 << 56  # > 33 pairs x REPEAT
BASE = 1 << 62  # every weight is positive


class Round(NamedTuple):
    """A round's pairings (bot a, bot b) in board order, and the bot with the bye, if any."""

    pairs: list[tuple[int, int]]
    bye: int | None


def pair_round(field: Sequence[int], points: Mapping[int, int],
               played: Collection[frozenset[int]], byes: Collection[int],
               a_counts: Mapping[int, int] | None = None) -> Round:
    """Pair one round of `field` (bot ids, best seed first: the order breaks ties of points).

    `points`: each bot's match points so far; `played`: the pairings already played (pairs of
    bot ids); `byes`: bots that had a bye; `a_counts`: each bot's seat balance, how often it
    was bot a minus how often bot b."""
    if len(set(field)) != len(field):
        raise ValueError("a bot is in the field twice")
    if len(field) < 2:
        return Round([], field[0] if field else None)
    a_counts = a_counts or {}
    seed_of = {bot: i for i, bot in enumerate(field)}
    # The standings: points, then seed. A bot's place in its score group decides the Dutch term.
    ranked = sorted(field, key=lambda bot: (-points.get(bot, 0), seed_of[bot]))
    groups: dict[int, list[int]] = {}
    for bot in ranked:
        groups.setdefault(points.get(bot, 0), []).append(bot)
    place = {bot: (i, len(group)) for group in groups.values() for i, bot in enumerate(group)}
    graph = nx.Graph()
    nodes = list(ranked) + ([BYE] if len(ranked) % 2 else [])
    graph.add_nodes_from(nodes)
    for i, x in enumerate(nodes):
        for y in nodes[i + 1:]:
            graph.add_edge(x, y, weight=BASE - cost(x, y, points, played, byes, place,
                                                    a_counts))
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    bye = None
    pairs = []
    for x, y in matching:
        if BYE in (x, y):
            bye = y if x == BYE else x
            continue
        pairs.append((x, y) if ranked.index(x) < ranked.index(y) else (y, x))
    pairs.sort(key=lambda pair: ranked.index(pair[0]))  # board 1: the leaders' pair
    return Round([seat_a(x, y, a_counts) for x, y in pairs], bye)


def cost(x: int, y: int, points: Mapping[int, int], played: Collection[frozenset[int]],
         byes: Collection[int], place: Mapping[int, tuple[int, int]],
         balance: Mapping[int, int] | None = None) -> int:
    """The cost of pairing x with y (y may be the bye placeholder): see the docstring."""
    if y == BYE or x == BYE:
        bot = x if y == BYE else y
        index, size = place[bot]
        return (REBYE if bot in byes else 0) + SCORE * points.get(bot, 0) ** 2 + \
            TIE * (size - 1 - index)
    total = REPEAT if frozenset((x, y)) in played else 0
    px, py = points.get(x, 0), points.get(y, 0)
    total += SCORE * (px - py) ** 2
    bx, by = (balance or {}).get(x, 0), (balance or {}).get(y, 0)
    if bx * by > 0:  # both had the same seat more often: one of them gets it again
        total += SEATS * min(2, abs(bx), abs(by))
    if px == py:  # the Dutch rule within the group: i meets i + half
        (ix, size), (iy, _) = place[x], place[y]
        total += TIE * abs(abs(ix - iy) - size // 2)
    return total


def seat_a(x: int, y: int, a_counts: Mapping[int, int]) -> tuple[int, int]:
    """(bot a, bot b): bot a is the one whose seat balance is lower (on a tie, `x`, the higher
    placed)."""
    return (x, y) if a_counts.get(x, 0) <= a_counts.get(y, 0) else (y, x)
