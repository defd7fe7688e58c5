"""Helpers shared by the rule tests: the two decks of docs/rules.md, dealing a deck, applying
steps written as text, and checking that an illegal action is refused and changes nothing."""

from __future__ import annotations

import pytest

from engine import (
    ALL_CARDS,
    Action,
    Card,
    Hand,
    HandResult,
    IllegalActionError,
    Profile,
    Reason,
    observe,
)

# Deck A of docs/rules.md (dealer 1): seat 0 JC AS TS KH QH, seat 1 QC KS JS JD QD, trump TH,
# stock KC QS AD TC JH AC KD TD AH.
DECK_A = "JC AS TS QC KS JS TH KH QH JD QD KC QS AD TC JH AC KD TD AH"
# Deck B of docs/rules.md (dealer 1): seat 0 JD KS QS TC JC, seat 1 AS TS KC QC AH, trump AD,
# stock KH JS TD AC QH JH KD TH QD.
DECK_B = "JD KS QS AS TS KC AD TC JC QC AH KH JS TD AC QH JH KD TH QD"


def cards(text: str) -> list[Card]:
    return [Card.from_text(t) for t in text.split()]


def deck_of(forehand: str, dealer: str, trump: str, stock: str | None = None) -> str:
    """The deck (top first) that deals `forehand` to the non-dealer and `dealer` to the dealer
    (three cards, then two, R2.2), turns up `trump` and leaves `stock` (top first; by default
    the other nine cards in index order) face down."""
    fh, dh = forehand.split(), dealer.split()
    used = {*fh, *dh, trump}
    rest = stock.split() if stock is not None else [str(c) for c in ALL_CARDS
                                                      if str(c) not in used]
    deck = [*fh[:3], *dh[:3], trump, *fh[3:], *dh[3:], *rest]
    assert sorted(deck) == sorted(str(c) for c in ALL_CARDS), "not a full deck"
    return " ".join(deck)


def run(deck: str | list[Card], steps: str = "", dealer: int = 1,
        profile: str = "soft") -> Hand:
    """Deal `deck` (top card first) and apply `steps`, like "0 play JC; 1 play QC; 1 claim"."""
    hand = Hand(cards(deck) if isinstance(deck, str) else deck, dealer, Profile(profile))
    for step in filter(None, (s.strip() for s in steps.split(";"))):
        seat, text = step.split(" ", 1)
        hand.apply(int(seat), Action.from_text(text))
    return hand


def legal(hand: Hand) -> set[str]:
    return {str(a) for a in hand.legal_actions()}


def held(hand: Hand, seat: int) -> set[str]:
    return {str(c) for c in hand.holding(seat)}


def snapshot(hand: Hand) -> tuple:
    return (observe(hand, 0).to_dict(), observe(hand, 1).to_dict(), list(hand.history),
            hand.stock_cards(), hand.holding(0), hand.holding(1), hand.result)


def rejected(hand: Hand, seat: int, text: str) -> str:
    """Apply an illegal action: check it raises, changes nothing; return the rule it cites."""
    before = snapshot(hand)
    with pytest.raises(IllegalActionError) as err:
        hand.apply(seat, Action.from_text(text))
    assert snapshot(hand) == before
    assert str(err.value).startswith(err.value.rule + " ")
    return err.value.rule


def result(winner: int, game_points: int, reason: str, points: tuple[int, int],
           tricks: tuple[int, int]) -> HandResult:
    return HandResult(winner, game_points, Reason(reason), points, tricks)
