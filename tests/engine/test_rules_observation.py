"""Unit tests for R10: what an observation holds, and that it never holds the opponent's hand
or the order of the face-down stock (also through `Observation.to_dict()`)."""

from __future__ import annotations

import json
import random
import re

from rules_helpers import DECK_A, DECK_B, cards, run

from engine import (
    ALL_CARDS,
    Action,
    Card,
    Exchange,
    Hand,
    Marriage,
    Match,
    Observation,
    Profile,
    Suit,
    Trick,
    observe,
)

PENDING = "0 exchange; 0 declare S; 0 play QS; 1 play AS"  # deck B, docs example 4

OBSERVATION_FIELDS = {
    "seat", "profile", "hand_number", "dealer", "to_act", "hand", "opponent_hand_size",
    "trump_suit", "trump_card", "trump_card_face_up", "stock_size", "closed_by", "closed_after",
    "leader", "lead_card", "tricks", "marriages", "exchanges", "points", "pending_points",
    "tricks_won", "opponent_tricks_won", "counters", "legal_actions",
}
CARD = re.compile(r"\b[ATKQJ][CDHS]\b")


def test_r10_1_observation_holds_what_the_seat_may_know() -> None:
    """R10.1: own hand, trump, stock size, turn and legal actions, tricks, marriages,
    exchanges, own points / pending points / tricks, opponent's tricks, counters."""
    hand = run(DECK_B, PENDING)
    obs = observe(hand, 0, counters=(5, 6), hand_number=2)
    assert obs.seat == 0 and obs.dealer == 1 and obs.hand_number == 2
    assert obs.profile == Profile.SOFT
    assert set(obs.hand) == set(cards("KS TC JC AD JS"))
    assert obs.opponent_hand_size == 5
    assert obs.trump_suit == Suit.DIAMONDS
    assert obs.trump_card == Card.from_text("JD") and obs.trump_card_face_up is True
    assert obs.stock_size == 8
    assert obs.closed_by is None and obs.closed_after is None
    assert obs.to_act == 1 and obs.leader == 1 and obs.lead_card is None
    assert obs.legal_actions == ()  # not seat 0's turn
    assert obs.tricks == (Trick(0, Card.from_text("QS"), Card.from_text("AS"), 1),)
    assert obs.marriages == (Marriage(0, Suit.SPADES, 0),)
    assert obs.exchanges == (Exchange(0, Card.from_text("AD")),)
    assert (obs.points, obs.pending_points) == (0, 20)
    assert (obs.tricks_won, obs.opponent_tricks_won) == (0, 1)
    assert obs.counters == (5, 6)
    other = observe(hand, 1)
    assert set(other.hand) == set(cards("TS KC QC AH KH"))
    assert (other.points, other.pending_points, other.tricks_won, other.opponent_tricks_won) == (
        14, 0, 1, 0)
    assert set(other.legal_actions) == set(hand.legal_actions())
    # seat 1 knows seat 0 still holds KS (the unplayed partner) and AD (taken by the exchange)
    assert other.known_opponent_cards() == set(cards("KS AD"))
    hand.apply(1, Action.from_text("play QC"))
    assert observe(hand, 0).lead_card == Card.from_text("QC")
    assert observe(hand, 0).opponent_hand_size == 4


def test_r10_1_trump_card_remembered_after_exhaustion() -> None:
    """R10.1 / R10.2: after exhaustion the trump card is remembered; the winner of the last
    draw knows that the loser took it."""
    hand = run(DECK_A, "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 play QH; 1 play JS; "
                       "0 play TS; 1 play JD; 0 play QS; 1 play TD")
    obs = observe(hand, 0)
    assert obs.stock_size == 0
    assert obs.trump_card == Card.from_text("TH") and obs.trump_card_face_up is False
    assert Card.from_text("TH") in obs.known_opponent_cards()


def test_r10_2_no_field_for_hidden_information() -> None:
    """R10.2: the observation has no field that could hold the opponent's hand or the stock."""
    hand = run(DECK_A, "0 play JC; 1 play QC")
    obs = observe(hand, 0)
    assert set(obs._fields) == OBSERVATION_FIELDS
    assert set(obs.to_dict()) == OBSERVATION_FIELDS
    assert Observation.from_dict(obs.to_dict()) == obs
    assert Observation.from_dict(json.loads(json.dumps(obs.to_dict()))) == obs


def hidden_from(hand: Hand, seat: int) -> set[str]:
    """Cards `seat` may not locate: the opponent's hand (less what was shown) and the
    face-down stock."""
    obs = observe(hand, seat)
    opponent = {str(c) for c in hand.holding(1 - seat)}
    shown = {str(c) for c in obs.known_opponent_cards()}
    face_down = {str(c) for c in hand.stock_cards()[:-1]} if hand.stock_size else set()
    return (opponent - shown) | face_down


def random_states(count: int) -> list[Hand]:
    """Hands at random moments of random legal play (claims avoided, closes included)."""
    rng = random.Random(20261129)
    states = []
    for _ in range(count):
        deck = list(ALL_CARDS)
        rng.shuffle(deck)
        hand = Hand(deck, rng.randrange(2), rng.choice([Profile.SOFT, Profile.SHARP]))
        for _ in range(rng.randrange(25)):
            if hand.is_over:
                break
            options = [a for a in hand.legal_actions() if a.kind.value != "claim"]
            hand.apply(hand.to_act, rng.choice(options))
        states.append(hand)
    return states


def test_r10_2_to_dict_never_names_a_hidden_card() -> None:
    """R10.2: no card of the opponent's hand (unless shown) or of the face-down stock appears
    anywhere in the observation's dict."""
    for hand in random_states(300):
        for seat in (0, 1):
            obs = observe(hand, seat)
            named = set(CARD.findall(json.dumps(obs.to_dict())))
            assert not named & hidden_from(hand, seat)
            assert named <= ({str(c) for c in obs.hand} | {str(c) for c in obs.played_cards()}
                             | {str(obs.trump_card)} | {str(e.taken) for e in obs.exchanges})


def test_r10_2_observation_is_the_same_whatever_is_hidden() -> None:
    """R10.2: permuting the cards hidden from a seat (opponent's hand and face-down stock)
    changes nothing in that seat's observation."""
    rng = random.Random(7)
    checked = 0
    for _ in range(200):
        deck = list(ALL_CARDS)
        rng.shuffle(deck)
        dealer = rng.randrange(2)
        hand = Hand(deck, dealer)
        plays: list[tuple[int, Action]] = []
        for _ in range(rng.randrange(1, 9)):  # at most four tricks: the stock stays open
            action = rng.choice([a for a in hand.legal_actions() if a.kind.value == "play"])
            plays.append((hand.to_act, action))
            hand.apply(hand.to_act, action)
        for seat in (0, 1):
            hidden = hidden_from(hand, seat)
            positions = [i for i, c in enumerate(deck) if str(c) in hidden]
            shuffled = [deck[i] for i in positions]
            rng.shuffle(shuffled)
            other_deck = list(deck)
            for i, card in zip(positions, shuffled, strict=True):
                other_deck[i] = card
            other = Hand(other_deck, dealer)
            for who, action in plays:
                other.apply(who, action)
            assert observe(other, seat) == observe(hand, seat)
            assert observe(other, seat).to_dict() == observe(hand, seat).to_dict()
            checked += 1
    assert checked == 400


def test_r10_2_match_observation_hides_the_opponent() -> None:
    """R10.2 through Match.observe: only the own hand is in the observation."""
    match = Match(seed=42)
    seat = match.to_act
    obs = match.observe(seat)
    assert set(obs.hand) == set(match.hand.holding(seat))
    named = set(CARD.findall(json.dumps(obs.to_dict())))
    assert not named & {str(c) for c in match.hand.holding(1 - seat)}
    assert not named & {str(c) for c in match.hand.stock_cards()[:-1]}
