"""The action log in words: `play TH` → `plays 10♥` (public actions only)."""

from __future__ import annotations

SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
RANKS = {"A": "A", "T": "10", "K": "K", "Q": "Q", "J": "J"}


def card(text: str) -> str:
    """`TH` → `10♥`; anything else as it is."""
    if len(text) == 2 and text[0] in RANKS and text[1] in SUITS:
        return RANKS[text[0]] + SUITS[text[1]]
    return text


def describe(action: str) -> str:
    """One logged action (engine text) as a phrase; unknown text is returned as it is."""
    kind, _, arg = action.partition(" ")
    if kind == "play":
        return f"plays {card(arg)}"
    if kind == "declare":
        return f"declares the marriage in {SUITS.get(arg, arg)}"
    if kind == "exchange":
        return "exchanges the trump jack for the trump card"
    if kind == "close":
        return "closes the stock"
    if kind == "claim":
        return "claims 66"
    return action
