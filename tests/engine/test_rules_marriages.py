"""Unit tests for R5 (marriages: 20/40, pending and effective, the lead after declaring)."""

from __future__ import annotations

import pytest
from rules_helpers import DECK_A, DECK_B, deck_of, legal, rejected, result, run

from engine import (
    Action,
    Card,
    Marriage,
    Suit,
    observe,
)


def test_r5_1_marriage_in_a_plain_suit_is_20() -> None:
    """R5.1: K and Q of a plain suit: 20 (pending until a trick is won, R5.3)."""
    hand = run(DECK_B, "0 declare S")
    obs = observe(hand, 0)
    assert obs.marriages == (Marriage(0, Suit.SPADES, 0),)
    assert obs.pending_points == 20
    assert obs.points == 0
    assert observe(hand, 1).marriages == obs.marriages


def test_r5_1_marriage_in_trumps_is_40() -> None:
    """R5.1: the trump marriage is worth 40; effective at once after a trick was won."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS")
    assert hand.points(0) == 15
    hand.apply(0, Action.declare("H"))
    assert hand.points(0) == 55
    assert observe(hand, 0).pending_points == 0


@pytest.mark.parametrize(("steps", "marriage_cards"), [
    ("0 declare S", {"play KS", "play QS"}),
    ("0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 declare H", {"play KH", "play QH"}),
])
def test_r5_1_lead_must_be_the_king_or_the_queen(steps: str, marriage_cards: set[str]) -> None:
    """R5.1: after declaring, the card led must be that K or that Q (either, soft)."""
    deck = DECK_B if steps == "0 declare S" else DECK_A
    hand = run(deck, steps)
    plays = {a for a in legal(hand) if a.startswith("play")}
    assert plays == marriage_cards
    for card in hand.holding(0):
        text = f"play {card}"
        if text not in marriage_cards:
            assert rejected(hand, 0, text) == "R5.1"
    for text in marriage_cards:  # either one may be led
        copy = hand.copy()
        copy.apply(0, Action.from_text(text))
        assert copy.lead_card == Card.from_text(text.split()[1])


def test_r5_1_declaring_needs_both_king_and_queen() -> None:
    """R5.1: no marriage without holding both cards; only the player on lead declares."""
    hand = run(DECK_B)
    assert {a for a in legal(hand) if a.startswith("declare")} == {"declare S"}
    for suit in "CDH":
        assert rejected(hand, 0, f"declare {suit}") == "R5.1"
    hand = run(deck_of("AS TC JC JD JH", "KS QS KC QC AH", "AD"), "0 play AS")
    assert rejected(hand, 1, "declare S") == "R5.1"  # the follower may not declare


def test_r5_2_one_marriage_per_lead_and_trumps_unchanged() -> None:
    """R5.2: at most one marriage per lead; a marriage never changes trumps."""
    hand = run(deck_of("KS QS KC QC JD", "AS TS AC TC AH", "AD"))
    assert {"declare S", "declare C"} <= legal(hand)
    hand.apply(0, Action.declare("S"))
    assert not {a for a in legal(hand) if a.startswith("declare")}
    assert rejected(hand, 0, "declare C") == "R5.1"
    assert hand.trump_suit == "D"
    assert hand.trump_card == Card.from_text("AD")
    assert observe(hand, 0).trump_suit == Suit.DIAMONDS


def test_r5_2_second_marriage_on_a_later_lead() -> None:
    """R5.2: the second marriage may be declared on a later lead."""
    hand = run(deck_of("KS QS KC QC JD", "JS TS AC TC AH", "AD"),
               "0 declare S; 0 play KS; 1 play JS")
    assert hand.tricks_won(0) == 1
    assert "declare C" in legal(hand)
    hand.apply(0, Action.declare("C"))
    assert hand.points(0) == 6 + 20 + 20


# Deck B: exchange, declare spades, lose a trick, then win one (docs/rules.md, example 4).
PENDING = "0 exchange; 0 declare S; 0 play QS; 1 play AS"


def test_r5_3_pending_then_effective() -> None:
    """R5.3: marriage points are pending until the declarer wins a trick, then effective."""
    hand = run(DECK_B, PENDING)
    obs = observe(hand, 0)
    assert (obs.points, obs.pending_points, obs.tricks_won) == (0, 20, 0)
    assert hand.points(1) == 14
    hand.apply(1, Action.from_text("play QC"))
    hand.apply(0, Action.from_text("play TC"))
    obs = observe(hand, 0)
    assert (obs.points, obs.pending_points, obs.tricks_won) == (33, 0, 1)
    assert hand.points(0) == 33


def test_r5_3_never_effective_without_a_trick() -> None:
    """R5.3: a declarer who wins no trick never counts the marriage (here: a false claim)."""
    hand = run(DECK_B, PENDING + "; 1 claim")
    assert hand.result == result(0, 3, "false_claim", (0, 14), (0, 1))


def test_r5_3_trick_won_before_declaring() -> None:
    """R5.3: a trick won before the declaration makes the marriage effective at once."""
    hand = run(deck_of("KS QS KC QC JD", "JS TS AC TC AH", "AD"), "0 play QC; 1 play TS")
    assert hand.tricks_won(0) == 1 and hand.points(0) == 13
    hand.apply(0, Action.declare("S"))
    assert hand.points(0) == 33
    assert observe(hand, 0).pending_points == 0


def test_r5_4_declare_on_the_first_lead_soft() -> None:
    """R5.4: soft profile: a marriage may be declared on the very first lead."""
    hand = run(DECK_B)
    assert "declare S" in legal(hand)


def test_r5_4_declare_with_the_stock_closed() -> None:
    """R5.4: a marriage may be declared after a close (and before it, R6.1)."""
    hand = run(DECK_B, "0 close; 0 declare S")
    assert observe(hand, 0).pending_points == 20
    hand = run(DECK_B, "0 declare S; 0 close")
    assert hand.closed_by == 0
    assert {a for a in legal(hand) if a.startswith("play")} == {"play KS", "play QS"}


def test_r5_4_declare_with_the_stock_exhausted() -> None:
    """R5.4: a marriage may be declared once the stock is exhausted."""
    deck = "AD AS JC KC TC QD JS TH KD AH JD QS QH KH TS AC TD QC JH KS"
    hand = run(deck, "0 play KD; 1 play TC; 0 play AS; 1 play QH; 0 play TH; 1 play AH; "
                     "1 play QD; 0 play AD; 0 play JC; 1 play JH")
    assert hand.stock_size == 0 and hand.closed_by is None
    assert hand.to_act == 0 and hand.trump_suit == "S"
    assert "declare S" in legal(hand)
    before = hand.points(0)
    hand.apply(0, Action.declare("S"))
    assert hand.points(0) == before + 40


def test_r5_5_points_are_card_points_plus_effective_marriages() -> None:
    """R5.5: points = card points of tricks won + effective marriage points."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 declare H; "
                       "0 play QH; 1 play JS; 0 play TS; 1 play JD")
    # card points: AS+KS 15, QH+JS 5, TS+JD 12 = 32; marriage 40
    assert hand.points(0) == 72
    assert hand.points(1) == 5
    assert observe(hand, 0).points == 72
