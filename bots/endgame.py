"""An exact solver for Schnapsen endgames: the stock exhausted or closed, every card's place known.

Once the stock is exhausted or closed nobody draws, strict play applies (R3.4) and, when both
hands are known, the rest of the hand is a perfect-information game. `Solver` searches it to the
end with alpha-beta, a transposition table and move ordering, and scores it in **game points**
(R8: claims, false claims, marriages, the closer's obligations), not card points.

The state is compact: each hand is a 20-bit card mask (bit `Card.index`), points are ints, and
the search is negamax from the seat on lead, one node per trick (the lead and the answer). Two
choices the rules leave to the player are folded in where one option dominates, without
changing the value:
- leading the king or queen of a marriage one may declare: declaring first is never worse (more
  points never lower one's own game points, R5.5 / R8), so the search always declares then;
- claiming: the claim is tried with and without the best marriage one may declare first (R7.1).
False claims are searched like any other action: with a closed stock one can lose less by a
false claim than by letting the closer succeed (R8.2 vs R8.3).

`Position` is the solver's view of one hand (built from an engine `Hand`); `action_values` gives
the value of each engine action at the root, for the bot. The brute-force test in
tests/workers/test_endgame.py checks that the values equal a plain minimax over the engine itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from engine import Action, ActionKind, Hand
from engine.cards import ALL_CARDS
from engine.rules import HALF_POINTS, WINNING_POINTS

POINTS = tuple(c.points for c in ALL_CARDS)
SUIT_MASK = tuple(0b11111 << (5 * s) for s in range(4))
# Cards of the same suit that beat card i (a lower rank number is a higher card).
HIGHER = tuple(((1 << (i % 5)) - 1) << (5 * (i // 5)) for i in range(20))
KING, QUEEN = 2, 3
MARRIAGE = tuple((1 << (5 * s + KING)) | (1 << (5 * s + QUEEN)) for s in range(4))
KINGS = sum(1 << (5 * s + KING) for s in range(4))  # `h & (h >> 1) & KINGS`: the marriages held
ANSWER_CACHE_MAX = 25_000  # entries per trump suit before the answer cache is cleared (~5 MB)
INF = 99
WORST, BEST = -3, 3  # game points of a hand lie in [-3, 3] (R8): search windows start here


class SearchTimeout(Exception):
    """The deadline passed inside a search; its partial result is thrown away."""


def _beats(lead: int, follow: int, trump: int) -> bool:
    """Does `follow` win the trick against `lead` (R3.1)?"""
    if follow // 5 == lead // 5:
        return follow % 5 < lead % 5
    return follow // 5 == trump


# Per trump suit: does the follower win (`[lead * 20 + follow]`), and caches of ordered cards.
_WINS = tuple(tuple(_beats(lead, f, t) for lead in range(20) for f in range(20))
              for t in range(4))
_LEAD_ORDER = tuple(tuple(sorted(range(20), key=lambda i: (i // 5 != t, -POINTS[i])))
                    for t in range(4))
_ORDERED: tuple[dict[int, tuple[int, ...]], ...] = ({}, {}, {}, {})
_ANSWERS: tuple[dict[int, tuple[int, ...]], ...] = ({}, {}, {}, {})


def follow_mask(hand: int, lead: int, trump: int) -> int:
    """The cards of `hand` strict play allows in answer to `lead` (R3.4)."""
    same = hand & SUIT_MASK[lead // 5]
    if same:
        return (same & HIGHER[lead]) or same
    return (hand & SUIT_MASK[trump]) or hand


@dataclass(frozen=True)
class Position:
    """One hand in the strict phase, every card known, from seat 0's and seat 1's side alike.

    `closer` is the seat that closed (None if the stock ran out); `close_position` is the
    closer's opponent's points and whether it had won a trick, when closing (R6.3).
    `declared` is the suit whose marriage was declared on the lead under way (-1 if none).
    """

    trump: int
    hands: tuple[int, int]
    card_points: tuple[int, int]
    marriage_points: tuple[int, int]
    tricks_won: tuple[int, int]
    to_act: int
    leader: int
    lead: int  # the card led in the trick under way, or -1
    declared: int
    closer: int | None
    close_position: tuple[int, bool] | None
    started: bool  # a trick has been played in this hand (claims are legal, R7.1)
    sharp: bool

    @staticmethod
    def from_hand(hand: Hand) -> Position:
        """The position of an engine hand in its strict phase (stock exhausted or closed).

        Reads the hand's state directly: the solver runs on a referee's (or a sampled) hand.
        """
        if not hand.is_strict or hand.to_act is None:
            raise ValueError("the solver needs a hand under way with the stock exhausted or closed")
        return Position(
            trump=hand._trump, hands=(hand._hands[0], hand._hands[1]),
            card_points=(hand._card_points[0], hand._card_points[1]),
            marriage_points=(hand._marriage_points[0], hand._marriage_points[1]),
            tricks_won=(hand._tricks_won[0], hand._tricks_won[1]), to_act=hand.to_act,
            leader=hand._leader, lead=hand._lead, declared=hand._declared,
            closer=hand._closed_by, close_position=hand._close_position,
            started=bool(hand._tricks), sharp=hand._sharp)

    def points(self, seat: int) -> int:
        """R5.5: card points plus effective marriage points."""
        if self.tricks_won[seat]:
            return self.card_points[seat] + self.marriage_points[seat]
        return self.card_points[seat]


class Solver:
    """Alpha-beta over one position's strict phase; values are game points for the seat on lead.

    One solver serves one hand's fixed facts (trump, profile, the close); its transposition
    table is kept between calls on positions of that hand. `deadline` (a `time.monotonic()`
    value) or `node_limit` make a search raise `SearchTimeout` instead of running on.
    """

    def __init__(self, trump: int, sharp: bool, closer_success: int = 0,
                 closer_fail: int = 0, deadline: float | None = None,
                 node_limit: int | None = None,
                 clock: Callable[[], float] = time.monotonic, wins_only: bool = False) -> None:
        self.trump = trump
        self.sharp = sharp
        # With `wins_only` every value is +1 for a hand won and -1 for a hand lost, whatever its
        # game points (for a bot that maximizes the hands it wins, not its game points).
        self._two, self._three = (1, 1) if wins_only else (2, 3)
        self.worst, self.best = (-1, 1) if wins_only else (WORST, BEST)  # the search window
        # Game points if the closer succeeds (R8.3) or fails (R8.4), fixed at the close.
        self.closer_success = min(closer_success, 1) if wins_only else closer_success
        self.closer_fail = min(closer_fail, 1) if wins_only else closer_fail
        self.deadline = deadline
        self.clock = clock  # what `deadline` is measured on
        self.node_limit = node_limit
        self.nodes = 0
        self._check_at = 128 if node_limit is None else min(128, node_limit)
        self.tt: dict[int, tuple[int, int, int]] = {}  # key -> (lower, upper, best lead)
        # What the values depend on besides the position's key: solvers with the same facts
        # can share one table (the champion keeps one per move).
        self.facts = (trump, sharp, closer_success, closer_fail, wins_only)
        self._wins = _WINS[trump]
        self._cards = _ORDERED[trump]
        self._answer_cache = _ANSWERS[trump]

    @staticmethod
    def for_position(pos: Position, deadline: float | None = None,
                     node_limit: int | None = None,
                     clock: Callable[[], float] = time.monotonic,
                     wins_only: bool = False) -> Solver:
        success = fail = 0
        if pos.closer is not None:
            assert pos.close_position is not None
            opp_points, opp_had_trick = pos.close_position
            success = 3 if not opp_had_trick else 2 if opp_points < HALF_POINTS else 1
            fail = 2 if opp_had_trick else 3
        return Solver(pos.trump, pos.sharp, success, fail, deadline, node_limit, clock,
                      wins_only)

    # --- terminal values -----------------------------------------------------------------------
    def claim_value(self, pl: int, pf: int, wl: bool, wf: bool, crel: int) -> int:
        """The claim of the seat on lead with `pl` points (R7.2, R8.1-R8.4), for that seat.

        `crel`: 0 not closed, 1 the claimer closed, 2 the other seat closed.
        """
        correct = pl >= WINNING_POINTS
        if crel == 0:
            if correct:
                return self._three if not wf else self._two if pf < HALF_POINTS else 1
            return -self._two if wf else -self._three
        if crel == 1:
            return self.closer_success if correct else -self.closer_fail
        if correct:
            return self.closer_fail
        return -self._two if wf else -self._three

    def _last_trick(self, pw: int, po: int, wo: bool, crel: int) -> int:
        """R7.4 / R8.5 / R8.4 after the last trick, for its winner (who has won a trick)."""
        if pw >= WINNING_POINTS:
            return self.claim_value(pw, po, True, wo, crel)
        if crel == 0:
            return 1
        return -self.closer_fail if crel == 1 else self.closer_fail

    def _ordered(self, mask: int) -> tuple[int, ...]:
        cards = self._cards.get(mask)
        if cards is None:
            order = _LEAD_ORDER[self.trump]
            cards = self._cards[mask] = tuple(i for i in order if mask >> i & 1)
        return cards

    # --- the search ------------------------------------------------------------------------------
    def lead(self, hl: int, hf: int, cl: int, cf: int, ml: int, mf: int, wl: bool, wf: bool,
             crel: int, started: bool, alpha: int, beta: int) -> int:
        """The value for the seat on lead (hand `hl`, card points `cl`, marriages `ml`, has won a
        trick `wl`; `hf`... the other seat's), both hands non-empty, nothing declared yet."""
        self.nodes += 1
        if self.nodes >= self._check_at:
            self._check()
        key = (hl | hf << 20 | cl << 40 | cf << 47 | ml << 54 | mf << 61 | wl << 68 | wf << 69
               | crel << 70 | started << 72)
        entry = self.tt.get(key)
        first = -1
        if entry is not None:
            lo, hi, first = entry
            if lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            if lo == hi:
                return lo
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
        alpha0 = alpha
        best = -INF
        best_card = -1
        # Marriages the leader may declare (R5.1; sharp: only after winning a trick, R9.3).
        marriages = 0
        bonus = 0
        held = hl & (hl >> 1) & KINGS
        if held and (not self.sharp or wl):
            trump = self.trump
            for s in range(4):
                if held >> (5 * s + KING) & 1:
                    marriages |= MARRIAGE[s]
                    bonus = max(bonus, 40 if s == trump else 20)
        if started:
            pl = cl + ml + bonus if wl else cl
            if pl >= WINNING_POINTS:
                # A correct claim is the most this seat can get (the other seat's points and
                # tricks only grow, the close's values are fixed): exact, no search.
                best = self.claim_value(pl, cf + mf if wf else cf, wl, wf, crel)
                self.tt[key] = (best, best, -1)
                return best
            # A false claim (R8.2), whatever the close (R8.4 is worse).
            best = -self._two if wf else -self._three
            if crel == 1:
                best = -self.closer_fail
            if best >= beta:
                self._store(key, best, alpha0, beta, -1)
                return best
            if best > alpha:
                alpha = best
        cards = self._ordered(hl)
        if first >= 0:
            cards = (first, *(c for c in cards if c != first))
        for card in cards:
            ml2 = ml
            if marriages >> card & 1:
                ml2 += 40 if card // 5 == self.trump else 20
            value = self._answer(hl ^ (1 << card), hf, cl, cf, ml2, mf, wl, wf, crel, card,
                                 alpha, beta)
            if value > best:
                best = value
                best_card = card
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        self._store(key, best, alpha0, beta, best_card)
        return best

    def _answer(self, hl: int, hf: int, cl: int, cf: int, ml: int, mf: int, wl: bool, wf: bool,
                crel: int, card: int, alpha: int, beta: int) -> int:
        """The value for the leader of `card` led (already out of `hl`): the follower's best
        answer (R3.4) and the play on."""
        answers = self._answer_cache.get(hf | card << 20)
        if answers is None:
            answers = self._answers(hf, card)
        worst = INF
        crel_swapped = (0, 2, 1)[crel]
        wins = self._wins
        base = card * 20
        for f in answers:
            hf2 = hf ^ (1 << f)
            points = POINTS[card] + POINTS[f]
            if wins[base + f]:
                cf2 = cf + points
                if not hl:
                    pw = cf2 + mf
                    po = cl + ml if wl else cl
                    value = -self._last_trick(pw, po, wl, crel_swapped)
                else:
                    value = -self.lead(hf2, hl, cf2, cl, mf, ml, True, wl, crel_swapped, True,
                                       -min(beta, worst), -alpha)
            else:
                cl2 = cl + points
                if not hl:
                    po = cf + mf if wf else cf
                    value = self._last_trick(cl2 + ml, po, wf, crel)
                else:
                    value = self.lead(hl, hf2, cl2, cf, ml, mf, True, wf, crel, True,
                                      alpha, min(beta, worst))
            if value < worst:
                worst = value
                if worst <= alpha:
                    break
        return worst

    def _answers(self, hand: int, card: int) -> tuple[int, ...]:
        """The cards of `hand` strict play allows in answer to `card` (R3.4), in a good order:
        winning cards first, high to low, then discards, low first (cached per hand and lead)."""
        cache = self._answer_cache
        if len(cache) >= ANSWER_CACHE_MAX:
            cache.clear()
        ordered = self._ordered(follow_mask(hand, card, self.trump))
        wins = self._wins
        win = [f for f in ordered if wins[card * 20 + f]]
        lose = sorted((f for f in ordered if not wins[card * 20 + f]), key=POINTS.__getitem__)
        cards = cache[hand | card << 20] = (*win, *lose)
        return cards

    def _store(self, key: int, best: int, alpha0: int, beta: int, card: int) -> None:
        lo, hi = -INF, INF
        old = self.tt.get(key)
        if old is not None:
            lo, hi = old[0], old[1]
        if best <= alpha0:
            hi = min(hi, best)
        elif best >= beta:
            lo = max(lo, best)
        else:
            lo = hi = best
        self.tt[key] = (lo, hi, card if card >= 0 else (old[2] if old else -1))

    def _check(self) -> None:
        self._check_at = self.nodes + 128
        if self.node_limit is not None:
            self._check_at = min(self._check_at, self.node_limit)
        if self.node_limit is not None and self.nodes >= self.node_limit:
            raise SearchTimeout
        if self.deadline is not None and self.clock() >= self.deadline:
            raise SearchTimeout

    # --- positions and actions ------------------------------------------------------------------
    def value(self, pos: Position) -> int:
        """The exact value of `pos` in game points for the seat to act."""
        return max(self.action_values(pos).values())

    def action_values(self, pos: Position) -> dict[Action, int]:
        """The exact value (game points for the seat to act) of each legal engine action."""
        me = pos.to_act
        other = 1 - me
        h, c, m, w = pos.hands, pos.card_points, pos.marriage_points, pos.tricks_won
        crel = 0 if pos.closer is None else 1 if pos.closer == me else 2
        out: dict[Action, int] = {}
        if pos.lead >= 0:  # answering a lead: the value for the leader, negated
            crel_l = (0, 2, 1)[crel]
            allowed = follow_mask(h[me], pos.lead, self.trump)
            for f in self._ordered(allowed):
                single = self._single_answer(h[other], h[me], c[other], c[me],
                                            m[other], m[me], bool(w[other]), bool(w[me]),
                                            crel_l, pos.lead, f)
                out[Action.play(ALL_CARDS[f])] = -single
            return out
        wl, wf = bool(w[me]), bool(w[other])
        pf = c[other] + m[other] if wf else c[other]
        declarable = 0
        if pos.declared < 0 and (not self.sharp or wl):
            for s in range(4):
                if h[me] & MARRIAGE[s] == MARRIAGE[s]:
                    declarable |= 1 << s
        if pos.declared >= 0:
            must = 1 << (5 * pos.declared + KING)
            if not self.sharp:
                must |= 1 << (5 * pos.declared + QUEEN)
            leads = h[me] & must
        else:
            leads = h[me]
        for card in self._ordered(leads):
            # A plain lead: the answer searched with this lead forced (no declaration now).
            out[Action.play(ALL_CARDS[card])] = self._answer(
                h[me] ^ (1 << card), h[other], c[me], c[other], m[me], m[other], wl, wf, crel,
                card, self.worst, self.best)
        for s in range(4):
            if declarable >> s & 1:
                bonus = 40 if s == self.trump else 20
                after = replace(pos, marriage_points=_add(pos.marriage_points, me, bonus),
                                declared=s)
                out[Action.declare(ALL_CARDS[5 * s].suit)] = max(
                    self.action_values(after).values())
        if pos.started:
            pl = c[me] + m[me] if wl else c[me]
            out[Action.claim()] = self.claim_value(pl, pf, wl, wf, crel)
        return out

    def _single_answer(self, hl: int, hf: int, cl: int, cf: int, ml: int, mf: int, wl: bool,
                       wf: bool, crel: int, card: int, f: int) -> int:
        """The leader's value when the follower answers `card` with `f` (exact)."""
        trump = self.trump
        hf2 = hf ^ (1 << f)
        points = POINTS[card] + POINTS[f]
        crel_swapped = (0, 2, 1)[crel]
        if _beats(card, f, trump):
            cf2 = cf + points
            if not hl:
                return -self._last_trick(cf2 + mf, cl + ml if wl else cl, wl, crel_swapped)
            return -self.lead(hf2, hl, cf2, cl, mf, ml, True, wl, crel_swapped, True,
                              self.worst, self.best)
        cl2 = cl + points
        if not hl:
            return self._last_trick(cl2 + ml, cf + mf if wf else cf, wf, crel)
        return self.lead(hl, hf2, cl2, cf, ml, mf, True, wf, crel, True, self.worst, self.best)


def _add(pair: tuple[int, int], seat: int, amount: int) -> tuple[int, int]:
    return (pair[0] + amount, pair[1]) if seat == 0 else (pair[0], pair[1] + amount)


def solve(pos: Position, deadline: float | None = None,
          node_limit: int | None = None) -> dict[Action, int]:
    """The exact value of each legal action at `pos`, for the seat to act."""
    return Solver.for_position(pos, deadline, node_limit).action_values(pos)


def best_action(values: dict[Action, float] | dict[Action, int]) -> Action:
    """The best action. Ties go to a correct claim (its value is positive, R7.2), else to the
    first other action in the order given: a false claim only when it is strictly best."""
    top = max(values.values())
    claim = next((a for a in values if a.kind is ActionKind.CLAIM), None)
    if claim is not None and values[claim] == top and top > 0:
        return claim
    return next((a for a, v in values.items() if v == top and a is not claim), claim or
                next(iter(values)))
