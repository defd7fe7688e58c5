"""The match (Bummerl, R9): hands dealt in turn, counters from 7 down, the first at 0 wins."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.actions import Action
from engine.cards import Card
from engine.deal import deck_for, first_dealer_for
from engine.errors import IllegalActionError
from engine.hand import Hand, HandResult
from engine.observation import Observation, observe
from engine.rules import MATCH_POINTS, Profile


class Match:
    """A Bummerl between seats 0 and 1.

    With a `seed`, the first dealer (unless given) and every hand's deck come from it (R2), so a
    match is re-played from its seed and actions. `decks` deals the first hands from explicit
    decks instead. Without a deck for the next hand, the match waits for `deal(deck)`.
    """

    def __init__(self, seed: int | str | None = None, profile: Profile | str = Profile.SOFT,
                 first_dealer: int | None = None,
                 decks: Sequence[Sequence[Card]] | None = None) -> None:
        if first_dealer is None:
            if seed is None:
                raise ValueError("a match needs a seed or an explicit first dealer")
            first_dealer = first_dealer_for(seed)
        if first_dealer not in (0, 1):
            raise ValueError(f"first_dealer must be seat 0 or 1, not {first_dealer!r}")
        self.seed = seed
        self.profile = Profile(profile)
        self.first_dealer = first_dealer
        self._decks = list(decks) if decks is not None else []
        self.counters: tuple[int, int] = (MATCH_POINTS, MATCH_POINTS)
        self.winner: int | None = None
        self.hands: list[Hand] = []
        self.results: list[HandResult] = []
        self.to_act: int | None = None  # the seat to act; None when over or waiting for a deal
        self._deal_next()

    @classmethod
    def replay(cls, seed: int | str, profile: Profile | str,
               actions: Iterable[tuple[int, Action]], first_dealer: int | None = None) -> Match:
        """The match from its seed and action list (raises IllegalActionError on a bad one)."""
        match = cls(seed, profile, first_dealer)
        for seat, action in actions:
            match.apply(seat, action)
        return match

    # --- reading ---------------------------------------------------------------------------
    @property
    def hand(self) -> Hand:
        """The hand under way (or the last one, once the match is over)."""
        return self.hands[-1]

    @property
    def history(self) -> list[tuple[int, Action]]:
        """Every action of the match so far, in order, as `(seat, action)`."""
        return [step for hand in self.hands for step in hand.history]

    @property
    def hand_number(self) -> int:
        return len(self.hands) - 1

    @property
    def dealer(self) -> int:
        return self.hand.dealer

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def schneider(self) -> bool:
        """A Schneider-Bummerl: the loser is still at 7 (R9.1; recorded only)."""
        return self.winner is not None and self.counters[1 - self.winner] == MATCH_POINTS

    def legal_actions(self) -> tuple[Action, ...]:
        # Once the match is over, its last hand is over too and has no legal actions.
        return self.hands[-1].legal_actions() if self.hands else ()

    def observe(self, seat: int) -> Observation:
        """What `seat` may know now (R10), with both match counters."""
        hands = self.hands
        return observe(hands[-1], seat, self.counters, len(hands) - 1)

    # --- acting ----------------------------------------------------------------------------
    def apply(self, seat: int, action: Action) -> HandResult | None:
        """Apply `action` by `seat`; returns the hand's result when this action ended a hand.

        Raises IllegalActionError (and changes nothing) when the action is not allowed.
        """
        if self.winner is not None:
            raise IllegalActionError("R8.6", "the match is over")
        if not self.hands:
            raise IllegalActionError("R8.6", "no hand is under way: deal one first")
        hand = self.hands[-1]
        hand.apply(seat, action)
        result = hand.result
        if result is None:
            self.to_act = hand.to_act
            return None
        self.to_act = None
        self.results.append(result)
        counters = list(self.counters)
        counters[result.winner] -= result.game_points
        self.counters = (counters[0], counters[1])
        if counters[result.winner] <= 0:
            self.winner = result.winner
        else:
            self._deal_next()
        return result

    def deal(self, deck: Sequence[Card]) -> None:
        """Deal the next hand from `deck` when the match has no deck of its own for it."""
        if self.winner is not None:
            raise ValueError("the match is over")
        if self.hands and not self.hand.is_over:
            raise ValueError("the hand under way is not over")
        self._decks.append(deck)
        self._deal_next()

    def _deal_next(self) -> None:
        number = len(self.hands)
        if number < len(self._decks):
            deck = list(self._decks[number])
        elif self.seed is not None:
            deck = deck_for(self.seed, number)
        else:
            return
        dealer = self.first_dealer if number % 2 == 0 else 1 - self.first_dealer  # R2.1
        hand = Hand(deck, dealer, self.profile)
        self.hands.append(hand)
        self.to_act = hand.to_act

    @property
    def waiting_for_deal(self) -> bool:
        """True when the last hand is over, the match is not, and no deck is known."""
        return self.winner is None and (not self.hands or self.hand.is_over)
