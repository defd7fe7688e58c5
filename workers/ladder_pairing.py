"""Who the ladder pairs next, and with whom: fair and informative (pure logic, no I/O; the
ladder's tick, `workers.ladder`, reads the inputs from the database).

Each bot free for a ladder match is a `Candidate`: its rating (mu, sigma) in the profile and
how long it has waited for a ladder match (`wait_s`: since its last ladder match in the
profile ended, or since it connected, was reinstated or ended its last event match, whichever
is latest). One pairing at a time:

1. **The bot to pair** is, first, a *starving* one: a remote bot that has waited `max_wait_s`
   or more, longest wait first. It is paired even when the profile already has its target of
   matches running (one extra match each): so no connected bot waits much longer than
   `max_wait_s` (plus one tick) while others play, as long as some opponent is free. Then,
   while the target is not reached, the bot with the highest *priority*: its uncertainty (sigma
   as a share of a new bot's, 1 for a new bot) plus its wait (as a share of `max_wait_s`, at
   most 1). So little-known bots and bots that waited long play first; each term counts
   about as much as the other.
2. **Its opponent** is drawn at random among the free bots it is not playing already and has
   not met `pair_cap` times in the last 24 hours (a cap of 0: none), with weight
   closeness × priority: closeness is exp(-(Δmu / 2β)²) with openskill's β (25/6), 1 for equal
   mu, 0.61 at Δmu = β·√2 (about 5.9), about 0.1 at 3β (12.5). Near ratings and uncertain
   opponents are preferred; the draw keeps the ladder from repeating one pairing.
3. **The cap bites only when another pair is free to play.** If no free pair is under the cap
   (every pair that could meet now has met `pair_cap` times in the last 24 hours), the same
   order is walked again with the pairs met the fewest times in place of those under it. So
   a small site (4 house and 2 remote bots: 15 pairs) keeps playing past the cap instead of
   going quiet once every pair reached it (issue 29), and on a larger one the cap still
   spreads the matches over the pairs.

A remote bot plays one ladder match at a time (it leaves the pool once paired); a house bot
stays in the pool (the workers play as many of its matches as asked).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

INITIAL_SIGMA = 25 / 3  # openskill's sigma of a new bot
BETA = 25 / 6  # openskill's beta: the spread of performance around a bot's mu


@dataclass(frozen=True)
class Candidate:
    """A bot free for a ladder match in a profile."""

    bot_id: int
    remote: bool
    mu: float
    sigma: float
    wait_s: float  # how long it has waited for a ladder match


def key(a: int, b: int) -> frozenset[int]:
    return frozenset((a, b))


def starving(c: Candidate, max_wait_s: float) -> bool:
    """A remote bot that waited `max_wait_s` or more: paired in this tick if any opponent is
    free, whatever the target."""
    return c.remote and c.wait_s >= max_wait_s


def priority(c: Candidate, max_wait_s: float) -> float:
    """Uncertainty (sigma over a new bot's) plus wait (over `max_wait_s`, at most 1)."""
    waited = min(1.0, c.wait_s / max_wait_s) if max_wait_s > 0 else 1.0
    return c.sigma / INITIAL_SIGMA + waited


def closeness(a: Candidate, b: Candidate) -> float:
    """1 for equal mu, falling off with the gap: exp(-(Δmu / 2β)²)."""
    return math.exp(-(((a.mu - b.mu) / (2 * BETA)) ** 2))


def order(pool: Iterable[Candidate], max_wait_s: float) -> list[Candidate]:
    """The bots in the order they are offered a match: starving ones first (longest wait
    first), then by priority (highest first); ties by bot id."""
    def rank(c: Candidate) -> tuple[int, float, int]:
        if starving(c, max_wait_s):
            return (0, -c.wait_s, c.bot_id)
        return (1, -priority(c, max_wait_s), c.bot_id)

    return sorted(pool, key=rank)


def opponents(c: Candidate, pool: Mapping[int, Candidate], playing: set[frozenset[int]],
              met: Mapping[frozenset[int], int], pair_cap: int) -> list[Candidate]:
    """The bots `c` may meet now: free, not playing it already, met fewer than `pair_cap`
    times in the last 24 hours (a cap of 0: none)."""
    return [o for o in pool.values()
            if o.bot_id != c.bot_id and key(c.bot_id, o.bot_id) not in playing
            and (pair_cap <= 0 or met.get(key(c.bot_id, o.bot_id), 0) < pair_cap)]



def next_pair(pool: Mapping[int, Candidate], playing: set[frozenset[int]],
              met: Mapping[frozenset[int], int], *, pair_cap: int, max_wait_s: float,
              room: bool, rng: random.Random) -> tuple[int, int] | None:
    """The next pairing (bot ids, seats drawn at random) from the free bots `pool`, or None:
    `playing` the pairs playing now (or tried in this tick), `met` the ladder matches of each
    pair in the last 24 hours; `room`: the profile is under its target (else only a starving
    bot is paired). The cap holds while some free pair is under it (rule 3)."""
    ranked = order(pool.values(), max_wait_s)
    caps = [pair_cap]
    for cap in caps:
        fewest: int | None = None  # the fewest meetings of a capped pair walked past
        for c in ranked:
            if not room and not starving(c, max_wait_s):
                break  # the rest are neither starving nor wanted
            choices = opponents(c, pool, playing, met, cap)
            if not choices:
                if cap == pair_cap > 0:
                    for o in opponents(c, pool, playing, met, 0):  # free, all at the cap
                        times = met.get(key(c.bot_id, o.bot_id), 0)
                        fewest = times if fewest is None else min(fewest, times)
                continue
            weights = [max(1e-9, closeness(c, o) * priority(o, max_wait_s)) for o in choices]
            other = rng.choices(choices, weights=weights)[0]
            return (c.bot_id, other.bot_id) if rng.random() < 0.5 else (other.bot_id, c.bot_id)
        if fewest is not None:  # no free pair under the cap: the pairs met fewest (rule 3)
            caps.append(fewest + 1)
    return None
