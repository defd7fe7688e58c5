"""`champion`: perfect-information Monte Carlo over deals consistent with what the seat knows,
with the exact endgame solver wherever the position becomes a strict (closed or exhausted) one.

- **Sampling** (`sample_hand`): the opponent's hand and the face-down stock are drawn from the
  unseen cards, with every card the opponent was shown to hold in its hand (the engine's
  `determinize`: marriages, exchanges, the trump card on the last draw), and none of the cards
  strict play says it cannot hold: an opponent who answered a lead in the strict phase with
  another suit has none of that suit (and, if it did not trump, no trump either); one who
  followed suit with a lower card has none of the higher ones (R3.4). With the stock exhausted
  the opponent's hand is exactly the unseen cards: one deal, solved exactly. With `infer` (off by
  default: it measured no better) deals are also weighed by how the opponent played
  (`sample_plausible`): each of its last open-stock answers that lost a trick the playout policy
  would have won with a card the deal gives it makes that deal `UNLIKELY` times as likely
  (rejection sampling). With `leads` (off by default: it measured no better) deals are also
  weighed by the opponent's leads (`bots.leads`: it exchanges the trump jack and
  declares its marriages when it can). With `model` (off by default: it measured no better)
  they are resampled in proportion to how likely a learned model of the opponent's play makes
  its play so far (`weighed_deals`, `bots.opponent`). Every deal the search evaluates
  comes from `ChampionBot.deal` (the benches' `--see-all` gives it the true deal instead, to
  measure what the hidden cards cost).
- **Evaluation of an action on a sampled deal**: apply it; while the stock is open, both seats
  play the playout policy (claim when correct, exchange, declare the best marriage, otherwise a
  heuristic card with some randomness); as soon as the stock is closed or exhausted, the exact
  solver (`bots.endgame`) gives the value in game points. Actions after which the seat
  acts again (exchange, declare) are valued by the best follow-up on the same deal, so that
  closing, exchanging, declaring and claiming are all chosen by the same evaluation.
- **Choice**: the action with the best mean over the deals; every action is evaluated on the same
  deals with the same playout randomness (common random numbers), round-robin, so a deadline
  cuts all estimates fairly. With `prune` (the default) an action clearly below the best on the
  same deals is dropped after `PRUNE_AFTER` deals, so the budget goes to the close ones, and the
  move ends when one is left. With `share_tables` (the default) all solves of a move share one
  solver (one transposition table) per hand facts.
- **Search** (`search`): `"pimc"` (the default) solves every deal as if both seats saw every
  card. `"presumed"` (Wisser's presumed payoff, `bots.presumed`) values a closed stock with the
  opponent's next decision taken without sight of our cards: our close while the stock is open,
  and every decision once a stock is closed with cards in it (an exhausted stock hides nothing,
  so there the two are the same). Where the opponent's answers differ in value it costs
  `presumed_worlds` more solves each, so fewer deals fit a move; it measured no better than
  `"pimc"` (docs/house-bots.md), which stays the default.
- `champion-v1` (`ChampionV1Bot`) is the search before those three options and the later start
  cut-off (`stop_fraction`), kept for comparison (`bench/strength.py --opponents champion-v1`).

Budget: `ms` milliseconds of wall time per move (default 100, or `BUMMERL_CHAMPION_MS`), and the
deadline the caller passes, whichever is sooner; the clock is checked between evaluations and
inside the solver. `clock="cpu"` measures the budget in this process's CPU time instead (for
benchmarks on a shared machine, where wall time is mostly spent waiting for a core). `samples`
caps the deals per move. With `ms=0` and `samples=N` the bot is deterministic given its rng
(tests use this). With a time budget the deals and playouts drawn are
still the same sequence for a given rng, but how many of them fit in the budget depends on the
machine, so the choice is reproducible only as far as the same number of deals gets evaluated.
"""

from __future__ import annotations

import gc
import math
import os
import random
import time
from collections.abc import Callable

from bots.base import Bot
from bots.bully import BullyBot
from bots.endgame import (
    HIGHER,
    KING,
    MARRIAGE,
    POINTS,
    QUEEN,
    SUIT_MASK,
    Position,
    SearchTimeout,
    Solver,
    best_action,
)
from bots.leads import lead_weight
from bots.opponent import OpponentModel
from bots.presumed import hides_cards, presumed_value
from engine import Action, ActionKind, Hand, Observation, determinize
from engine.cards import SUITS
from engine.rules import WINNING_POINTS

DEFAULT_MS = 100.0
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.monotonic, "cpu": time.process_time}
OBJECTIVES = ("points", "wins")  # what the search maximizes: game points or hands won
SEARCHES = ("pimc", "presumed")  # how a deal is valued: clairvoyant seats, or presumed payoff
PRESUMED_WORLDS = 3  # deals the opponent's presumed decision is averaged over (`presumed`)
STOP_FRACTION = 0.95  # start no new deal after this share of the time to the hard stop
HARD_FRACTION = 0.92  # abandon the deal under way at this share (the rest is headroom)
ANSWERS_USED = 4  # the opponent's last open-stock answers weighed (`infer`)
UNLIKELY = 0.35  # a deal's factor per answer the playout policy would not have made (`infer`)
MAX_TRIES = 12  # draws per deal at most in the rejection sampling (`infer`, `leads`)
PRUNE_AFTER = 12  # deals before an action can be dropped as clearly worse (`prune`)
PRUNE_Z = 3.0  # ... when its mean is this many standard errors below the best one's
POOL = 64  # deals drawn and weighed at once by the opponent model (`model`)


def default_ms() -> float:
    return float(os.environ.get("BUMMERL_CHAMPION_MS", DEFAULT_MS))


# --- sampling ----------------------------------------------------------------------------------
def sample_hand(obs: Observation, rng: random.Random, excluded: int = 0) -> Hand:
    """A full hand consistent with `obs` and with the opponent holding no card of `excluded`."""
    hand = determinize(obs, rng)
    if not excluded:
        return hand
    other = 1 - obs.seat
    known = obs.known_opponent_cards()
    free = sorted(obs.unseen_cards() - known)
    allowed = [c for c in free if not excluded & c.bit]
    barred = [c for c in free if excluded & c.bit]
    need = obs.opponent_hand_size - len(known)
    if need > len(allowed):
        return hand  # the inference contradicts the record (cannot happen): plain sampling
    rng.shuffle(allowed)
    rest = allowed[need:] + barred
    rng.shuffle(rest)
    hand._hands[other] = sum(c.bit for c in (*known, *allowed[:need]))
    if obs.stock_size:
        hand._stock = [obs.trump_card.index, *(c.index for c in rest)]
    return hand


# --- inference from how the opponent answered while the stock was open -------------------------
def open_answers(obs: Observation) -> list[tuple[int, int]]:
    """(lead, answer) of the last `ANSWERS_USED` tricks the opponent lost as the answering seat
    while the stock was open: the evidence `plausibility` weighs."""
    end = obs.strict_from()
    if end is None:
        end = len(obs.tricks)
    return [(t.lead.index, t.follow.index) for t in obs.tricks[:end][-ANSWERS_USED:]
            if t.leader == obs.seat and t.winner == obs.seat]


def plausibility(answers: list[tuple[int, int]], held: int, trump: int) -> float:
    """How plausible the opponent's lost answers are if it holds `held` now, under the playout
    policy's answer (win in suit if it can; take a non-trump ace or ten with a trump): a factor
    `UNLIKELY` for each answer it lost although a card of `held` would have won the policy's
    way. (A card held now may have been drawn after that trick: the factor is soft.)"""
    weight = 1.0
    for lead, _answer in answers:
        if held & HIGHER[lead] or (POINTS[lead] >= 10 and lead // 5 != trump
                                   and held & SUIT_MASK[trump]):
            weight *= UNLIKELY
    return weight


def sample_plausible(obs: Observation, rng: random.Random, excluded: int = 0,
                     answers: list[tuple[int, int]] | None = None, leads: bool = False) -> Hand:
    """`sample_hand`, kept with probability `plausibility` of the opponent's `answers` (times
    `lead_weight` of its leads, with `leads`) by rejection sampling, at most `MAX_TRIES` draws:
    the last one is kept. So deals in which the opponent's play is unlikely come up less often.
    Uses only `obs` and `rng`."""
    hand = sample_hand(obs, rng, excluded)
    if not answers and not leads:
        return hand
    other = 1 - obs.seat
    trump = SUITS.index(obs.trump_suit)
    for _ in range(MAX_TRIES - 1):
        weight = plausibility(answers, hand._hands[other], trump) if answers else 1.0
        if leads:
            weight *= lead_weight(obs, set(hand.holding(other)), rng)
        if rng.random() < weight:
            break
        hand = sample_hand(obs, rng, excluded)
    return hand


def weighed_deals(obs: Observation, rng: random.Random, excluded: int, model: OpponentModel,
                  size: int = POOL) -> list[Hand]:
    """`size` deals resampled (with replacement) from `size` of `sample_hand`'s, each in
    proportion to how likely `model` makes the opponent's play so far on it (importance
    resampling). Uses only `obs` and `rng`."""
    other = 1 - obs.seat
    pool = [sample_hand(obs, rng, excluded) for _ in range(size)]
    logs = [model.log_likelihood(obs, [c.index for c in h.holding(other)], rng) for h in pool]
    top = max(logs)
    return rng.choices(pool, [math.exp(x - top) for x in logs], k=size)


# --- the playout policy -------------------------------------------------------------------------
def _policy(hand: Hand, seat: int, rng: random.Random, epsilon: float) -> Action:
    legal = hand.legal_actions()
    last = legal[-1]
    if last.kind is ActionKind.CLAIM and hand.points(seat) >= WINNING_POINTS:
        return last
    specials = [a for a in legal if a.kind is not ActionKind.PLAY]
    for a in specials:
        if a.kind is ActionKind.EXCHANGE:
            return a
    declares = [a for a in specials if a.kind is ActionKind.DECLARE]
    if declares:
        trump_suit = hand.trump_suit
        return max(declares, key=lambda a: a.suit == trump_suit)
    plays = [a for a in legal if a.kind is ActionKind.PLAY]
    if len(plays) == 1 or rng.random() < epsilon:
        return rng.choice(plays)
    trump = SUITS.index(hand.trump_suit)
    mine = hand._hands[seat]
    lead = hand._lead
    cards = [a.card.index for a in plays]  # type: ignore[union-attr]
    if lead < 0:
        # Lead a low card that is not a trump and does not break a marriage.
        def lead_key(i: int) -> tuple[int, int, float]:
            suit = i // 5
            in_marriage = (i % 5 in (KING, QUEEN)
                           and mine & MARRIAGE[suit] == MARRIAGE[suit])
            return (suit == trump, in_marriage, POINTS[i] + rng.random())
        return plays[cards.index(min(cards, key=lead_key))]
    lead_suit = lead // 5
    same_higher = [i for i in cards if i // 5 == lead_suit and i % 5 < lead % 5]
    if same_higher:  # win in suit with the highest card (it collects the most)
        return plays[cards.index(min(same_higher))]
    if POINTS[lead] >= 10 and lead_suit != trump:
        trumps = [i for i in cards if i // 5 == trump]
        if trumps:  # take an ace or ten with the lowest trump
            return plays[cards.index(max(trumps))]
    # Otherwise throw the cheapest card that is not a trump, if any.
    return plays[cards.index(min(cards, key=lambda i: (i // 5 == trump, POINTS[i])))]


# One solver (and its transposition table) per hand facts (`Solver.facts`).
Solvers = dict[tuple[int, bool, int, int, bool], Solver]


def solver_for(pos: Position, deadline: float | None, clock: Callable[[], float],
               solvers: Solvers | None, wins_only: bool = False) -> Solver:
    """A solver for `pos`: the one `solvers` keeps for its hand facts (its table kept for the
    move's next solves), if given."""
    solver = Solver.for_position(pos, deadline=deadline, clock=clock, wins_only=wins_only)
    return solver if solvers is None else solvers.setdefault(solver.facts, solver)


def solved_value(hand: Hand, me: int, deadline: float | None,
                 clock: Callable[[], float] = time.monotonic,
                 solvers: Solvers | None = None, wins_only: bool = False) -> int:
    """The exact value for `me` of a hand in its strict phase (or over): its game points, or
    with `wins_only` 1 if `me` wins it and -1 if not. `solvers`, if given, keeps one solver
    (and its transposition table) per hand facts for the next calls."""
    result = hand.result
    if result is not None:
        points = 1 if wins_only else result.game_points
        return points if result.winner == me else -points
    pos = Position.from_hand(hand)
    solver = solver_for(pos, deadline, clock, solvers, wins_only)
    if pos.lead < 0 and pos.declared < 0:
        seat, other = pos.to_act, 1 - pos.to_act
        crel = 0 if pos.closer is None else 1 if pos.closer == seat else 2
        w = pos.tricks_won
        value = solver.lead(pos.hands[seat], pos.hands[other], pos.card_points[seat],
                            pos.card_points[other], pos.marriage_points[seat],
                            pos.marriage_points[other], bool(w[seat]), bool(w[other]), crel,
                            pos.started, solver.worst, solver.best)
    else:
        value = solver.value(pos)
    return value if pos.to_act == me else -value


def playout_value(hand: Hand, me: int, rng: random.Random, epsilon: float,
                  deadline: float | None, clock: Callable[[], float] = time.monotonic,
                  solvers: Solvers | None = None, wins_only: bool = False) -> int:
    """Play the open-stock phase with the policy, then solve: `solved_value` for `me`."""
    while hand.to_act is not None and not hand.is_strict:
        seat = hand.to_act
        hand.apply(seat, _policy(hand, seat, rng, epsilon))
    return solved_value(hand, me, deadline, clock, solvers, wins_only)


class ChampionBot(Bot):
    name = "champion"

    def __init__(self, ms: float | None = None, samples: int | None = None,
                 epsilon: float = 0.25, clock: str = "wall", share_tables: bool = True,
                 prune: bool = True, infer: bool = False, objective: str = "points",
                 leads: bool = False, model: OpponentModel | None = None,
                 search: str = "pimc", presumed_worlds: int = PRESUMED_WORLDS):
        self.ms = default_ms() if ms is None else float(ms)  # 0: no time limit
        self.samples = samples  # deals per move at most (None: as many as the time allows)
        if self.ms <= 0 and samples is None:
            raise ValueError("champion needs a time budget (ms > 0) or a sample budget")
        self.epsilon = epsilon  # share of random card choices in playouts
        # Keep one transposition table per move, shared by every solve of that move.
        self.share_tables = share_tables
        # Stop evaluating actions that are clearly worse than the best (the budget goes to the
        # close ones).
        self.prune = prune
        self.stop_fraction = STOP_FRACTION
        # Draw deals in which the opponent's open-stock answers are plausible more often (off by
        # default: it measured no better, docs/house-bots.md).
        self.infer = infer
        # Draw deals in which the opponent's leads are likely (it exchanges the trump jack and
        # declares its marriages when it can) more often (`bots.leads`).
        self.leads = leads
        # Draw deals in proportion to how likely a learned model of the opponent's play
        # (`bots.opponent`) makes its play so far (off by default: it measured no
        # better, docs/house-bots.md).
        self.model = model
        self._pool: list[Hand] = []  # the move's weighed deals not yet evaluated (`model`)
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
        # "points": the most game points (bummerl's Bummerl); "wins": the most hands won (a
        # one-hand game such as the VU course's, bench/vu.py).
        self.wins_only = objective == "wins"
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {', '.join(SEARCHES)}, not {search!r}")
        if presumed_worlds < 1:
            raise ValueError(f"presumed_worlds must be at least 1, not {presumed_worlds!r}")
        # "pimc": each deal solved as if both seats saw every card; "presumed": with a closed
        # stock, the opponent's next decision is taken as best for it over `presumed_worlds`
        # deals it cannot tell apart (`bots.presumed`).
        self.presumed = search == "presumed"
        self.presumed_worlds = presumed_worlds
        self._solvers: Solvers | None = None
        self.last_samples = 0  # deals evaluated for the last move (for benches and tests)
        self.last_contenders = 0  # actions still compared at its end (stock open; benches)
        if clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, not {clock!r}")
        # "wall" (live play) or "cpu": this process's CPU time, for benches on a shared machine
        # (a caller's deadline, always wall time, then does not apply).
        self.clock = CLOCKS[clock]

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        now = self.clock
        start = now()
        hard = start + HARD_FRACTION * self.ms / 1000 if self.ms > 0 else None
        if deadline is not None and now is time.monotonic:
            hard = deadline if hard is None else min(hard, deadline)
        stop = None if hard is None else start + (hard - start) * self.stop_fraction
        # One solver (one transposition table) per hand facts for the whole move.
        self._solvers = {} if self.share_tables else None
        self._pool = []
        collecting = gc.isenabled()
        gc.disable()  # the search makes no reference cycles; a collection would cost the clock
        try:
            if observation.closed_by is not None or observation.stock_size == 0:
                return self._strict(observation, rng, stop, hard)
            return self._open(observation, rng, stop, hard)
        except SearchTimeout:
            return BullyBot().choose(observation, rng)
        finally:
            self._solvers = None
            if collecting:
                gc.enable()

    def deal(self, obs: Observation, rng: random.Random, excluded: int,
             answers: list[tuple[int, int]] | None) -> Hand:
        """One deal to evaluate the actions on: `sample_plausible`, or with `model` the next of
        the move's `weighed_deals` (a measuring bench may give the true deal instead, bench/vu.py
        --see-all). With the stock exhausted the deal is exact: nothing weighs it then."""
        exhausted = obs.stock_size == 0 and obs.closed_by is None
        if self.model is not None and not exhausted:
            if not self._pool:
                self._pool = weighed_deals(obs, rng, excluded, self.model)
            return self._pool.pop()
        return sample_plausible(obs, rng, excluded, answers, self.leads and not exhausted)

    def _rounds(self, limit: int, stop: float | None,
                one_deal: Callable[[], bool | None]) -> None:
        """Evaluate sampled deals (`one_deal()` each) until `limit` of them or the `stop` time,
        at least one, or until `one_deal()` returns False (nothing left to decide); a
        SearchTimeout (the hard deadline) ends the search, and reaches the caller only from the
        first deal (then there is nothing to choose from)."""
        done = 0
        while done < limit:
            if done and stop is not None and self.clock() >= stop:
                break
            try:
                more = one_deal()
            except SearchTimeout:
                if not done:
                    raise
                break
            done += 1
            if more is False:
                break
        self.last_samples = done

    # --- stock closed or exhausted: solve sampled deals exactly ---------------------------------
    def _strict(self, obs: Observation, rng: random.Random, stop: float | None,
                hard: float | None) -> Action:
        excluded = sum(c.bit for c in obs.ruled_out_cards())
        known = obs.stock_size == 0  # exhausted: the opponent holds exactly the unseen cards
        limit = 1 if known else (self.samples or 10**9)
        totals: dict[Action, int] = {}
        answers = open_answers(obs) if self.infer and not known else None

        def one_deal() -> None:
            hand = self.deal(obs, rng, excluded, answers)
            if self.presumed and hides_cards(hand):
                seed = rng.getrandbits(64)
                for action in obs.legal_actions:
                    child = hand.copy()
                    child.apply(obs.seat, action)
                    value = self._presumed(child, obs.seat, seed, hard)
                    totals[action] = totals.get(action, 0) + value
                return
            pos = Position.from_hand(hand)
            solver = solver_for(pos, hard, self.clock, self._solvers, self.wins_only)
            values = solver.action_values(pos)
            for action, value in values.items():
                totals[action] = totals.get(action, 0) + value

        self._rounds(limit, stop, one_deal)
        return best_action(totals)

    # --- stock open: playouts to the strict phase, then the solver -------------------------------
    def _open(self, obs: Observation, rng: random.Random, stop: float | None,
              hard: float | None) -> Action:
        me = obs.seat
        actions = obs.legal_actions
        values: list[list[int]] = [[] for _ in actions]  # per action, its value on each deal
        active = list(range(len(actions)))

        answers = open_answers(obs) if self.infer else None

        def one_deal() -> bool:
            hand = self.deal(obs, rng, 0, answers)
            seed = rng.getrandbits(64)
            for i in active:
                if hard is not None and self.clock() >= hard:
                    raise SearchTimeout
                values[i].append(self._value(hand, me, actions[i], seed, hard))
            if self.prune:
                active[:] = self._contenders(values, active)
            return len(active) > 1  # one left: nothing more to compare

        self._rounds(self.samples or 10**9, stop, one_deal)
        self.last_contenders = len(active)
        return best_action({actions[i]: sum(values[i]) / len(values[i]) for i in active
                            if values[i]})

    @staticmethod
    def _contenders(values: list[list[int]], active: list[int]) -> list[int]:
        """The actions still worth evaluating: after `PRUNE_AFTER` deals, an action whose
        values on the same deals (common random numbers) are below the best action's by more
        than `PRUNE_Z` standard errors of the mean difference is dropped."""
        n = min(len(values[i]) for i in active)
        if n < PRUNE_AFTER:
            return active
        best = max(active, key=lambda i: sum(values[i][:n]))
        top = values[best]
        keep = []
        for i in active:
            diffs = [a - b for a, b in zip(top[:n], values[i][:n], strict=True)]
            mean = sum(diffs) / n
            var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
            if i == best or mean <= 0 or mean * mean * n <= PRUNE_Z * PRUNE_Z * var:
                keep.append(i)
        return keep

    def _value(self, hand: Hand, me: int, action: Action, seed: int,
               hard: float | None) -> int:
        """The value for `me` of `action` on this deal: after an exchange or a declaration (the
        seat acts again at once) the best follow-up; else the playout and the solver."""
        child = hand.copy()
        child.apply(me, action)
        if action.kind is ActionKind.EXCHANGE or action.kind is ActionKind.DECLARE:
            return max(self._value(child, me, follow, seed, hard)
                       for follow in child.legal_actions())
        if self.presumed and action.kind is ActionKind.CLOSE:
            return self._presumed(child, me, seed, hard)
        return playout_value(child, me, random.Random(seed), self.epsilon, hard, self.clock,
                             self._solvers, self.wins_only)


    def _presumed(self, hand: Hand, me: int, seed: int, hard: float | None) -> int:
        """`presumed_value` of a strict hand for `me`, with this move's solvers and clock; the
        same `seed` for every action of a deal (common random numbers)."""
        def solve(deal: Hand) -> int:
            if hard is not None and self.clock() >= hard:
                raise SearchTimeout  # many small solves: each may end before its own check
            return solved_value(deal, me, hard, self.clock, self._solvers, self.wins_only)

        return presumed_value(hand, me, random.Random(seed), self.presumed_worlds, solve,
                              sample_hand)


class ChampionV1Bot(ChampionBot):
    """`champion-v1`: the champion's search as it was before its per-move table and its pruning
    (every legal action on every deal, a fresh solver per solve, no new deal after 74 % of the
    budget), kept to measure the new one
    against (`bench/strength.py --opponents champion-v1`). It shares the solver's code, so its
    solves run as fast as the new one's."""

    name = "champion-v1"

    def __init__(self, ms: float | None = None, samples: int | None = None,
                 epsilon: float = 0.25, clock: str = "wall"):
        super().__init__(ms, samples, epsilon, clock, share_tables=False, prune=False)
        self.stop_fraction = 0.8  # its last deal started by 74 % of the budget
