"""Unit tests for R11.1: illegal actions are rejected citing the rule (in the conformance
order: hand over, turn, unknown action, the action's own rule) and change nothing."""

from __future__ import annotations

import pytest
from rules_helpers import DECK_A, DECK_B, cards, legal, rejected, run, snapshot

from engine import (
    Action,
    Hand,
    IllegalActionError,
    Match,
)


def rejected_raw(hand: Hand, seat: int, action: object) -> str:
    """Like `rejected`, for an action that is not an `Action` value."""
    before = snapshot(hand)
    with pytest.raises(IllegalActionError) as err:
        hand.apply(seat, action)  # type: ignore[arg-type]
    assert snapshot(hand) == before
    return err.value.rule


def test_r11_1_hand_over_comes_first() -> None:
    """R11.1 order: once the hand is over every action cites R8.6, whoever acts."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 claim")
    assert rejected(hand, 0, "play AS") == "R8.6"
    assert rejected(hand, 1, "claim") == "R8.6"
    assert rejected_raw(hand, 1, "dance") == "R8.6"


def test_r11_1_not_your_turn_comes_second() -> None:
    """R11.1 order: the wrong seat gets R3.1, whatever the action."""
    hand = run(DECK_A)
    assert rejected(hand, 1, "play QC") == "R3.1"  # the dealer holds QC but does not lead
    assert rejected(hand, 1, "close") == "R3.1"
    assert rejected(hand, 1, "claim") == "R3.1"
    assert rejected_raw(hand, 1, "dance") == "R3.1"
    hand.apply(0, Action.from_text("play JC"))
    assert rejected(hand, 0, "play AS") == "R3.1"  # the leader may not answer its own lead


def test_r11_1_unknown_action() -> None:
    """R11.1: something that is not an action cites R11.1."""
    hand = run(DECK_A)
    for thing in ("play JC", "dance", None, 42):
        assert rejected_raw(hand, 0, thing) == "R11.1"


@pytest.mark.parametrize(("deck", "steps", "seat", "action", "rule"), [
    (DECK_A, "", 0, "exchange", "R4.1"),  # no trump jack
    (DECK_A, "0 play JC", 1, "close", "R6.1"),  # not on lead
    (DECK_A, "0 close", 0, "close", "R6.1"),  # already closed
    (DECK_A, "", 0, "declare S", "R5.1"),  # no marriage in spades
    (DECK_A, "", 0, "claim", "R7.1"),  # first lead
    (DECK_A, "", 0, "play QC", "R3.1"),  # the leader does not hold QC
    (DECK_A, "0 play JC", 1, "play AS", "R3.1"),  # the follower does not hold AS
    (DECK_B, "0 declare S", 0, "play TC", "R5.1"),  # must lead KS or QS
    (DECK_A, "0 close; 0 play AS", 1, "play QD", "R3.4"),  # must follow spades
    (DECK_A, "0 close; 0 play JC", 1, "play JS", "R3.4"),  # must beat JC with QC
])
def test_r11_1_each_action_cites_its_own_rule(deck: str, steps: str, seat: int, action: str,
                                              rule: str) -> None:
    """R11.1: the error names the rule broken; the state is unchanged (checked by `rejected`)."""
    hand = run(deck, steps)
    assert action not in legal(hand)
    assert rejected(hand, seat, action) == rule


def test_r11_1_state_unchanged_and_play_goes_on() -> None:
    """R11.1: after a rejected action the same legal actions remain and play continues."""
    hand = run(DECK_A, "0 close; 0 play AS")
    before = hand.legal_actions()
    with pytest.raises(IllegalActionError) as err:
        hand.apply(1, Action.from_text("play QD"))
    assert err.value.rule == "R3.4"
    assert "R3.4" in str(err.value)
    assert err.value.reason
    assert hand.legal_actions() == before
    assert len(hand.history) == 2
    hand.apply(1, Action.from_text("play KS"))
    assert hand.tricks_won(0) == 1


def test_r11_1_match_unchanged_after_an_illegal_action() -> None:
    """R11.1 through Match.apply: counters, history and hand are untouched."""
    match = Match(first_dealer=1, decks=[cards(DECK_A)] * 2)
    match.apply(0, Action.from_text("play JC"))
    before = (match.counters, list(match.history), match.observe(0).to_dict(),
              match.observe(1).to_dict(), len(match.hands))
    for seat, text, rule in ((0, "play AS", "R3.1"), (1, "claim", "R7.1"),
                             (1, "play AS", "R3.1")):
        with pytest.raises(IllegalActionError) as err:
            match.apply(seat, Action.from_text(text))
        assert err.value.rule == rule
        assert (match.counters, list(match.history), match.observe(0).to_dict(),
                match.observe(1).to_dict(), len(match.hands)) == before
