"""The deals a seat cannot tell apart: every placement of the cards it has not seen that agrees
with its observation (R10), enumerated when there are few, else sampled.

Everything here reads an `Observation` only, never a `Hand`: what the analysis of a decision
can use is what the deciding seat knew. The sampling seed is derived from the observation
alone (`seed_of`), so every deal consistent with one observation gives the same analysis.

A deal agrees with the observation when the opponent holds every card it was shown to hold
(`Observation.known_opponent_cards`: marriages, exchanges, the trump card on the last draw) and
none strict play says it cannot hold (`Observation.ruled_out_cards`, R3.4); the other unseen
cards are spread over its hand and the face-down stock in every way. With the stock closed or
exhausted nobody draws again, so only the opponent's hand matters (the stock's order is not
part of a deal).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from itertools import combinations, islice, permutations
from math import comb, factorial

from engine import Card, Hand, Observation


def seed_of(obs: Observation) -> int:
    """A sampling seed from the observation alone (the same for every consistent deal)."""
    text = json.dumps(obs.to_dict(), sort_keys=True)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def is_strict(obs: Observation) -> bool:
    """The stock is closed or exhausted: nobody draws again (R3.4)."""
    return obs.closed_by is not None or obs.stock_size == 0


class Deals:
    """The consistent deals of one observation: `count` of them; `hands()` yields them all
    (when `count <= limit`) or `samples` drawn uniformly with the observation's seed."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        self.known = sorted(obs.known_opponent_cards())
        free = sorted(obs.unseen_cards() - set(self.known))
        barred = obs.ruled_out_cards()
        self.allowed = [c for c in free if c not in barred]
        self.barred = [c for c in free if c in barred]
        self.need = obs.opponent_hand_size - len(self.known)
        self.face_down = obs.stock_size - 1 if obs.stock_size else 0
        if self.need < 0 or self.need > len(self.allowed) or (
                len(self.allowed) - self.need + len(self.barred) != self.face_down):
            raise ValueError("the observation is inconsistent: cannot place the unseen cards")
        self.hands_count = comb(len(self.allowed), self.need)
        orders = 1 if is_strict(obs) else factorial(self.face_down)
        self.count = self.hands_count * orders

    def opponent_hands(self) -> Iterator[tuple[Card, ...]]:
        """Every hand the opponent could hold, in a fixed order."""
        for chosen in combinations(self.allowed, self.need):
            yield (*self.known, *chosen)

    def _hand(self, opponent: tuple[Card, ...], face_down: list[Card]) -> Hand:
        obs = self.obs
        # The stock top card first: the last face-down card is drawn first, the trump card last.
        stock = [*reversed(face_down), obs.trump_card] if obs.stock_size else []
        holdings = (obs.hand, opponent) if obs.seat == 0 else (opponent, obs.hand)
        return Hand.from_position(
            obs.profile, obs.dealer, holdings, stock, obs.trump_card, obs.leader, obs.to_act,
            obs.lead_card, obs.tricks, obs.marriages, obs.exchanges, obs.closed_by,
            obs.closed_after)

    def all(self) -> Iterator[Hand]:
        """Every consistent deal (the stock in every order while it is open)."""
        for opponent in self.opponent_hands():
            rest = [c for c in self.allowed if c not in opponent] + self.barred
            if is_strict(self.obs):
                yield self._hand(opponent, rest)
            else:
                for order in permutations(rest):
                    yield self._hand(opponent, list(order))

    def one_per_opponent_hand(self) -> Iterator[Hand]:
        """A deal for every hand the opponent could hold (the stock in one fixed order)."""
        for opponent in self.opponent_hands():
            rest = [c for c in self.allowed if c not in opponent] + self.barred
            yield self._hand(opponent, rest)

    def sample(self, n: int, rng: random.Random) -> list[Hand]:
        """`n` deals drawn uniformly (with replacement)."""
        out = []
        for _ in range(n):
            chosen = rng.sample(self.allowed, self.need)
            rest = [c for c in self.allowed if c not in chosen] + self.barred
            rng.shuffle(rest)
            out.append(self._hand((*self.known, *chosen), rest))
        return out

    def hands(self, limit: int, samples: int, rng: random.Random) -> tuple[list[Hand], bool]:
        """All deals when there are at most `limit`, else `samples` drawn; and whether all."""
        if self.count <= limit:
            return list(islice(self.all(), limit)), True
        return self.sample(samples, rng), False
