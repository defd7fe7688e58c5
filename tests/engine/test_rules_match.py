"""Unit tests for R9 (the match from 7 down, Schneider, dealers; the sharp profile R9.3)."""

from __future__ import annotations

import pytest
from rules_helpers import DECK_A, DECK_B, cards, legal, rejected, result, run

from engine import (
    Action,
    HandResult,
    IllegalActionError,
    Match,
    Profile,
    deck_for,
    first_dealer_for,
)


def apply_steps(match: Match, steps: str) -> HandResult | None:
    out = None
    for step in filter(None, (s.strip() for s in steps.split(";"))):
        seat, text = step.split(" ", 1)
        out = match.apply(int(seat), Action.from_text(text))
    return out


# With deck A the forehand holds JC AS TS KH QH and the dealer QC KS JS JD QD:
# "forehand leads AS, dealer JS, forehand claims falsely" -> the dealer scores 3 (R8.2), and
# "forehand leads JC, dealer QC, dealer claims falsely" -> the forehand scores 3.
DEALER_SCORES_3 = {0: "1 play AS; 0 play JS; 1 claim", 1: "0 play AS; 1 play JS; 0 claim"}
FOREHAND_SCORES_3 = {0: "1 play JC; 0 play QC; 0 claim", 1: "0 play JC; 1 play QC; 1 claim"}


def test_r9_1_match_counts_down_from_7_schneider() -> None:
    """R9.1 / R2.1: counters start at 7; the first at 0 or below wins; the loser still at 7:
    Schneider-Bummerl. The dealer alternates after every hand."""
    match = Match(first_dealer=0, decks=[cards(DECK_A)] * 5)
    assert match.counters == (7, 7)
    assert match.observe(0).counters == (7, 7)
    # hand 0: seat 0 deals
    assert match.hand.dealer == 0 and match.to_act == 1
    res = apply_steps(match, DEALER_SCORES_3[0])
    assert res == result(0, 3, "false_claim", (0, 13), (0, 1))
    assert match.counters == (4, 7) and match.winner is None and not match.is_over
    # hand 1: seat 1 deals, seat 0 leads
    assert len(match.hands) == 2 and match.hand.dealer == 1 and match.to_act == 0
    apply_steps(match, FOREHAND_SCORES_3[1])
    assert match.counters == (1, 7)
    # hand 2: seat 0 deals again
    assert match.hand.dealer == 0
    apply_steps(match, DEALER_SCORES_3[0])
    assert match.counters == (-2, 7)
    assert match.winner == 0 and match.is_over
    assert match.schneider is True
    assert [r.winner for r in match.results] == [0, 0, 0]
    assert [h.dealer for h in match.hands] == [0, 1, 0]
    assert match.to_act is None and match.legal_actions() == ()
    with pytest.raises(IllegalActionError) as err:
        match.apply(1, Action.from_text("play AS"))
    assert err.value.rule == "R8.6"
    assert match.counters == (-2, 7)


def test_r9_1_match_without_schneider() -> None:
    """R9.1: the loser scored, so no Schneider; the match ends as soon as one counter <= 0."""
    match = Match(first_dealer=0, decks=[cards(DECK_A)] * 5)
    apply_steps(match, DEALER_SCORES_3[0])  # seat 0: 4
    apply_steps(match, DEALER_SCORES_3[1])  # seat 1 deals and scores: 4
    assert match.counters == (4, 4)
    apply_steps(match, DEALER_SCORES_3[0])  # seat 0: 1
    assert match.counters == (1, 4) and match.winner is None
    apply_steps(match, FOREHAND_SCORES_3[1])  # seat 0 leads and scores: -2
    assert match.counters == (-2, 4)
    assert match.winner == 0
    assert match.schneider is False
    assert len(match.results) == 4
    assert [h.dealer for h in match.hands] == [0, 1, 0, 1]


def test_r9_1_game_points_subtract_exactly() -> None:
    """R9.1: each hand's game points are subtracted from its winner's counter."""
    match = Match(first_dealer=1, decks=[cards(DECK_A)] * 3)
    res = apply_steps(match, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 declare H; "
                             "0 play QH; 1 play JS; 0 play TS; 1 play JD; 0 claim")
    assert res == result(0, 2, "claim", (72, 5), (3, 1))
    assert match.counters == (5, 7)
    assert match.results == [res]
    assert match.observe(1).counters == (5, 7)
    assert match.observe(1).hand_number == 1


def test_r9_1_seeded_match_deals_from_the_seed() -> None:
    """R9.1 / R2: a seeded match deals every hand from the seed, the dealer alternating."""
    match = Match(seed=11)
    first = first_dealer_for(11)
    number = 0
    while not match.is_over:
        hand = match.hand
        assert hand.dealer == (first + number) % 2
        assert [str(c) for c in hand.deck] == [str(c) for c in deck_for(11, number)]
        leader = match.to_act
        match.apply(leader, next(a for a in match.legal_actions() if a.card is not None))
        match.apply(1 - leader, match.legal_actions()[0])
        match.apply(match.to_act, Action.claim())  # a false claim: 2 or 3 game points
        number += 1
    assert sum(7 - c for c in match.counters) == sum(r.game_points for r in match.results)
    assert min(match.counters) <= 0 < max(match.counters)


# --- R9.3 the sharp profile ----------------------------------------------------------------------
def test_r9_3_sharp_declaring_needs_a_trick_won() -> None:
    """R9.3 (R5.1): sharp: no marriage before the player has won a trick."""
    hand = run(DECK_B, profile="sharp")
    assert "declare S" not in legal(hand)
    assert rejected(hand, 0, "declare S") == "R5.1"


def test_r9_3_sharp_must_lead_the_king() -> None:
    """R9.3 (R5.1): sharp: after declaring, the King must be led (not the Queen)."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS", profile="sharp")
    assert "declare H" in legal(hand)
    hand.apply(0, Action.declare("H"))
    assert hand.points(0) == 55
    assert {a for a in legal(hand) if a.startswith("play")} == {"play KH"}
    assert rejected(hand, 0, "play QH") == "R5.1"
    soft = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 declare H")
    assert {a for a in legal(soft) if a.startswith("play")} == {"play KH", "play QH"}


def test_r9_3_sharp_exchange_needs_a_trick_and_no_close_at_two() -> None:
    """R9.3 (R4.1, R6.1): sharp: exchange only after a trick won; no close at stock size 2."""
    hand = run(DECK_B, profile="sharp")
    assert legal(hand) == {"play JD", "play KS", "play QS", "play TC", "play JC", "close"}
    last_draw = ("0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 play QH; 1 play JS; "
                 "0 play TS; 1 play JD")
    sharp = run(DECK_A, last_draw, profile="sharp")
    soft = run(DECK_A, last_draw)
    assert legal(soft) - legal(sharp) == {"close"}
    assert "exchange" in legal(sharp)


@pytest.mark.parametrize(("deck", "steps", "expected"), [
    # no exchange, no marriage, no close at stock size 2: sharp plays exactly as soft
    (DECK_A, "0 play JC; 1 play QC; 1 close; 1 play KC; 0 play QH; 0 play AS; 1 play JS; "
             "0 play TS; 1 play KS; 0 play KH; 1 play JD; 0 play QS; 1 play QD",
     (0, 3, "closer_failed", (46, 5), (5, 1))),
    ("JC AC JD KH TC TH TS QD QH AS KD AD KS QS TD AH KC JH QC JS",
     "0 play JC; 1 play AS; 1 play KD; 0 play AC; 1 play QS; 0 play QH; 1 play TC; 0 play KS; "
     "0 play KC; 1 play QC; 0 play JD; 1 play AD; 1 play TS; 0 play JS; 1 play AH; 0 play JH; "
     "1 play KH; 0 play TD; 1 play TH; 0 play QD",
     (1, 2, "claim", (21, 99), (2, 8))),
])
def test_r9_3_nothing_else_changes(deck: str, steps: str, expected: tuple) -> None:
    """R9.3: everything else is the same in the sharp profile."""
    for profile in ("soft", "sharp"):
        assert run(deck, steps, profile=profile).result == result(*expected)


def test_r9_3_profiles_never_mix_in_a_match() -> None:
    """R9.3: every hand of a sharp match is sharp."""
    match = Match(seed=3, profile=Profile.SHARP)
    for _ in range(3):
        if match.is_over:
            break
        assert match.hand.profile == Profile.SHARP
        assert match.observe(0).profile == Profile.SHARP
        leader = match.to_act
        match.apply(leader, next(a for a in match.legal_actions() if a.card is not None))
        match.apply(1 - leader, match.legal_actions()[0])
        match.apply(match.to_act, Action.claim())
    assert all(h.profile == Profile.SHARP for h in match.hands)
