"""Unit tests for R7 (claiming 66) and R8 (scoring a hand: every reason and game-point value).

Every scenario is an explicit deck (top card first, seat 1 deals, R2.2) and action list; the
expected results were worked out from RULES.md (card points A 11, T 10, K 4, Q 3, J 2).
"""

from __future__ import annotations

import pytest
from rules_helpers import DECK_A, DECK_B, legal, rejected, result, run

from engine import (
    Action,
    Reason,
)


# --- R7.1 when a claim is allowed ------------------------------------------------------------
def test_r7_1_no_claim_on_the_first_lead() -> None:
    """R7.1: never on the first lead of a hand, not even after an exchange or declaration."""
    hand = run(DECK_B)
    assert "claim" not in legal(hand)
    assert rejected(hand, 0, "claim") == "R7.1"
    hand = run(DECK_B, "0 exchange; 0 declare S")
    assert "claim" not in legal(hand)
    assert rejected(hand, 0, "claim") == "R7.1"


def test_r7_1_no_claim_as_the_follower() -> None:
    """R7.1: only on one's own lead; the follower may not claim."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 play KS")
    assert hand.to_act == 0
    assert "claim" not in legal(hand)
    assert rejected(hand, 0, "claim") == "R7.1"


def test_r7_1_the_loser_of_the_trick_is_not_to_act() -> None:
    """R7.1: only the winner of the previous trick can claim (the other one is not to act)."""
    hand = run(DECK_A, "0 play JC; 1 play QC")
    assert "claim" in legal(hand)
    assert rejected(hand, 0, "claim") == "R3.1"


def test_r7_1_claim_after_declaring_counts_the_marriage() -> None:
    """R7.1: a claim right after declaring counts the (effective) marriage, unplayed."""
    deck = "KD KS KH JH TD JC JD QD TS KC AC QH AH JS QC QS AS AD TC TH"
    hand = run(deck, "0 declare D; 0 play KD; 1 play JC; 0 declare H")
    assert hand.points(0) == 6 + 40 + 20
    hand.apply(0, Action.claim())
    assert hand.result == result(0, 3, "claim", (66, 0), (1, 0))


def test_r7_1_claim_after_exchange_and_close() -> None:
    """R7.1: exchange and close may come before the claim."""
    deck = "JC AS TS QC KS JS TH KH QH JD QD KC QS AD TC JH AC KD TD AH"
    steps = ("0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 declare H; 0 play QH; 1 play JS; "
             "0 play TS; 1 play JD; 0 exchange; 0 close")
    hand = run(deck, steps)
    assert hand.closed_by == 0 and "claim" in legal(hand)
    hand.apply(0, Action.claim())
    # closed by seat 0 with seat 1 at 5 points and one trick: 2 (R8.3)
    assert hand.result == result(0, 2, "closer_claim", (72, 5), (3, 1))


# --- R7.2 a claim ends the hand; correct at 66 or more --------------------------------------
def test_r7_2_claim_ends_the_hand_at_once() -> None:
    """R7.2: after a claim the hand is over: nobody acts, every action is refused (R8.6)."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 claim")
    assert hand.is_over
    assert hand.to_act is None
    assert hand.legal_actions() == ()
    assert rejected(hand, 1, "play KS") == "R8.6"
    assert rejected(hand, 0, "play AS") == "R8.6"


def test_r7_2_exactly_66_is_correct() -> None:
    """R7.2: 66 points (6 card points + 40 + 20) is a correct claim."""
    deck = "KD KS KH JH TD JC JD QD TS KC AC QH AH JS QC QS AS AD TC TH"
    hand = run(deck, "0 declare D; 0 play KD; 1 play JC; 0 declare H; 0 claim")
    assert hand.result == result(0, 3, "claim", (66, 0), (1, 0))


def test_r7_2_65_is_a_false_claim() -> None:
    """R7.2: 65 points (5 card points + 40 + 20) is a false claim."""
    deck = "KC JD QS AH TH JS AS KS QC AC QD AD TC QH JC TS TD KD KH JH"
    hand = run(deck, "0 declare S; 0 play QS; 1 play JS; 0 declare C; 0 claim")
    assert hand.result == result(1, 3, "false_claim", (65, 0), (1, 0))


# --- R7.3 a correct claim wins even if the opponent had 66 earlier -----------------------------
def test_r7_3_correct_claim_wins_though_the_opponent_reached_66_first() -> None:
    """R7.3: seat 0 reached 68 and never claimed; seat 1's correct claim (67) wins."""
    deck = "AH KH KS KD KC QS JC QH QD AS TD TC TH TS JS QC AC JD AD JH"
    hand = run(deck, "0 play AH; 1 play TD; 0 declare H; 0 play QH; 1 play AS; 0 play KH; "
                     "1 play TH; 1 play JS; 0 play AC; 0 play JD; 1 play AD")
    assert hand.points(0) == 68  # seat 0 lost the lead with 68
    hand.apply(1, Action.declare("C"))
    hand.apply(1, Action.claim())
    assert hand.result == result(1, 1, "claim", (68, 67), (3, 2))


# --- R7.4 the end of the last trick ------------------------------------------------------------
def test_r7_4_last_trick_winner_with_66_is_deemed_to_claim() -> None:
    """R7.4 / R8.1: no claim made; the last trick's winner has 99: a deemed correct claim."""
    deck = "JC AC JD KH TC TH TS QD QH AS KD AD KS QS TD AH KC JH QC JS"
    hand = run(deck, "0 play JC; 1 play AS; 1 play KD; 0 play AC; 1 play QS; 0 play QH; "
                     "1 play TC; 0 play KS; 0 play KC; 1 play QC; 0 play JD; 1 play AD; "
                     "1 play TS; 0 play JS; 1 play AH; 0 play JH; 1 play KH; 0 play TD; "
                     "1 play TH; 0 play QD")
    assert all(a.kind.value == "play" for _, a in hand.history)
    assert hand.result == result(1, 2, "claim", (21, 99), (2, 8))


def test_r7_4_no_deemed_claim_below_66() -> None:
    """R7.4 / R8.5: the last trick's winner has 46 < 66: no claim; it scores 1 anyway,
    although the other seat has 74."""
    deck = "JH TC QC QD AD QH JS KH TH QS AC JD AH KC KD AS JC KS TS TD"
    hand = run(deck, "0 play TH; 1 play QS; 1 play JD; 0 play QC; 1 play QH; 0 play KH; "
                     "0 play AS; 1 play QD; 0 play AH; 1 play TS; 1 play AC; 0 play TC; "
                     "1 play JC; 0 play KS; 0 play KD; 1 play TD; 1 play KC; 0 play JS; "
                     "0 play JH; 1 play AD")
    assert hand.result == result(0, 1, "last_trick", (46, 74), (5, 5))
    assert sum(hand.result.points) == 120  # no marriages in this hand


# --- R8 every reason and game-point value ------------------------------------------------------
SCENARIOS = [
    # (id, deck, steps, expected (winner, game points, reason, points, tricks))
    ("R8.1 claim, loser without a trick: 3",
     "QH KS QS KD TC QD AS KH QC AH AC JC JD JH TD TH TS KC JS AD",
     "0 declare S; 0 play QS; 1 play AC; 0 declare H; 0 claim",
     (0, 3, "claim", (74, 0), (1, 0))),
    ("R8.1 claim, loser with a trick and 32 points: 2",
     "QS JC JD KH QD KD JS QH JH KC TC AC TD KS TS TH AD AH QC AS",
     "0 play JC; 1 play TC; 1 declare D; 1 play QD; 0 play TD; 0 play QH; 1 play AC; "
     "0 declare S; 0 claim",
     (0, 2, "claim", (67, 32), (2, 1))),
    ("R8.1 claim, loser with exactly 33 points (20 of them a marriage): 1",
     "QC KD KC TC TS QH JH AD JS QD KS JC AH KH AS TH JD QS TD AC",
     "0 declare C; 0 play QC; 1 play TS; 0 play KC; 1 play AH; 1 declare H; 1 play KH; "
     "0 play AD; 1 claim",
     (1, 1, "claim", (33, 70), (1, 2))),
    ("R8.1 claim (docs example 1): 2",
     DECK_A,
     "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 declare H; 0 play QH; 1 play JS; "
     "0 play TS; 1 play JD; 0 claim",
     (0, 2, "claim", (72, 5), (3, 1))),
    ("R8.2 false claim, claimer's opponent without a trick: 3",
     DECK_A, "0 play JC; 1 play QC; 1 claim",
     (0, 3, "false_claim", (0, 5), (0, 1))),
    ("R8.2 false claim, claimer's opponent with a trick: 2",
     DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 claim",
     (1, 2, "false_claim", (15, 5), (1, 1))),
    ("R8.2 false claim by the closer's opponent, closer without a trick: 3",
     "JC KD JS TS TD AH QC KC AS TC AD TH KS QD QS AC JD QH KH JH",
     "0 close; 0 play JC; 1 play TC; 1 claim",
     (0, 3, "false_claim", (0, 12), (0, 1))),
    ("R8.2 false claim by the closer's opponent, closer with a trick: 2",
     "KC QS KD JS AS JD JH AC AH JC AD QH QD TS TH TD QC TC KH KS",
     "0 close; 0 play AH; 1 play JC; 0 play KD; 1 play AD; 1 claim",
     (0, 2, "false_claim", (13, 15), (1, 1))),
    ("R8.3 closer claims, opponent had no trick at closing (one since): 3",
     "KC QC KH JC TH TD JH AD QH TC QD TS KS KD AS JD JS AC QS AH",
     "0 declare H; 0 close; 0 play KH; 1 play TH; 1 play QD; 0 play AD; 0 declare C; 0 claim",
     (0, 3, "closer_claim", (74, 14), (1, 1))),
    ("R8.3 closer claims, opponent had 25 < 33 at closing (39 since): 2",
     "KD TC TS QD QH KH JH TD AS JD QC TH AD JC JS KC AH KS QS AC",
     "0 play TC; 1 play QC; 0 play TS; 1 play JD; 0 play TD; 1 play AD; 1 declare H; 1 close; "
     "1 play KH; 0 play TH; 0 play JC; 1 play KC; 1 claim",
     (1, 2, "closer_claim", (39, 67), (3, 2))),
    ("R8.3 closer claims, opponent had 34 >= 33 at closing: 1",
     "KH TC QH AH AC KD TS AD TH JS QS QC KS AS TD JH JD JC QD KC",
     "0 declare H; 0 play QH; 1 play AC; 0 play TH; 1 play AH; 1 exchange; 1 close; "
     "1 declare S; 1 play QS; 0 play KH; 1 claim",
     (1, 1, "closer_claim", (34, 68), (1, 2))),
    ("R8.3 with R7.4: the closer wins the last trick with 70: deemed claim, 3",
     "AD TD KH AC JC TH JD KC AH QS KD QH TC KS JS AS QD QC JH TS",
     "0 close; 0 play AH; 1 play TH; 0 play AD; 1 play KD; 0 play TD; 1 play AC; 0 play KC; "
     "1 play JC; 0 play KH; 1 play QS",
     (0, 3, "closer_claim", (70, 0), (5, 0))),
    ("R8.4 the closer's false claim, opponent had a trick at closing: 2",
     "JH AD AH TD QD QH KD KH KC AS AC QC QS TC TS KS JC JD JS TH",
     "0 play AD; 1 play QD; 0 play KC; 1 play AC; 1 close; 1 claim",
     (0, 2, "false_claim", (14, 15), (1, 1))),
    ("R8.4 the closer's false claim, opponent had no trick at closing (one now): 3",
     "QS JC QH KS KD JS AH KC TD QC JD JH KH AS TH TC QD TS AC AD",
     "0 close; 0 play JC; 1 play QC; 1 play KD; 0 play TD; 0 claim",
     (1, 3, "false_claim", (14, 5), (1, 1))),
    ("R8.4 the opponent claims correctly first, it had a trick at closing: 2",
     "KC JS QH TS QD QS JH KH AS KD AD AC AH QC JC JD TH KS TD TC",
     "0 declare H; 0 play KH; 1 play AD; 0 play JS; 1 play QS; 1 close; 1 play TS; 0 play AS; "
     "0 claim",
     (0, 2, "closer_failed", (76, 5), (2, 1))),
    ("R8.4 the opponent claims correctly first, no trick at closing: 3",
     "KS AS JC AH KC KD TD TS JH QC QD TC AC KH AD JD QH QS JS TH",
     "0 close; 0 play JH; 1 play AH; 1 declare D; 1 play QD; 0 play AS; 1 claim",
     (1, 3, "closer_failed", (0, 67), (0, 2))),
    ("R8.4 no correct claim by the closer by the end, opponent had a trick: 2",
     "AH JC QH AC AS TD QD KD AD KH TC KS JS JH QC KC JD QS TS TH",
     "0 play KD; 1 play AS; 0 play JC; 1 play TD; 1 close; 1 play TC; 0 play QC; 1 play JS; "
     "0 play KS; 0 play AH; 1 play KH; 0 play AD; 1 play AC; 0 play QH; 1 play JH",
     (0, 2, "closer_failed", (63, 25), (5, 2))),
    ("R8.4 the closer reached 71 but lost the last trick: 3",
     "AH AS KS QC QH TH JD AD JC TS AC TD TC JH JS KH KD QD QS KC",
     "0 close; 0 play AS; 1 play TS; 0 play AD; 1 play AC; 0 play KS; 1 play QH; 0 play AH; "
     "1 play TH; 0 play JC; 1 play QC",
     (1, 3, "closer_failed", (71, 5), (4, 1))),
    ("R8.4 with R7.4: the closer's opponent wins the last trick with 76: 3",
     "TC KC AS TD AC KD KH QH TS QC TH QS JD AD QD AH KS JC JH JS",
     "0 close; 0 play TC; 1 play AC; 1 play TH; 0 play QH; 1 play TD; 0 play AS; 1 play KD; "
     "0 play KC; 1 play QC; 0 play TS",
     (1, 3, "closer_failed", (0, 76), (0, 5))),
    ("R8.4 docs example 3: failed close, no trick at closing: 3",
     DECK_A,
     "0 play JC; 1 play QC; 1 close; 1 play KC; 0 play QH; 0 play AS; 1 play JS; 0 play TS; "
     "1 play KS; 0 play KH; 1 play JD; 0 play QS; 1 play QD",
     (0, 3, "closer_failed", (46, 5), (5, 1))),
    ("R8.5 not closed, no claim: the last trick scores 1 whatever the points",
     "JH TC QC QD AD QH JS KH TH QS AC JD AH KC KD AS JC KS TS TD",
     "0 play TH; 1 play QS; 1 play JD; 0 play QC; 1 play QH; 0 play KH; 0 play AS; 1 play QD; "
     "0 play AH; 1 play TS; 1 play AC; 0 play TC; 1 play JC; 0 play KS; 0 play KD; 1 play TD; "
     "1 play KC; 0 play JS; 0 play JH; 1 play AD",
     (0, 1, "last_trick", (46, 74), (5, 5))),
]


@pytest.mark.parametrize(("deck", "steps", "expected"), [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_r8_scoring(deck: str, steps: str, expected: tuple) -> None:
    """R8.1-R8.6: each scenario ends with exactly this winner, game points, reason, points and
    tricks."""
    hand = run(deck, steps)
    assert hand.is_over
    assert hand.result == result(*expected)
    assert hand.result.to_dict() == {
        "winner": expected[0], "game_points": expected[1], "reason": expected[2],
        "points": list(expected[3]), "tricks": list(expected[4])}


def test_r8_6_every_reason_and_game_point_value_is_covered() -> None:
    """R8.6: the scenarios above cover every reason, and every game-point value it allows."""
    seen = {(s[3][2], s[3][1]) for s in SCENARIOS}
    assert seen == {("claim", 3), ("claim", 2), ("claim", 1),
                    ("false_claim", 3), ("false_claim", 2),
                    ("closer_claim", 3), ("closer_claim", 2), ("closer_claim", 1),
                    ("closer_failed", 3), ("closer_failed", 2),
                    ("last_trick", 1)}
    assert {r.value for r in Reason} == {"claim", "false_claim", "closer_claim",
                                         "closer_failed", "last_trick"}


def test_r8_6_exactly_one_winner() -> None:
    """R8.6: a finished hand has one winner (a seat) and a game-point value of 1, 2 or 3."""
    for _, deck, steps, _ in SCENARIOS:
        res = run(deck, steps).result
        assert res is not None
        assert res.winner in (0, 1)
        assert res.game_points in (1, 2, 3)
        assert isinstance(res.reason, Reason)
