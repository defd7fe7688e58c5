"""Schnapsen as an OpenSpiel game: `register_openspiel()` registers `python_schnapsen`.

    from bummerl_kit.envs import register_openspiel
    import pyspiel

    register_openspiel()
    game = pyspiel.load_game("python_schnapsen", {"profile": "sharp"})   # default "soft"

Needs `pip install bummerl-kit[openspiel]` (open-spiel 2.0.2); pyspiel and numpy are imported
here only, and only when a game is registered or made, so `bummerl_kit.envs` imports without them.

**One hand, not a Bummerl.** OpenSpiel's algorithms (CFR and its variants, exploitability,
IS-MCTS, evaluation) expect a finite game with returns at its end, and the tree algorithms a small
one. One hand is finite (at most 27 actions) and its result is already a number, the game points
of R8 (1, 2 or 3); a match (R9.1) chains up to 13 hands whose only result (won or lost) comes at
the end, far from most decisions, in a tree 13 hands deep. So a game is one hand, its returns the
winner's game points and their negative for the loser (zero-sum; R8.1-R8.5, either profile of
R9.2/R9.3 by the parameter `profile`). Both match counters are 7 (the observation shows them),
as in a match's first hand; a `match` parameter could chain hands later.

**The deal as chance.** The first chance node picks the dealer (R2.1: at random, 2 outcomes);
then 19 chance nodes deal the deck one card at a time, top card first (R2.2), each outcome one of
the cards not dealt yet (uniform; the 20th card is what is left). A shuffled and cut deck is a
uniformly random permutation, so this is the engine's deal in distribution, with at most 20
outcomes per node instead of 20! at one. Chance outcome ids: 0/1 the dealer, then `Card.index`.

**The engine applies every action**: a state holds an `engine.Hand` and applies each action
through `Hand.apply` (R11.1: an illegal one raises); legal actions are the engine's. Action ids
are the kit's one encoding (`bummerl_kit.envs.encoding`: 0..19 play a card, 20 exchange,
21 close, 22..25 declare C D H S, 26 claim).

**What a seat sees.** The observation string and tensor are built from `engine.observe()` (what
the seat may know now, R10.1) and the tensor is `encoding.observation_tensor` of it (200
floats). The information state adds what perfect recall needs and the observation forgets: the
seat's five dealt cards, the card it drew after each trick (R3.3) and the order of every action
(seat-relative in the tensor: 200 + 20 + 5x20 + 27x29 floats). Nothing else: never the
opponent's cards or the stock's order (R10.2).

**Resampling (IS-MCTS).** `state.resample_from_infostate(player, sampler)` returns a state with
the same information state for `player`, its hidden cards drawn uniformly among the deals
consistent with what that seat saw, and a real history: a new deck replayed with the same
actions. The seat's own dealt and drawn cards and the trump card stay; the other cards are
placed at random, except that a card the opponent showed (played, declared in a marriage,
exchanged: `Observation.known_opponent_cards` and the public history) lay in its hand by then,
and a card strict play rules out of its hand (`Observation.ruled_out_cards`, R3.4) lies in the
stock. It does not use `engine.determinize`: that draws a position only (no deck, no history)
and ignores the cards strict play rules out, while an OpenSpiel state is its history, and the
seat's information state includes the order of its draws, which a position does not fix. The
sampler's first number seeds the draw. Use OpenSpiel's Python IS-MCTS
(`open_spiel.python.algorithms.ismcts.ISMCTSBot`): the C++ `pyspiel.ISMCTSBot` cannot call a
Python game's resampler (it crashes on this game in open-spiel 2.0.2).

**Playing through the kit.** `OpenSpielBot(make_bot)` is a kit bot (`bummerl_kit.Bot`): each
turn `state_from_observation` makes a state from the kit's observation alone (its public record
replayed on a deck drawn as resampling draws one), and the OpenSpiel bot's `step` picks the
action; `ismcts_bot(game)` makes OpenSpiel's IS-MCTS. bench/kit_openspiel.py measures it against
the house levels.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache
from typing import Any

from bummerl_kit.envs import encoding
from client.bot import Bot
from engine.actions import Action
from engine.cards import ALL_CARDS, RANKS, SUITS, Card, Rank
from engine.errors import IllegalActionError
from engine.hand import Hand
from engine.observation import Observation, observe
from engine.rules import Profile

SHORT_NAME = "python_schnapsen"
NUM_CHANCE_NODES = 20  # the dealer, then 19 cards (the 20th is what is left)
MAX_GAME_LENGTH = 27  # 20 plays, 1 exchange, 1 close, 4 marriages, 1 claim
MAX_GAME_POINTS = 3  # R8
DEAL_ORDER = 19  # cards dealt by chance; the last one follows
HISTORY_SLOT = 2 + encoding.NUM_ACTIONS  # who acted (own, opponent), then the action one-hot
INFO_PARTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("dealt", (20,)),  # the seat's five dealt cards
    ("draws", (5, 20)),  # the card the seat drew after trick 1..5 (R3.3)
    ("history", (MAX_GAME_LENGTH, HISTORY_SLOT)),  # every action in order, seat-relative
)
_FOREHAND_POSITIONS = (0, 1, 2, 7, 8)  # R2.2
_DEALER_POSITIONS = (3, 4, 5, 9, 10)
_TRUMP_POSITION = 6
_KING, _QUEEN, _JACK = RANKS.index(Rank.KING), RANKS.index(Rank.QUEEN), RANKS.index(Rank.JACK)


def register_openspiel() -> None:
    """Register `python_schnapsen` with OpenSpiel (again: nothing happens). Needs
    `pip install bummerl-kit[openspiel]`."""
    try:
        import pyspiel
    except ImportError as error:
        raise ImportError("register_openspiel needs open-spiel (pyspiel): pip install "
                          "'bummerl-kit[openspiel]'", name="pyspiel") from error

    if SHORT_NAME not in pyspiel.registered_names():
        pyspiel.register_game(_game_type(), _classes()[0])


@cache
def _game_type() -> Any:
    import pyspiel

    kind = pyspiel.GameType
    return kind(
        short_name=SHORT_NAME, long_name="Schnapsen (one hand, bummerl-kit)",
        dynamics=kind.Dynamics.SEQUENTIAL,
        chance_mode=kind.ChanceMode.EXPLICIT_STOCHASTIC,
        information=kind.Information.IMPERFECT_INFORMATION,
        utility=kind.Utility.ZERO_SUM, reward_model=kind.RewardModel.TERMINAL,
        max_num_players=2, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification={"profile": Profile.SOFT.value})


@cache
def _game_info() -> Any:
    import pyspiel

    return pyspiel.GameInfo(
        num_distinct_actions=encoding.NUM_ACTIONS, max_chance_outcomes=len(ALL_CARDS),
        num_players=2, min_utility=-MAX_GAME_POINTS, max_utility=MAX_GAME_POINTS,
        utility_sum=0.0, max_game_length=MAX_GAME_LENGTH)


@cache
def _classes() -> tuple[type, type]:
    """The game and state classes over pyspiel's (made once, when first needed)."""
    import pyspiel

    class SchnapsenGame(_Game, pyspiel.Game):
        pass

    class SchnapsenState(_State, pyspiel.State):
        pass

    return SchnapsenGame, SchnapsenState


class _Game:
    """The game: its parameter `profile` ("soft" or "sharp", R9)."""

    profile: Profile

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        text = params.get("profile", Profile.SOFT.value)
        if text not in {p.value for p in Profile}:
            raise ValueError(f"{SHORT_NAME}: profile must be 'soft' or 'sharp' (R9), "
                             f"not {text!r}")
        params["profile"] = text
        super().__init__(_game_type(), _game_info(), params)  # type: ignore[call-arg]
        self.profile = Profile(text)

    def new_initial_state(self) -> Any:
        return _classes()[1](self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        return Observer(iig_obs_type, params)

    def max_chance_nodes_in_history(self) -> int:
        return NUM_CHANCE_NODES


class _HandBox:
    """Holds a state's engine hand; OpenSpiel clones a state by deep-copying its attributes,
    and `Hand.copy()` is the engine's fast copy."""

    __slots__ = ("hand",)

    def __init__(self, hand: Hand) -> None:
        self.hand = hand

    def __deepcopy__(self, memo: dict[int, Any]) -> _HandBox:
        return _HandBox(self.hand.copy())


class _State:
    """One hand in play: the deal so far (chance), then the engine's hand and the actions."""

    def __init__(self, game: Any) -> None:
        super().__init__(game)  # type: ignore[call-arg]
        self._profile: Profile = game.profile
        self._dealer = -1  # -1 until the first chance node
        self._deck: list[int] = []  # card indices dealt, top card first (R2.2)
        self._box: _HandBox | None = None
        self._actions: list[tuple[int, int]] = []  # (seat, action id), in order

    # --- reading -------------------------------------------------------------------------
    @property
    def hand(self) -> Hand | None:
        """The engine's hand, once dealt."""
        return None if self._box is None else self._box.hand

    @property
    def dealer(self) -> int | None:
        return None if self._dealer < 0 else self._dealer

    @property
    def deck(self) -> tuple[Card, ...]:
        """The cards dealt so far, top card first. Hidden information."""
        return tuple(ALL_CARDS[i] for i in self._deck)

    @property
    def actions(self) -> tuple[tuple[int, int], ...]:
        """The players' actions so far: (seat, action id)."""
        return tuple(self._actions)

    # --- OpenSpiel's state API -------------------------------------------------------------
    def current_player(self) -> int:
        hand = self.hand
        if hand is None:
            return -1  # pyspiel.PlayerId.CHANCE
        if hand.to_act is None:
            return -4  # pyspiel.PlayerId.TERMINAL
        return hand.to_act

    def _legal_actions(self, player: int) -> list[int]:
        hand = self.hand
        assert hand is not None and player == hand.to_act
        return sorted(encoding.action_index(a) for a in hand.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._dealer < 0:
            return [(0, 0.5), (1, 0.5)]
        left = sorted(set(range(20)) - set(self._deck))
        return [(i, 1.0 / len(left)) for i in left]

    def _apply_action(self, action: int) -> None:
        hand = self.hand
        if hand is None:
            self._deal(int(action))
            return
        seat = hand.to_act
        assert seat is not None
        hand.apply(seat, encoding.action_of(int(action)))  # the engine: R11.1 on illegal
        self._actions.append((seat, int(action)))

    def _deal(self, outcome: int) -> None:
        if self._dealer < 0:
            if outcome not in (0, 1):
                raise ValueError(f"the dealer is seat 0 or 1, not {outcome!r}")
            self._dealer = outcome
            return
        if not 0 <= outcome < 20 or outcome in self._deck:
            raise ValueError(f"card {outcome!r} is not left to deal")
        self._deck.append(outcome)
        if len(self._deck) == DEAL_ORDER:
            self._deck.extend(set(range(20)) - set(self._deck))
            self._box = _HandBox(Hand(self.deck, self._dealer, self._profile))

    def _action_to_string(self, player: int, action: int) -> str:
        if player < 0:
            if self._dealer < 0:
                return f"dealer {action}"
            return f"deal {ALL_CARDS[action]}"
        return str(encoding.action_of(int(action)))

    def is_terminal(self) -> bool:
        hand = self.hand
        return hand is not None and hand.is_over

    def returns(self) -> list[float]:
        """The winner's game points (R8) and their negative for the loser; 0 until the end."""
        hand = self.hand
        if hand is None or hand.result is None:
            return [0.0, 0.0]
        result = hand.result
        out = [-float(result.game_points)] * 2
        out[result.winner] = float(result.game_points)
        return out

    def __str__(self) -> str:
        """The whole state, hidden cards included (for debugging)."""
        dealer = "?" if self._dealer < 0 else str(self._dealer)
        hand = self.hand
        if hand is None:
            dealt = " ".join(str(ALL_CARDS[i]) for i in self._deck)
            return f"{self._profile} dealer {dealer} dealing: {dealt}"
        cards = [" ".join(str(c) for c in hand.holding(s)) for s in (0, 1)]
        stock = " ".join(str(c) for c in hand.stock_cards())
        acts = " ".join(f"{s}:{encoding.action_of(a)}" for s, a in self._actions)
        return (f"{self._profile} dealer {dealer}; seat 0: {cards[0]}; seat 1: {cards[1]}; "
                f"stock: {stock}; trump {hand.trump_card}; actions: {acts}")

    # --- what a seat knew when (for the information state and resampling) ------------------
    def private_cards(self, seat: int) -> tuple[list[int], list[int | None]]:
        """The deck positions `seat` saw: its dealt cards' positions, and for each trick with
        a draw (R3.3) the position it drew (None: the face-up trump card, on the last draw).
        Draws are listed for the finished tricks only."""
        dealer = self._dealer
        if dealer < 0:
            return [], []
        own = _DEALER_POSITIONS if seat == dealer else _FOREHAND_POSITIONS
        dealt = [p for p in own if p < len(self._deck)]
        draws: list[int | None] = []
        hand = self.hand
        if hand is None:
            return dealt, draws
        closed_after = hand.closed_after
        for i, trick in enumerate(hand.tricks[:5]):
            if closed_after is not None and i >= closed_after:
                break
            winner_position = 11 + 2 * i
            if trick.winner == seat:
                draws.append(winner_position)
            else:
                draws.append(winner_position + 1 if i < 4 else None)
        return dealt, draws

    def information_state(self, seat: int
                          ) -> tuple[list[Card], list[Card], list[tuple[int, int]]]:
        """What `seat` knows with perfect recall: its dealt cards (in deal order), the card it
        drew after each trick (R3.3), every action (seat, id) in order."""
        dealt, draws = self.private_cards(seat)
        hand = self.hand
        cards = [ALL_CARDS[self._deck[p]] for p in dealt]
        drawn: list[Card] = []
        for p in draws:
            if p is not None:
                drawn.append(ALL_CARDS[self._deck[p]])
            else:  # the last draw's loser takes the face-up trump card (R3.3): the jack
                assert hand is not None  # once exchanged, which it stays (R4.1)
                drawn.append(hand.trump_card)
        return cards, drawn, list(self._actions)

    def resample_from_infostate(self, player_id: int,
                                probability_sampler: Callable[[], float]) -> Any:
        """A state that `player_id` cannot tell from this one, drawn uniformly among the deals
        consistent with what it saw (module docstring), with the same actions replayed."""
        if self.hand is None:
            raise ValueError("resample_from_infostate: the hand is not dealt yet")
        rng = random.Random(int(probability_sampler() * (1 << 53)))
        deck = _resampled_deck(self, player_id, rng)
        state = self.get_game().new_initial_state()  # type: ignore[attr-defined]
        state.apply_action(self._dealer)
        for card in deck[:DEAL_ORDER]:
            state.apply_action(card)
        for _, action in self._actions:
            state.apply_action(action)
        return state


def _resampled_deck(state: _State, seat: int, rng: random.Random) -> list[int]:
    """A deck consistent with what `seat` saw in `state`, uniform among such decks: the seat's
    dealt and drawn positions and the trump card (position 6) stay; the other cards are placed
    by `_fill` among the opponent's positions and the stock's undrawn ones."""
    hand = state.hand
    assert hand is not None
    true = state._deck
    places, stock = _places(state._dealer, [t.winner for t in hand.tricks], hand.closed_after)
    deck: list[int | None] = [None] * 20
    for p in [_TRUMP_POSITION, *(p for p, _ in places[seat])]:
        deck[p] = true[p]
    opponent = 1 - seat
    free = {true[p] for p, _ in places[opponent]} | {true[p] for p in stock}
    shown = _shown(state._actions, opponent, hand.trump_suit)
    ruled_out = {c.index for c in observe(hand, seat).ruled_out_cards()}
    _fill(deck, places[opponent], stock, free, shown, ruled_out, rng)
    return [c for c in deck if c is not None]


def _places(dealer: int, winners: list[int], closed_after: int | None
            ) -> tuple[dict[int, list[tuple[int, int]]], list[int]]:
    """Each seat's deck positions, with the trick from which the card there was in its hand
    (0: dealt; i + 1: drawn after trick i, R3.3), and the stock's undrawn positions; from the
    dealer and the winners of the finished tricks (public). The last draw's loser takes the
    face-up trump card, which has no position of its own here (it is position 6 or the jack)."""
    places: dict[int, list[tuple[int, int]]] = {
        dealer: [(p, 0) for p in _DEALER_POSITIONS],
        1 - dealer: [(p, 0) for p in _FOREHAND_POSITIONS]}
    draws = min(len(winners), 5 if closed_after is None else min(closed_after, 5))
    for i in range(draws):
        places[winners[i]].append((11 + 2 * i, i + 1))
        if i < 4:
            places[1 - winners[i]].append((12 + 2 * i, i + 1))
    return places, list(range(11 + 2 * draws, 20)) if draws < 5 else []


def _shown(actions: list[tuple[int, int]], seat: int, trump_suit: Any) -> dict[int, int]:
    """The cards `seat` showed it held (played, declared in a marriage, the trump jack it
    exchanged: R3.1, R5.1, R4.1), each with the number of tricks finished when first shown."""
    shown: dict[int, int] = {}
    plays = 0
    for who, action in actions:
        trick = plays // 2
        cards: list[int] = []
        if action < 20:
            plays += 1
            cards = [action]
        elif action == encoding.EXCHANGE_INDEX:
            cards = [SUITS.index(trump_suit) * 5 + _JACK]
        elif encoding.DECLARE_INDEX <= action < encoding.CLAIM_INDEX:
            suit = action - encoding.DECLARE_INDEX
            cards = [suit * 5 + _KING, suit * 5 + _QUEEN]
        if who == seat:
            for card in cards:
                shown.setdefault(card, trick)
    return shown


def _fill(deck: list[int | None], places: list[tuple[int, int]], stock: list[int],
          cards: set[int], shown: dict[int, int], ruled_out: set[int],
          rng: random.Random) -> None:
    """Put `cards` at a seat's `places` (position, from which trick) and the `stock`
    positions of `deck`, uniformly among the ways in which each card in `shown` lies at one of
    the seat's places it held by the trick it was shown, and each card in `ruled_out` (strict
    play showed the seat cannot hold it, R3.4) in the stock.

    Placed in that order (ruled-out cards, then shown cards by trick, then the rest), each
    uniformly among the places left for it: the number of ways to finish never depends on the
    earlier choices, so the result is uniform among the consistent ones. Raises ValueError
    when there is none (an inconsistent history)."""
    if len(places) + len(stock) != len(cards):
        raise ValueError("no deal is consistent with the history: the cards do not fit")
    open_stock = stock[:]
    rng.shuffle(open_stock)
    ruled_out = ruled_out & cards
    for card in sorted(ruled_out):
        if not open_stock:
            raise ValueError("no deal is consistent with the history (R3.4)")
        deck[open_stock.pop()] = card
    taken: set[int] = set()
    deadlines = {c: t for c, t in shown.items() if c in cards}
    for card in sorted(deadlines, key=lambda c: (deadlines[c], c)):
        if card in ruled_out:
            raise ValueError("no deal is consistent with the history (R3.4)")
        choice = [p for p, held in places if held <= deadlines[card] and p not in taken]
        if not choice:
            raise ValueError("no deal is consistent with the history: a shown card cannot "
                             "have been in the hand then")
        place = rng.choice(choice)
        taken.add(place)
        deck[place] = card
    rest = sorted(cards - ruled_out - set(deadlines))
    rng.shuffle(rest)
    for p in [p for p, _ in places if p not in taken] + open_stock:
        deck[p] = rest.pop()


# --- from a kit observation to a state (an OpenSpiel bot playing through the kit) ------------
def state_from_observation(game: Any, observation: Observation,
                           rng: random.Random | None = None) -> Any:
    """A state of `game` that the observing seat cannot tell from where `observation` was
    taken: the observation's public record replayed as actions on a deck drawn as
    `resample_from_infostate` draws one, so that `observe(state.hand, seat)` equals
    `observation` (but for the match's counters and hand number: a game is one hand).

    The observation does not say in which order the seat got its cards, nor when an exchange
    (R4.1) happened: the seat's dealt and drawn cards are drawn like the opponent's (each shown
    card held by the trick it was shown), and the exchange is put at the latest lead the engine
    allows. Raises ValueError when the hand is over or no deal fits."""
    obs = observation
    if obs.to_act is None:
        raise ValueError("state_from_observation: the hand is over")
    if Profile(game.profile) is not obs.profile:
        raise ValueError(f"state_from_observation: a {obs.profile} observation for a "
                         f"{game.profile} game")
    rng = rng or random.Random()
    tricks = len(obs.tricks)
    leaders = [t.leader for t in obs.tricks] + [obs.leader]
    exchange_at: list[int | None] = [None]
    if obs.exchanges:
        last = min(tricks, 4, obs.closed_after if obs.closed_after is not None else 4)
        exchange_at = [k for k in range(last, -1, -1) if leaders[k] == obs.exchanges[0].seat]
    for at in exchange_at:
        actions = _actions_of(obs, at)
        try:
            deck = _deck_of(obs, actions, rng)
            state = game.new_initial_state()
            state.apply_action(obs.dealer)
            for card in deck[:DEAL_ORDER]:
                state.apply_action(card)
            for _, action in actions:
                state.apply_action(action)
        except (ValueError, IllegalActionError):
            continue
        return state
    raise ValueError("state_from_observation: no deal is consistent with the observation")


def _actions_of(obs: Observation, exchange_at: int | None) -> list[tuple[int, int]]:
    """The observation's public record as (seat, action id), in order, with the exchange at
    the lead of trick `exchange_at`; at each lead: exchange, declare, close, then the card."""
    actions: list[tuple[int, int]] = []
    marriages = {m.trick: m for m in obs.marriages}  # at most one per lead (R5.2)
    tricks = obs.tricks
    for k in range(len(tricks) + 1):
        leader = tricks[k].leader if k < len(tricks) else obs.leader
        if exchange_at == k:
            actions.append((leader, encoding.EXCHANGE_INDEX))
        if k in marriages:
            m = marriages[k]
            actions.append((m.seat, encoding.DECLARE_INDEX + SUITS.index(m.suit)))
        if obs.closed_by is not None and obs.closed_after == k:
            actions.append((obs.closed_by, encoding.CLOSE_INDEX))
        if k < len(tricks):
            actions += [(leader, tricks[k].lead.index), (1 - leader, tricks[k].follow.index)]
        elif obs.lead_card is not None:
            actions.append((leader, obs.lead_card.index))
    return actions


def _deck_of(obs: Observation, actions: list[tuple[int, int]], rng: random.Random) -> list[int]:
    """A deck for `actions` that gives the observing seat what `obs` shows."""
    seat, opponent = obs.seat, 1 - obs.seat
    places, stock = _places(obs.dealer, [t.winner for t in obs.tricks], obs.closed_after)
    original = obs.exchanges[0].taken if obs.exchanges else obs.trump_card
    jack = SUITS.index(obs.trump_suit) * 5 + _JACK
    own = {c.index for c in obs.hand} | {c for s, c in actions if s == seat and c < 20}
    if obs.stock_size == 0 and obs.closed_by is None and obs.tricks[4].winner != seat:
        own.discard(obs.trump_card.index)  # taken face up on the last draw (R3.3)
    if obs.exchanges and obs.exchanges[0].seat == seat:
        own.discard(original.index)
        own.add(jack)
    deck: list[int | None] = [None] * 20
    deck[_TRUMP_POSITION] = original.index
    _fill(deck, places[seat], [], own, _shown(actions, seat, obs.trump_suit), set(), rng)
    free = set(range(20)) - own - {original.index}
    ruled_out = {c.index for c in obs.ruled_out_cards()}
    _fill(deck, places[opponent], stock, free, _shown(actions, opponent, obs.trump_suit),
          ruled_out, rng)
    return [c for c in deck if c is not None]


class OpenSpielBot(Bot):
    """A kit bot (`bummerl_kit.Bot`) that asks an OpenSpiel bot: each turn it makes a state of
    `python_schnapsen` from the observation (`state_from_observation`) and plays the action
    the OpenSpiel bot's `step` returns. `make_bot(game)` makes that bot, once per profile;
    `ismcts_bot` is one. Run it like any kit bot (`bummerl-kit mybot.py:MyBot ...`)."""

    def __init__(self, make_bot: Callable[[Any], Any] | None = None,
                 seed: int | None = None) -> None:
        register_openspiel()
        self._make_bot = make_bot or ismcts_bot
        self._bots: dict[Profile, Any] = {}
        self._rng = random.Random(seed)

    def act(self, observation: Observation) -> Action:
        import pyspiel

        profile = observation.profile
        game = pyspiel.load_game(SHORT_NAME, {"profile": profile.value})
        bot = self._bots.get(profile)
        if bot is None:
            bot = self._bots[profile] = self._make_bot(game)
        state = state_from_observation(game, observation, self._rng)
        return encoding.action_of(int(bot.step(state)))


def ismcts_bot(game: Any, simulations: int = 200, seed: int | None = None) -> Any:
    """OpenSpiel's Python IS-MCTS on `game`, with random roll-outs, resampling its worlds by
    `resample_from_infostate`."""
    import numpy as np
    from open_spiel.python.algorithms import ismcts, mcts

    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1,
                                            random_state=np.random.RandomState(seed))
    return ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=simulations,
                            random_state=np.random.RandomState(seed))


class Observer:
    """OpenSpiel's Python observer of `python_schnapsen`: the seat's observation (engine's
    `observe`, the kit's encoding), or with `perfect_recall` its information state."""

    def __init__(self, iig_obs_type: Any, params: Any) -> None:
        import numpy as np
        import pyspiel

        if params:
            raise ValueError(f"{SHORT_NAME}: observation parameters are not supported: {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if (iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
                or not iig_obs_type.public_info):
            raise ValueError(f"{SHORT_NAME} observes for one seat: public information and "
                             "that seat's private information (PrivateInfoType.SINGLE_PLAYER)")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        pieces: list[tuple[str, tuple[int, ...]]] = [(f.name, (f.size,)) for f in encoding.LAYOUT]
        if self.perfect_recall:
            pieces += INFO_PARTS
        size = sum(int(np.prod(shape)) for _, shape in pieces)
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, Any] = {}
        at = 0
        for name, shape in pieces:
            n = int(np.prod(shape))
            self.dict[name] = self.tensor[at:at + n].reshape(shape)
            at += n

    def set_from(self, state: _State, player: int) -> None:
        """Write `player`'s view of `state` into `tensor` (all 0 before the deal ends)."""
        tensor = self.tensor
        tensor.fill(0)
        hand = state.hand
        if hand is None:
            return
        tensor[:encoding.OBSERVATION_SIZE] = encoding.observation_tensor(observe(hand, player))
        if not self.perfect_recall:
            return
        dealt, drawn, actions = state.information_state(player)
        for card in dealt:
            self.dict["dealt"][card.index] = 1
        for i, card in enumerate(drawn):
            self.dict["draws"][i, card.index] = 1
        history = self.dict["history"]
        for i, (who, action) in enumerate(actions):
            history[i, 0 if who == player else 1] = 1
            history[i, 2 + action] = 1

    def string_from(self, state: _State, player: int) -> str:
        """`player`'s view of `state` as text."""
        if self.perfect_recall:
            return _information_string(state, player)
        hand = state.hand
        if hand is None:
            return _deal_string(state, player)
        return _observation_string(observe(hand, player))


def _deal_string(state: _State, player: int) -> str:
    dealer = state.dealer
    head = f"seat {player} {state._profile}"
    if dealer is None:
        return f"{head} dealing"
    dealt, _ = state.private_cards(player)
    cards = " ".join(str(ALL_CARDS[state._deck[p]]) for p in dealt)
    return f"{head} dealer {dealer} dealing; dealt {cards}"


def _information_string(state: _State, player: int) -> str:
    hand = state.hand
    if hand is None:
        return _deal_string(state, player)
    dealt, drawn, actions = state.information_state(player)
    parts = [f"seat {player} {state._profile} dealer {state.dealer}",
             "dealt " + " ".join(str(c) for c in dealt),
             f"trump {state.deck[_TRUMP_POSITION]}"]
    plays = 0
    for who, action in actions:
        parts.append(f"{who}:{encoding.action_of(action)}")
        if action < 20:
            plays += 1
            if plays % 2 == 0 and plays // 2 <= len(drawn):
                parts.append(f"drew {drawn[plays // 2 - 1]}")
    return "; ".join(parts)


def _observation_string(obs: Observation) -> str:
    parts = [f"seat {obs.seat} {obs.profile} dealer {obs.dealer}",
             "hand " + " ".join(str(c) for c in obs.hand),
             f"opponent holds {obs.opponent_hand_size}",
             f"trump {obs.trump_card}" + ("" if obs.trump_card_face_up else " (seen)"),
             f"stock {obs.stock_size}"]
    if obs.closed_by is not None:
        parts.append(f"closed by {obs.closed_by} after {obs.closed_after}")
    tricks = " ".join(f"{t.leader}:{t.lead}-{t.follow}>{t.winner}" for t in obs.tricks)
    parts.append(f"tricks {tricks}")
    if obs.marriages:
        parts.append("marriages " + " ".join(f"{m.seat}:{m.suit}@{m.trick}"
                                             for m in obs.marriages))
    if obs.exchanges:
        parts.append("exchanges " + " ".join(f"{e.seat}:{e.taken}" for e in obs.exchanges))
    parts.append(f"points {obs.points}+{obs.pending_points} tricks {obs.tricks_won}:"
                 f"{obs.opponent_tricks_won}")
    parts.append(f"lead {obs.lead_card or '-'} by {obs.leader}")
    parts.append(f"to act {'-' if obs.to_act is None else obs.to_act}")
    return "; ".join(parts)


__all__ = ["SHORT_NAME", "Observer", "OpenSpielBot", "ismcts_bot", "register_openspiel",
           "state_from_observation"]
