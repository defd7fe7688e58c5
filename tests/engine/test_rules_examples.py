"""The worked examples of docs/rules.md, step by step, so the page stays true to the engine."""

from __future__ import annotations

from pathlib import Path

from rules_helpers import DECK_A, DECK_B, cards, held, legal, rejected, result, run

from engine import (
    Action,
    Hand,
    observe,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def points(hand: Hand) -> tuple[int, int]:
    return hand.points(0), hand.points(1)


def step(hand: Hand, text: str) -> None:
    seat, action = text.split(" ", 1)
    hand.apply(int(seat), Action.from_text(action))


def test_the_decks_are_the_ones_on_the_page() -> None:
    """docs/rules.md shows decks A and B and their deals."""
    text = DOC.read_text()
    assert f"`{DECK_A}`" in text
    assert f"`{DECK_B}`" in text
    for rule in ("R1.1", "R2.2", "R3.4", "R4.1", "R5.3", "R6.3", "R7.4", "R8.4", "R9.3",
                 "R10.2", "R11.1"):
        assert f"**{rule}**" in text


def test_example_1_correct_claim() -> None:
    """Example 1 (R5.3, R7.2, R8.1): 72 against 5 with a trick: 2 game points."""
    hand = run(DECK_A)
    assert held(hand, 0) == {"JC", "AS", "TS", "KH", "QH"}
    assert held(hand, 1) == {"QC", "KS", "JS", "JD", "QD"}
    table = [
        ("0 play JC; 1 play QC", (0, 5)),
        ("1 play KS; 0 play AS", (15, 5)),
        ("0 declare H", (55, 5)),
        ("0 play QH; 1 play JS", (60, 5)),
        ("0 play TS; 1 play JD", (72, 5)),
    ]
    for steps, expected in table:
        for text in steps.split("; "):
            step(hand, text)
        assert points(hand) == expected, steps
    assert "exchange" in legal(hand)  # the aside: JH on lead, AH above TH
    assert hand.stock_cards() == tuple(cards("AH TH"))
    step(hand, "0 claim")
    assert hand.result == result(0, 2, "claim", (72, 5), (3, 1))


def test_example_2_false_claims() -> None:
    """Example 2 (R8.2): a false claim scores 3, or 2 when the claimer's opponent has a trick."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 claim")
    assert hand.result == result(0, 3, "false_claim", (0, 5), (0, 1))
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 claim")
    assert hand.result == result(1, 2, "false_claim", (15, 5), (1, 1))


def test_example_3_failed_close() -> None:
    """Example 3 (R6.3, R8.4): the closer fails; the position at closing gives 3."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 close")
    assert hand.stock_size == 8
    assert held(hand, 0) == {"AS", "TS", "KH", "QH", "QS"}
    assert held(hand, 1) == {"KS", "JS", "JD", "QD", "KC"}
    table = [
        ("1 play KC", {"play KH", "play QH"}, "0 play QH", (7, 5)),
        ("0 play AS", {"play KS", "play JS"}, "1 play JS", (20, 5)),
        ("0 play TS", {"play KS"}, "1 play KS", (34, 5)),
        ("0 play KH", {"play JD", "play QD"}, "1 play JD", (40, 5)),
        ("0 play QS", {"play QD"}, "1 play QD", (46, 5)),
    ]
    for lead, allowed, follow, expected in table:
        step(hand, lead)
        assert legal(hand) == allowed, lead
        step(hand, follow)
        assert points(hand) == expected, lead
    assert hand.result == result(0, 3, "closer_failed", (46, 5), (5, 1))
    in_stock = sum(c.points for c in hand.stock_cards())
    assert in_stock == 69 and 46 + 5 + in_stock == 120


def test_example_4_exchange_and_marriage_pending_then_effective() -> None:
    """Example 4 (R4.1, R5.1, R5.3): exchange, 20 pending, then effective with the first
    trick won."""
    hand = run(DECK_B)
    assert held(hand, 0) == {"JD", "KS", "QS", "TC", "JC"}
    assert held(hand, 1) == {"AS", "TS", "KC", "QC", "AH"}
    step(hand, "0 exchange")
    assert held(hand, 0) == {"KS", "QS", "TC", "JC", "AD"}
    assert hand.stock_cards() == tuple(cards("KH JS TD AC QH JH KD TH QD JD"))
    step(hand, "0 declare S")
    assert (hand.points(0), observe(hand, 0).pending_points) == (0, 20)
    assert {a for a in legal(hand) if a.startswith("play")} == {"play KS", "play QS"}
    step(hand, "0 play QS")
    step(hand, "1 play AS")
    assert points(hand) == (0, 14)
    assert "KH" in held(hand, 1) and "JS" in held(hand, 0)
    assert observe(hand, 1).known_opponent_cards() == set(cards("KS AD"))
    step(hand, "1 play QC")
    step(hand, "0 play TC")
    assert points(hand) == (33, 14)
    assert observe(hand, 0).pending_points == 0
    sharp = run(DECK_B, profile="sharp")
    assert rejected(sharp, 0, "exchange") == "R4.1"
    assert rejected(sharp, 0, "declare S") == "R5.1"
