"""The worked examples of docs/rules.md, step by step, so the page stays true to the engine."""

from __future__ import annotations

from pathlib import Path

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

DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


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
    assert (hand.points(0), hand.observe(0).pending_points) == (0, 20)
    assert {a for a in legal(hand) if a.startswith("play")} == {"play KS", "play QS"}
    step(hand, "0 play QS")
    step(hand, "1 play AS")
    assert points(hand) == (0, 14)
    assert "KH" in held(hand, 1) and "JS" in held(hand, 0)
    assert hand.observe(1).known_opponent_cards() == set(cards("KS AD"))
    step(hand, "1 play QC")
    step(hand, "0 play TC")
    assert points(hand) == (33, 14)
    assert hand.observe(0).pending_points == 0
    sharp = run(DECK_B, profile="sharp")
    assert rejected(sharp, 0, "exchange") == "R4.1"
    assert rejected(sharp, 0, "declare S") == "R5.1"
