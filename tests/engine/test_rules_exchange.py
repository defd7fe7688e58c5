"""Unit tests for R4.1 (exchanging the trump jack), soft and sharp, from explicit decks."""

from __future__ import annotations

from rules_helpers import DECK_A, DECK_B, cards, deck_of, held, legal, rejected, run

from engine import (
    Action,
    Card,
    Exchange,
    observe,
)

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
        obs = observe(hand, seat)
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
    assert observe(hand, 0).pending_points == 40
