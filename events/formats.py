"""The formats of an event and their schedules (every pairing a duplicate pair).

- `round-robin`: every bot meets every other once; `double-round-robin`: twice, the second
  cycle on new deals with the roles of bot a and bot b swapped. Berger tables (the circle
  method): n - 1 rounds for an even field, n for an odd one, where each bot sits one round out
  (not scored: everyone rests once).
- `swiss`: `rounds` rounds (1 to n - 1), each paired from the standings so far
  (`events.swiss`).
- `gauntlet`: the first bot of the field meets each of the others once, one per round.

A pairing's seed comes from the event's seed, its round and its board (`pair_seed`), so an
event is replayed from its seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import NamedTuple

ROUND_ROBIN = "round-robin"
DOUBLE_ROUND_ROBIN = "double-round-robin"
SWISS = "swiss"
GAUNTLET = "gauntlet"
FORMATS = (ROUND_ROBIN, DOUBLE_ROUND_ROBIN, SWISS, GAUNTLET)
SCHEDULED = (ROUND_ROBIN, DOUBLE_ROUND_ROBIN, GAUNTLET)  # every round known from the start
MIN_BOTS = 2
MAX_BOTS = 64
SEED_BITS = 62


class Pairing(NamedTuple):
    """One duplicate pair of a round: bot `a` sits in seat 0 of its first leg."""

    round: int  # from 1
    board: int  # from 1, within the round
    a: int
    b: int


def total_rounds(format: str, bots: int, rounds: int | None = None) -> int:
    """How many rounds an event of `format` over `bots` bots has (`rounds`: Swiss only)."""
    check(format, list(range(bots)), rounds)
    if format == SWISS:
        assert rounds is not None
        return rounds
    if format == GAUNTLET:
        return bots - 1
    cycle = bots - 1 if bots % 2 == 0 else bots
    return 2 * cycle if format == DOUBLE_ROUND_ROBIN else cycle


def check(format: str, bots: Sequence[int], rounds: int | None = None) -> None:
    """ValueError naming what is wrong with an event of `format` over `bots` (ids, in order)
    with `rounds` (Swiss only)."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: one of {', '.join(FORMATS)}")
    if len(set(bots)) != len(bots):
        raise ValueError("a bot is named twice in the field: name each bot once")
    if not MIN_BOTS <= len(bots) <= MAX_BOTS:
        raise ValueError(f"an event needs {MIN_BOTS} to {MAX_BOTS} bots, not {len(bots)}")
    if format == SWISS:
        if rounds is None:
            raise ValueError("a Swiss event needs its number of rounds (--rounds)")
        if not 1 <= rounds <= len(bots) - 1:
            raise ValueError(f"a Swiss event of {len(bots)} bots has 1 to {len(bots) - 1} "
                             f"rounds (so that no pairing need repeat), not {rounds}")
    elif rounds is not None:
        raise ValueError(f"--rounds is for Swiss events: a {format} has its rounds from its "
                         "field")


def schedule(format: str, bots: Sequence[int]) -> list[Pairing]:
    """Every pairing of a scheduled format (round-robin, double round-robin, gauntlet), in
    order of round and board."""
    check(format, bots)
    if format == GAUNTLET:
        first, *rest = bots
        return [Pairing(r, 1, first, other) if r % 2 else Pairing(r, 1, other, first)
                for r, other in enumerate(rest, start=1)]
    if format == SWISS:
        raise ValueError("a Swiss event is paired round by round (events.swiss)")
    once = berger(bots)
    if format == ROUND_ROBIN:
        return once
    later = len({p.round for p in once})
    return once + [Pairing(p.round + later, p.board, p.b, p.a) for p in once]


def berger(bots: Sequence[int]) -> list[Pairing]:
    """A single round-robin by the circle method: one bot stays, the others turn one place a
    round. With an odd field a placeholder joins; who meets it sits the round out. Who is bot
    a is balanced (`balance`)."""
    field: list[int | None] = list(bots)
    if len(field) % 2:
        field.append(None)
    n = len(field)
    out = []
    for r in range(n - 1):
        order = [field[0], *(field[1:][(i - r) % (n - 1)] for i in range(n - 1))]
        board = 0
        for i in range(n // 2):
            x, y = order[i], order[n - 1 - i]
            if x is None or y is None:
                continue
            board += 1
            out.append(Pairing(r + 1, board, x, y))
    return balance(out)


def balance(pairings: Sequence[Pairing], counts: dict[int, int] | None = None
            ) -> list[Pairing]:
    """`pairings` (in order) with bot a chosen as the one of each pair that was bot a less
    often so far (`counts`, updated; on a tie the first named), so that each bot is bot a in
    about half its pairs (bot a plays seat 0 first; both play both seats either way)."""
    counts = {} if counts is None else counts
    out = []
    for p in pairings:
        a, b = (p.a, p.b) if counts.get(p.a, 0) <= counts.get(p.b, 0) else (p.b, p.a)
        counts[a] = counts.get(a, 0) + 1
        out.append(Pairing(p.round, p.board, a, b))
    return out


def pair_seed(event_seed: int, round_: int, board: int) -> int:
    """The seed of the pair on `board` of `round_`: from the event's seed (BLAKE2b, as the
    engine's deals), independent for every pair."""
    digest = hashlib.blake2b(f"bummerl-event:{event_seed}:{round_}:{board}".encode(),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - SEED_BITS)
