"""Actions: small interned values that round-trip through text (`"play TH"`, `"declare H"`)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from engine.cards import ALL_CARDS, SUITS, Card, Suit


class ActionKind(StrEnum):
    """What a player does (R3 play, R4 exchange, R6 close, R5 declare, R7 claim)."""

    PLAY = "play"
    EXCHANGE = "exchange"
    CLOSE = "close"
    DECLARE = "declare"
    CLAIM = "claim"


class Action:
    """One action. There is exactly one instance per distinct action, so `is` and `==` agree.

    Text forms: `play TH`, `exchange`, `close`, `declare H`, `claim`.
    """

    __slots__ = ("kind", "card", "suit", "_text")

    kind: ActionKind
    card: Card | None
    suit: Suit | None

    def __init__(self, kind: ActionKind, card: Card | None = None, suit: Suit | None = None):
        if _INTERNED:
            raise TypeError("Action values are interned: use Action.play(), Action.from_text()")
        self.kind = kind
        self.card = card
        self.suit = suit
        arg = card if card is not None else suit
        self._text = kind.value if arg is None else f"{kind.value} {arg}"

    # -- builders -------------------------------------------------------------------------
    @staticmethod
    def play(card: Card | str) -> Action:
        """Play `card` (lead or follow)."""
        if isinstance(card, str):
            card = Card.from_text(card)
        return PLAY_ACTIONS[card.index]

    @staticmethod
    def exchange() -> Action:
        """Exchange the trump jack for the face-up trump card (R4.1)."""
        return EXCHANGE

    @staticmethod
    def close() -> Action:
        """Close the stock (R6.1)."""
        return CLOSE

    @staticmethod
    def declare(suit: Suit | str) -> Action:
        """Declare the marriage (K and Q) of `suit` (R5.1)."""
        return DECLARE_ACTIONS[SUITS.index(Suit(suit))]

    @staticmethod
    def claim() -> Action:
        """Claim to have 66 points (R7.1)."""
        return CLAIM

    # -- text and dicts -------------------------------------------------------------------
    @staticmethod
    def from_text(text: str) -> Action:
        """The action written `text`; raises ValueError naming what is wrong."""
        if not isinstance(text, str):
            raise ValueError(f"an action is text, not {type(text).__name__}")
        action = _BY_TEXT.get(" ".join(text.split()).lower())
        if action is None:
            raise ValueError(
                f"unknown action {text!r}: expected 'play <card>', 'exchange', 'close', "
                "'declare <suit>' or 'claim'"
            )
        return action

    def to_dict(self) -> dict[str, str]:
        """The conformance-case form: `{"do": "play", "card": "TH"}`."""
        out = {"do": self.kind.value}
        if self.card is not None:
            out["card"] = str(self.card)
        if self.suit is not None:
            out["suit"] = self.suit.value
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Action:
        """The action from its dict form; raises ValueError naming what is wrong."""
        do = data.get("do")
        if do == "play":
            card = data.get("card")
            if not isinstance(card, str):
                raise ValueError("a 'play' action needs a 'card', like \"TH\"")
            return Action.play(Card.from_text(card))
        if do == "declare":
            suit = data.get("suit")
            if not isinstance(suit, str) or suit.upper() not in {s.value for s in SUITS}:
                raise ValueError("a 'declare' action needs a 'suit': one of C D H S")
            return Action.declare(suit.upper())
        if do in ("exchange", "close", "claim"):
            return _BY_TEXT[do]
        raise ValueError(
            f"unknown action {do!r}: expected play, exchange, close, declare or claim"
        )

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Action({self._text!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Action.from_text, (self._text,))


_INTERNED = False
PLAY_ACTIONS: tuple[Action, ...] = tuple(Action(ActionKind.PLAY, card=c) for c in ALL_CARDS)
DECLARE_ACTIONS: tuple[Action, ...] = tuple(Action(ActionKind.DECLARE, suit=s) for s in SUITS)
EXCHANGE = Action(ActionKind.EXCHANGE)
CLOSE = Action(ActionKind.CLOSE)
CLAIM = Action(ActionKind.CLAIM)
_INTERNED = True

_BY_TEXT: dict[str, Action] = {
    str(a).lower(): a for a in (*PLAY_ACTIONS, *DECLARE_ACTIONS, EXCHANGE, CLOSE, CLAIM)
}
