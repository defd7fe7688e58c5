"""Unit tests for R4.1 (exchanging the trump jack), soft and sharp, from explicit decks."""

from __future__ import annotations

import pytest

from engine import (
    ALL_CARDS,
    Action,
    Card,
    Exchange,
    Hand,
    HandResult,
    IllegalActionError,
    Profile,
    Reason,
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
    return (hand.observe(0).to_dict(), hand.observe(1).to_dict(), list(hand.history),
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

LAST_DRAW = "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 play QH; 1 play JS; 0 play TS; 1 play JD"


def test_r4_1_exchange_before_the_first_trick_soft() -> None:
    """R4.1: the player on lead with the trump jack swaps it for the face-up trump card."""
    hand = run(DECK_B)
    assert "exchange" in legal(hand)
    hand.apply(0, Action.exchange())
    assert held(hand, 0) == {"AD", "KS", "QS", "TC", "JC"}
    assert hand.trump_card == Card.from_text("JD")  # the jack is the face-up trump card
    assert hand.trump_suit == "D"  # trumps do not change
    assert hand.stock_size == 10
    assert hand.stock_cards()[-1] == Card.from_text("JD")
    assert hand.stock_cards()[0] == Card.from_text("KH")
    assert hand.to_act == 0  # still seat 0's lead
    assert hand.lead_card is None
    assert "exchange" not in legal(hand)  # it no longer holds the jack
    for seat in (0, 1):
        obs = hand.observe(seat)
        assert obs.exchanges == (Exchange(0, Card.from_text("AD")),)
        assert obs.trump_card == Card.from_text("JD")
        assert obs.trump_card_face_up is True


def test_r4_1_only_with_the_trump_jack() -> None:
    """R4.1: without the trump jack there is no exchange."""
    hand = run(DECK_A, "0 play JC; 1 play QC")  # seat 1 on lead, no JH
    assert "exchange" not in legal(hand)
    assert rejected(hand, 1, "exchange") == "R4.1"


def test_r4_1_only_the_player_on_lead() -> None:
    """R4.1: the follower holding the trump jack may not exchange."""
    hand = run(deck_of("AS KC QC TC JC", "JD KD QD TS QS", "AD"), "0 play AS")
    assert "JD" in held(hand, 1)
    assert "exchange" not in legal(hand)
    assert rejected(hand, 1, "exchange") == "R4.1"


def test_r4_1_allowed_at_stock_size_two() -> None:
    """R4.1: one face-down card above the trump card (stock size 2) is enough."""
    hand = run(DECK_A, LAST_DRAW)
    assert hand.stock_size == 2
    assert "JH" in held(hand, 0)
    assert "exchange" in legal(hand)
    hand.apply(0, Action.exchange())
    assert hand.stock_cards() == tuple(cards("AH JH"))
    assert "TH" in held(hand, 0)


def test_r4_1_not_after_exhaustion() -> None:
    """R4.1: once the stock is exhausted the trump jack cannot be exchanged."""
    hand = run(DECK_A, LAST_DRAW + "; 0 play QS; 1 play TD")
    assert hand.stock_size == 0
    assert "JH" in held(hand, 0) and hand.to_act == 0
    assert "exchange" not in legal(hand)
    assert rejected(hand, 0, "exchange") == "R4.1"


def test_r4_1_not_after_the_close() -> None:
    """R4.1 / R6.1: exchange may come before the close, never after it."""
    hand = run(DECK_B, "0 close")
    assert "exchange" not in legal(hand)
    assert rejected(hand, 0, "exchange") == "R4.1"
    hand = run(DECK_B, "0 exchange; 0 close")
    assert hand.closed_by == 0
    assert "AD" in held(hand, 0)


def test_r4_1_soft_allows_exchange_before_winning_a_trick() -> None:
    """R4.1 (soft): allowed before the player has won any trick, and also after."""
    hand = run(DECK_B)
    assert hand.tricks_won(0) == 0
    assert "exchange" in legal(hand)
    hand = run(DECK_A, LAST_DRAW)
    assert hand.tricks_won(0) > 0
    assert "exchange" in legal(hand)


def test_r4_1_sharp_needs_a_trick_won() -> None:
    """R4.1 with R9.3 (sharp): exchanging requires having won a trick in this hand."""
    hand = run(DECK_B, profile="sharp")
    assert "exchange" not in legal(hand)
    assert rejected(hand, 0, "exchange") == "R4.1"
    hand = run(DECK_A, LAST_DRAW, profile="sharp")
    assert hand.tricks_won(0) == 3
    assert "exchange" in legal(hand)
    hand.apply(0, Action.exchange())
    assert hand.trump_card == Card.from_text("JH")


def test_r4_1_exchanged_card_completes_a_marriage() -> None:
    """R4.1 with R5.1: the trump card taken by an exchange counts at once for a marriage."""
    hand = run(deck_of("JH KH AS TC QC", "KS JS AC KC TS", "QH"))
    assert "declare H" not in legal(hand)
    hand.apply(0, Action.exchange())
    assert "declare H" in legal(hand)
    hand.apply(0, Action.declare("H"))
    assert hand.observe(0).pending_points == 40
