"""Unit tests for R6 (closing the stock: when, what changes, the position at closing)."""

from __future__ import annotations

import pytest
from rules_helpers import DECK_A, DECK_B, legal, rejected, result, run

from engine import (
    Action,
    Card,
    observe,
)

LAST_DRAW = "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 play QH; 1 play JS; 0 play TS; 1 play JD"
# docs/rules.md example 3: seat 1 closes after winning the first trick
FAILED_CLOSE = ("0 play JC; 1 play QC; 1 close; 1 play KC; 0 play QH; 0 play AS; 1 play JS; "
                "0 play TS; 1 play KS; 0 play KH; 1 play JD; 0 play QS; 1 play QD")


@pytest.mark.parametrize("profile", ["soft", "sharp"])
def test_r6_1_close_before_the_first_trick(profile: str) -> None:
    """R6.1: the player on lead may close before the first trick (both profiles)."""
    hand = run(DECK_B, profile=profile)
    assert "close" in legal(hand)
    hand.apply(0, Action.close())
    assert hand.closed_by == 0
    assert hand.to_act == 0
    assert "close" not in legal(hand)  # not twice
    assert rejected(hand, 0, "close") == "R6.1"
    for seat in (0, 1):
        assert observe(hand, seat).closed_by == 0
        assert observe(hand, seat).closed_after == 0


def test_r6_1_soft_close_at_stock_size_two() -> None:
    """R6.1: soft: closing is allowed with one face-down card + the trump card left."""
    hand = run(DECK_A, LAST_DRAW)
    assert hand.stock_size == 2
    assert "close" in legal(hand)
    hand.apply(0, Action.close())
    assert hand.closed_by == 0
    assert observe(hand, 1).closed_after == 4


def test_r6_1_sharp_no_close_at_stock_size_two() -> None:
    """R6.1 with R9.3: sharp: no close with only one face-down card + the trump card left."""
    hand = run(DECK_A, LAST_DRAW, profile="sharp")
    assert hand.stock_size == 2
    assert "close" not in legal(hand)
    assert rejected(hand, 0, "close") == "R6.1"
    # one trick earlier (stock size 4) the sharp profile does allow it
    earlier = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 play QH; 1 play JS",
                  profile="sharp")
    assert earlier.stock_size == 4
    assert "close" in legal(earlier)


def test_r6_1_not_after_exhaustion() -> None:
    """R6.1: an exhausted stock cannot be closed."""
    hand = run(DECK_A, LAST_DRAW + "; 0 play QS; 1 play TD")
    assert hand.stock_size == 0
    assert "close" not in legal(hand)
    assert rejected(hand, 0, "close") == "R6.1"


def test_r6_1_only_the_player_on_lead() -> None:
    """R6.1: the follower may not close."""
    hand = run(DECK_A, "0 play JC")
    assert rejected(hand, 1, "close") == "R6.1"


@pytest.mark.parametrize("steps", [
    "0 exchange; 0 declare S; 0 close",
    "0 declare S; 0 exchange; 0 close",
    "0 declare S; 0 close",
    "0 exchange; 0 close; 0 declare S",
    "0 close; 0 declare S",
])
def test_r6_1_exchange_and_declaration_before_the_close_in_any_order(steps: str) -> None:
    """R6.1: exchange and marriage may come before the close in any order; after it, no
    exchange."""
    hand = run(DECK_B, steps)
    assert hand.closed_by == 0
    assert "exchange" not in legal(hand)
    assert {a for a in legal(hand) if a.startswith("play")} == {"play KS", "play QS"}


def test_r6_2_no_drawing_and_strict_play_at_once() -> None:
    """R6.2: after the close nobody draws, and strict play applies from the next trick."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 close")
    stock = hand.stock_cards()
    hand.apply(1, Action.from_text("play KC"))
    # seat 0 (AS TS KH QH QS) is void in clubs: it must trump
    assert legal(hand) == {"play KH", "play QH"}
    hand.apply(0, Action.from_text("play QH"))
    assert len(hand.holding(0)) == 4 and len(hand.holding(1)) == 4  # nobody drew
    assert hand.stock_cards() == stock
    assert hand.stock_size == 8
    obs = observe(hand, 0)
    assert obs.trump_card == Card.from_text("TH")  # still known ...
    assert obs.trump_card_face_up is False  # ... but no longer face up
    assert obs.closed_by == 1


def test_r6_3_failed_close_scored_from_the_position_at_closing() -> None:
    """R6.3 / R8.4: the closer's opponent had no trick at closing: 3, though it won 5 since."""
    hand = run(DECK_A, FAILED_CLOSE)
    assert hand.result == result(0, 3, "closer_failed", (46, 5), (5, 1))


def test_r6_3_position_at_closing_counts_effective_marriages() -> None:
    """R6.3: the opponent's points at closing include its effective marriages (R5.5):
    34 = 14 card points + 20, so the closer's correct claim scores 1, not 2."""
    deck = "KH TC QH AH AC KD TS AD TH JS QS QC KS AS TD JH JD JC QD KC"
    hand = run(deck, "0 declare H; 0 play QH; 1 play AC; 0 play TH; 1 play AH; 1 exchange; "
                     "1 close; 1 declare S; 1 play QS; 0 play KH; 1 claim")
    assert hand.result == result(1, 1, "closer_claim", (34, 68), (1, 2))
