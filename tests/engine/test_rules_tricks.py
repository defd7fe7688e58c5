"""Unit tests for R3 (tricks, drawing, strict play), from explicit decks."""

from __future__ import annotations

import pytest

from engine import ALL_CARDS, Action, Card, Hand, IllegalActionError, Profile, Trick, observe

# Deck A of docs/rules.md (dealer 1): seat 0 JC AS TS KH QH, seat 1 QC KS JS JD QD, trump TH,
# stock KC QS AD TC JH AC KD TD AH.
DECK_A = "JC AS TS QC KS JS TH KH QH JD QD KC QS AD TC JH AC KD TD AH"


def cards(text: str) -> list[Card]:
    return [Card.from_text(t) for t in text.split()]


def deck_of(forehand: str, dealer: str, trump: str, stock: str | None = None) -> list[Card]:
    """The deck (top first) that deals `forehand` to the non-dealer and `dealer` to the dealer
    (first three cards, then two, R2.2), turns up `trump`, and leaves `stock` (top first; by
    default the other nine cards in index order) face down."""
    fh, dh, up = cards(forehand), cards(dealer), Card.from_text(trump)
    used = {*fh, *dh, up}
    rest = cards(stock) if stock is not None else [c for c in ALL_CARDS if c not in used]
    deck = [*fh[:3], *dh[:3], up, *fh[3:], *dh[3:], *rest]
    assert sorted(deck) == sorted(ALL_CARDS), "not a full deck"
    return deck


def run(deck: list[Card], steps: str = "", dealer: int = 1, profile: str = "soft") -> Hand:
    """Deal `deck` and apply `steps`, like "0 play JC; 1 play QC; 1 claim"."""
    hand = Hand(deck, dealer, Profile(profile))
    for step in filter(None, (s.strip() for s in steps.split(";"))):
        seat, text = step.split(" ", 1)
        hand.apply(int(seat), Action.from_text(text))
    return hand


def held(hand: Hand, seat: int) -> set[str]:
    return {str(c) for c in hand.holding(seat)}


def plays(hand: Hand) -> set[str]:
    """The cards the seat to act may play (all its legal actions must be plays)."""
    legal = hand.legal_actions()
    assert all(a.card is not None for a in legal)
    return {str(a.card) for a in legal}


def snapshot(hand: Hand) -> tuple:
    return (observe(hand, 0).to_dict(), observe(hand, 1).to_dict(), list(hand.history),
            hand.stock_cards(), hand.holding(0), hand.holding(1))


def with_fillers(lead: str, follower: str, trump: str) -> list[Card]:
    """A deck where the forehand holds `lead` plus four other cards, the dealer `follower`."""
    taken = {*follower.split(), trump, lead}
    fillers = [str(c) for c in ALL_CARDS if str(c) not in taken][:4]
    return deck_of(" ".join([lead, *fillers]), follower, trump)


# --- R3.1 who wins a trick -------------------------------------------------------------------
def test_r3_1_higher_card_of_the_suit_led_wins_and_leads_next() -> None:
    """R3.1: no trump played: the higher card of the suit led wins; the winner leads next."""
    hand = run(cards(DECK_A), "0 play JC; 1 play QC")
    assert hand.tricks_won(1) == 1 and hand.tricks_won(0) == 0
    assert hand.points(1) == 5 and hand.points(0) == 0
    assert hand.to_act == 1 and hand.leader == 1
    assert observe(hand, 0).tricks == (Trick(0, Card.from_text("JC"), Card.from_text("QC"), 1),)


def test_r3_1_card_of_another_plain_suit_never_wins() -> None:
    """R3.1: a higher card of a third (non-trump) suit does not beat the lead."""
    hand = run(cards(DECK_A), "0 play TS; 1 play QC")
    assert hand.tricks_won(0) == 1
    assert hand.points(0) == 13
    assert hand.to_act == 0


def test_r3_1_any_trump_beats_a_plain_card() -> None:
    """R3.1: the follower's low trump beats the ace of the suit led."""
    deck = deck_of("AS KC QC JC TD", "JH KS JS QD KD", "AH")
    hand = run(deck, "0 play AS; 1 play JH")
    assert hand.tricks_won(1) == 1
    assert hand.points(1) == 13
    assert hand.to_act == 1


def test_r3_1_plain_card_does_not_beat_a_trump_lead() -> None:
    """R3.1: a trump led wins against a higher plain card."""
    deck = deck_of("JH KC QC JC TD", "AS KS JS QD KD", "AH")
    hand = run(deck, "0 play JH; 1 play AS")
    assert hand.tricks_won(0) == 1
    assert hand.points(0) == 13


@pytest.mark.parametrize(("lead", "follow", "winner"), [
    ("QH", "KH", 1),  # higher trump wins
    ("TH", "KH", 0),
    ("KH", "TH", 1),
    ("JH", "QH", 1),
])
def test_r3_1_higher_trump_wins(lead: str, follow: str, winner: int) -> None:
    """R3.1: two trumps: the higher trump wins (A > T > K > Q > J)."""
    deck = with_fillers(lead, f"{follow} AS KS QD KD", "AH")
    hand = run(deck, f"0 play {lead}; 1 play {follow}")
    assert hand.tricks_won(winner) == 1
    assert hand.to_act == winner


RANKS_HIGH_TO_LOW = "ATKQJ"


@pytest.mark.parametrize(("high", "low"), [(h, lo) for h in range(5) for lo in range(h + 1, 5)])
def test_r3_1_rank_order_in_a_plain_suit(high: int, low: int) -> None:
    """R1.1 / R3.1: A > T > K > Q > J decides a trick in the suit led (trump hearts)."""
    hi, lo = RANKS_HIGH_TO_LOW[high] + "C", RANKS_HIGH_TO_LOW[low] + "C"
    # the low card led: the follower's higher card wins
    hand = run(with_fillers(lo, f"{hi} AS KS QD KD", "AH"), f"0 play {lo}; 1 play {hi}")
    assert hand.tricks_won(1) == 1
    # the high card led: the follower's lower card loses
    hand = run(with_fillers(hi, f"{lo} AS KS QD KD", "AH"), f"0 play {hi}; 1 play {lo}")
    assert hand.tricks_won(0) == 1


# --- R3.2 open stock ---------------------------------------------------------------------------
def test_r3_2_open_stock_follower_may_play_any_card() -> None:
    """R3.2: with the stock open the follower may play any card (no need to follow or trump)."""
    deck = deck_of("AS KC QC JC TD", "JS TH KH QD KD", "AH")
    hand = run(deck, "0 play AS")
    assert plays(hand) == {"JS", "TH", "KH", "QD", "KD"}
    hand.apply(1, Action.from_text("play QD"))  # renounce although holding spades and trumps
    assert hand.tricks_won(0) == 1


# --- R3.3 drawing ------------------------------------------------------------------------------
def test_r3_3_winner_draws_first_then_loser() -> None:
    """R3.3: after a trick the winner draws the top card of the stock, then the loser."""
    hand = run(cards(DECK_A), "0 play JC; 1 play QC")
    assert held(hand, 1) == {"KS", "JS", "JD", "QD", "KC"}  # the winner drew KC (top)
    assert held(hand, 0) == {"AS", "TS", "KH", "QH", "QS"}  # the loser drew QS
    assert hand.stock_size == 8
    assert hand.stock_cards() == tuple(cards("AD TC JH AC KD TD AH TH"))


LAST_DRAW = "0 play JC; 1 play QC; 1 play KS; 0 play AS; 0 play QH; 1 play JS; 0 play TS; 1 play JD"


def test_r3_3_last_draw_gives_the_loser_the_trump_card() -> None:
    """R3.3: on the last draw the winner takes the face-down card, the loser the trump card;
    the stock is then exhausted."""
    hand = run(cards(DECK_A), LAST_DRAW)
    assert hand.stock_size == 2
    assert hand.stock_cards() == tuple(cards("AH TH"))
    hand.apply(0, Action.from_text("play QS"))
    hand.apply(1, Action.from_text("play TD"))  # seat 0 wins the trick
    assert hand.stock_size == 0
    assert held(hand, 0) == {"KH", "AD", "JH", "KD", "AH"}  # the winner: the face-down AH
    assert held(hand, 1) == {"QD", "KC", "TC", "AC", "TH"}  # the loser: the trump card TH
    obs = observe(hand, 0)
    assert obs.stock_size == 0
    assert obs.trump_card == Card.from_text("TH")  # remembered
    assert obs.trump_card_face_up is False
    assert hand.is_strict


def test_r3_3_exchanged_jack_goes_to_the_loser_of_the_last_draw() -> None:
    """R3.3 with R4.1: after an exchange the jack is the trump card the loser draws last."""
    hand = run(cards(DECK_A), LAST_DRAW + "; 0 exchange")
    assert hand.stock_cards() == tuple(cards("AH JH"))
    assert "TH" in held(hand, 0)
    hand.apply(0, Action.from_text("play QS"))
    hand.apply(1, Action.from_text("play TD"))
    assert "JH" in held(hand, 1)
    assert "AH" in held(hand, 0)


def test_r3_3_five_cards_after_every_draw() -> None:
    """R3.3: with the stock open, both hands are back to five cards after each trick."""
    hand = run(cards(DECK_A), "")
    steps = LAST_DRAW.split("; ")
    for i, step in enumerate(steps):
        seat, text = step.split(" ", 1)
        hand.apply(int(seat), Action.from_text(text))
        if i % 2 == 1:
            assert len(hand.holding(0)) == 5 and len(hand.holding(1)) == 5
            assert hand.stock_size == 10 - (i + 1)


# --- R3.4 strict play --------------------------------------------------------------------------
@pytest.mark.parametrize(("lead", "follower", "allowed"), [
    # follow suit with a higher card if possible
    ("QS", "AS KS JS TH KC", {"AS", "KS"}),
    ("QS", "AS JS TH KH KC", {"AS"}),
    # else follow suit with a lower card (following comes before trumping)
    ("AS", "KS JS TH KC QD", {"KS", "JS"}),
    ("QS", "JS TH KH AC AD", {"JS"}),
    # void in the suit led: play a trump
    ("AS", "TH KH KC QD JD", {"TH", "KH"}),
    # void and no trump: any card
    ("AS", "KC QC KD QD JD", {"KC", "QC", "KD", "QD", "JD"}),
    # trump led: the same inside trumps
    ("QH", "KH JH AS KS TC", {"KH"}),
    ("TH", "KH JH AS KS TC", {"KH", "JH"}),
    ("KH", "AS KS TC QD JD", {"AS", "KS", "TC", "QD", "JD"}),
])
def test_r3_4_strict_play_after_a_close(lead: str, follower: str, allowed: set[str]) -> None:
    """R3.4 (with R6.2): after a close the follower must follow the strict order."""
    deck = with_fillers(lead, follower, "AH")
    open_hand = run(deck, f"0 play {lead}")
    assert plays(open_hand) == set(follower.split())  # R3.2: open stock, anything goes
    hand = run(deck, f"0 close; 0 play {lead}")
    assert plays(hand) == allowed
    for card in set(follower.split()) - allowed:
        before = snapshot(hand)
        with pytest.raises(IllegalActionError) as err:
            hand.apply(1, Action.from_text(f"play {card}"))
        assert err.value.rule == "R3.4"
        assert str(err.value).startswith("R3.4")
        assert snapshot(hand) == before
    hand.apply(1, Action.from_text(f"play {sorted(allowed)[0]}"))
    assert hand.tricks_won(0) + hand.tricks_won(1) == 1


def test_r3_4_strict_play_after_exhaustion() -> None:
    """R3.4: once the stock is exhausted the follower must follow suit (and beat if able)."""
    hand = run(cards(DECK_A), LAST_DRAW + "; 0 play QS; 1 play TD")
    # seat 0: KH AD JH KD AH; seat 1: QD KC TC AC TH; hearts are trump
    lead_ad = hand.copy()
    lead_ad.apply(0, Action.from_text("play AD"))
    assert plays(lead_ad) == {"QD"}
    lead_kh = hand.copy()
    lead_kh.apply(0, Action.from_text("play KH"))
    assert plays(lead_kh) == {"TH"}
    lead_jh = hand.copy()
    lead_jh.apply(0, Action.from_text("play JH"))
    assert plays(lead_jh) == {"TH"}
    with pytest.raises(IllegalActionError) as err:
        lead_jh.apply(1, Action.from_text("play AC"))
    assert err.value.rule == "R3.4"
