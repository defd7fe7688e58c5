"""Unit tests for R1 (cards and notation) and R2 (the deal), from explicit decks."""

from __future__ import annotations

import pytest

from engine import (
    ALL_CARDS,
    Action,
    Card,
    Hand,
    Profile,
    Rank,
    Suit,
    deck_for,
    first_dealer_for,
    observe,
)

# Deck A of docs/rules.md, top card first.
DECK_A = "JC AS TS QC KS JS TH KH QH JD QD KC QS AD TC JH AC KD TD AH"


def cards(text: str) -> list[Card]:
    return [Card.from_text(t) for t in text.split()]


def texts(seq) -> list[str]:
    return [str(c) for c in seq]


def test_r1_1_twenty_cards_and_their_points() -> None:
    """R1.1: 20 cards, A 11, T 10, K 4, Q 3, J 2; 30 a suit, 120 in the pack."""
    assert len(ALL_CARDS) == 20
    assert len({str(c) for c in ALL_CARDS}) == 20
    points = {r: Card.from_text(r + "H").points for r in "ATKQJ"}
    assert points == {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2}
    for suit in "CDHS":
        assert sum(c.points for c in ALL_CARDS if c.suit == Suit(suit)) == 30
    assert sum(c.points for c in ALL_CARDS) == 120


def test_r1_2_card_notation_round_trips() -> None:
    """R1.2: rank A T K Q J then suit C D H S; `TH` is the ten of hearts."""
    ten_of_hearts = Card.from_text("TH")
    assert ten_of_hearts.rank == Rank.TEN
    assert ten_of_hearts.suit == Suit.HEARTS
    assert str(ten_of_hearts) == "TH"
    for card in ALL_CARDS:
        assert Card.from_text(str(card)) is card
    assert sorted(str(c) for c in ALL_CARDS) == sorted(r + s for r in "ATKQJ" for s in "CDHS")
    for bad in ("10H", "XH", "TX", "", "T"):
        with pytest.raises(ValueError):
            Card.from_text(bad)


def test_r1_2_action_notation_round_trips() -> None:
    """R1.2 / action vocabulary: texts and dicts round-trip."""
    for text in ("play TH", "exchange", "close", "declare H", "claim"):
        action = Action.from_text(text)
        assert str(action) == text
        assert Action.from_dict(action.to_dict()) is action
    assert Action.from_text("play TH").to_dict() == {"do": "play", "card": "TH"}
    assert Action.from_text("declare S").to_dict() == {"do": "declare", "suit": "S"}
    for bad in ("play", "play 10H", "declare X", "dance", "claim 66"):
        with pytest.raises(ValueError):
            Action.from_text(bad)


@pytest.mark.parametrize("dealer", [0, 1])
def test_r2_2_deal_layout(dealer: int) -> None:
    """R2.2: non-dealer deck[0:3]+deck[7:9], dealer deck[3:6]+deck[9:11], deck[6] trump card."""
    deck = cards(DECK_A)
    hand = Hand(deck, dealer)
    forehand = 1 - dealer
    assert sorted(texts(hand.holding(forehand))) == sorted(["JC", "AS", "TS", "KH", "QH"])
    assert sorted(texts(hand.holding(dealer))) == sorted(["QC", "KS", "JS", "JD", "QD"])
    assert str(hand.trump_card) == "TH"
    assert hand.trump_suit == "H"
    own = observe(hand, forehand)
    assert sorted(texts(own.hand)) == sorted(["JC", "AS", "TS", "KH", "QH"])
    assert own.trump_suit == Suit.HEARTS
    assert str(own.trump_card) == "TH"
    assert own.trump_card_face_up is True


def test_r2_3_stock_is_ten_cards_trump_card_last() -> None:
    """R2.3: the stock is deck[11:20] (deck[11] on top) plus the trump card under them."""
    hand = Hand(cards(DECK_A), 1)
    assert hand.stock_size == 10
    assert hand.stock_cards() == tuple(cards("KC QS AD TC JH AC KD TD AH TH"))
    assert observe(hand, 0).stock_size == 10
    assert observe(hand, 1).stock_size == 10


@pytest.mark.parametrize("dealer", [0, 1])
def test_r2_1_non_dealer_leads_first(dealer: int) -> None:
    """R2.1: the non-dealer (forehand) leads the first trick."""
    hand = Hand(cards(DECK_A), dealer)
    assert hand.to_act == 1 - dealer
    assert hand.leader == 1 - dealer
    assert observe(hand, dealer).legal_actions == ()
    assert observe(hand, 1 - dealer).to_act == 1 - dealer


def test_r2_1_first_dealer_from_seed_and_deal_alternates() -> None:
    """R2.1: the first dealer comes from the match seed; the deal alternates after every hand."""
    from engine import Match

    dealers = {first_dealer_for(seed) for seed in range(40)}
    assert dealers == {0, 1}  # both seats do deal first for some seeds
    for seed in (1, 2, 3, "abc"):
        match = Match(seed=seed)
        assert match.hands[0].dealer == first_dealer_for(seed)
        assert first_dealer_for(seed) == first_dealer_for(seed)
        assert texts(match.hands[0].deck) == texts(deck_for(seed, 0))
        # false claims end hands quickly: play a few hands and watch the dealer alternate
        for number in range(3):
            hand = match.hand
            assert hand.dealer == (first_dealer_for(seed) + number) % 2
            leader = hand.to_act
            lead = next(a for a in hand.legal_actions() if a.card is not None)
            match.apply(leader, lead)
            follow = match.legal_actions()[0]
            match.apply(1 - leader, follow)
            match.apply(match.to_act, Action.claim())
            if match.is_over:
                break


def test_r2_2_deck_for_is_a_deterministic_permutation() -> None:
    """R2.2: each hand's deck from the seed is a full, reproducible deck."""
    for seed in (0, 7, "x"):
        for number in (0, 1, 5):
            deck = deck_for(seed, number)
            assert sorted(deck) == sorted(ALL_CARDS)
            assert texts(deck) == texts(deck_for(seed, number))
    assert texts(deck_for(1, 0)) != texts(deck_for(1, 1))


def test_r2_2_bad_decks_are_refused() -> None:
    """R2.2: a deck must hold each of the 20 cards exactly once."""
    deck = cards(DECK_A)
    with pytest.raises(ValueError):
        Hand(deck[:19], 0)
    with pytest.raises(ValueError):
        Hand([*deck[:19], deck[0]], 0)
    with pytest.raises(ValueError):
        Hand(deck, 2)
    assert Hand(deck, 0, Profile.SHARP).profile == Profile.SHARP
