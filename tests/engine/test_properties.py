"""Property tests (hypothesis) over random legal play.

Each example is a seed drawn by hypothesis; a `random.Random(seed)` then picks uniformly among
the legal actions of the seat to act. Checked: no card lost or duplicated and 120 card points at
every moment, hands never above five cards, every hand ends with exactly one winner, a valid
reason and 1-3 game points, legal actions always apply and anything else is refused without a
trace (R11.1), and re-playing a transcript gives the same match.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    ALL_CARDS,
    Action,
    Hand,
    IllegalActionError,
    Match,
    Profile,
    Reason,
    Suit,
    observe,
)

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
PROFILES = st.sampled_from([Profile.SOFT, Profile.SHARP])
FAST = settings(max_examples=300, deadline=None)

EVERY_ACTION: tuple[Action, ...] = (
    *(Action.play(c) for c in ALL_CARDS),
    *(Action.declare(s) for s in Suit),
    Action.exchange(), Action.close(), Action.claim(),
)
GAME_POINTS = {  # R8.1-R8.5: which game points each reason allows
    Reason.CLAIM: {1, 2, 3},
    Reason.FALSE_CLAIM: {2, 3},
    Reason.CLOSER_CLAIM: {1, 2, 3},
    Reason.CLOSER_FAILED: {2, 3},
    Reason.LAST_TRICK: {1},
}


def new_hand(rng: random.Random, profile: Profile) -> Hand:
    deck = list(ALL_CARDS)
    rng.shuffle(deck)
    return Hand(deck, rng.randrange(2), profile)


def places(hand: Hand) -> list:
    """Every card where it is: both hands, the stock, the tricks, the card led."""
    obs = observe(hand, 0)
    cards = [*hand.holding(0), *hand.holding(1), *hand.stock_cards(),
             *(c for t in obs.tricks for c in (t.lead, t.follow))]
    if hand.lead_card is not None:
        cards.append(hand.lead_card)
    return cards


def check_invariants(hand: Hand) -> None:
    cards = places(hand)
    assert len(cards) == 20, "a card was lost or duplicated"
    assert set(cards) == set(ALL_CARDS)
    assert sum(c.points for c in cards) == 120
    assert len(hand.holding(0)) <= 5 and len(hand.holding(1)) <= 5
    if hand.stock_size and hand.closed_by is None and hand.lead_card is None and not hand.is_over:
        assert len(hand.holding(0)) == len(hand.holding(1)) == 5  # R3.3: refilled to five
    closed_after = observe(hand, 0).closed_after
    if closed_after is not None:  # R6.2: nobody draws after the close
        assert hand.stock_size == 10 - 2 * closed_after


def effective_marriages(hand: Hand, seat: int) -> int:
    obs = observe(hand, seat)
    if not obs.tricks_won:
        return 0
    trump = obs.trump_suit
    return sum(40 if m.suit == trump else 20 for m in obs.marriages if m.seat == seat)


def check_result(hand: Hand) -> None:
    res = hand.result
    assert hand.is_over and res is not None
    assert hand.to_act is None and hand.legal_actions() == ()
    assert res.winner in (0, 1)
    assert isinstance(res.reason, Reason)
    assert res.game_points in GAME_POINTS[res.reason]
    assert res.points == (hand.points(0), hand.points(1))
    assert res.tricks == (hand.tricks_won(0), hand.tricks_won(1))
    if res.reason in (Reason.CLOSER_CLAIM, Reason.CLOSER_FAILED):
        assert hand.closed_by is not None
    if res.reason in (Reason.CLAIM, Reason.LAST_TRICK):
        assert hand.closed_by is None
    if res.reason in (Reason.CLAIM, Reason.CLOSER_CLAIM):
        assert res.points[res.winner] >= 66


def play_hand(rng: random.Random, hand: Hand, claims: bool = True) -> None:
    while not hand.is_over:
        check_invariants(hand)
        legal = hand.legal_actions()
        options = legal if claims else [a for a in legal if a.kind.value != "claim"]
        hand.apply(hand.to_act, rng.choice(options))
    check_invariants(hand)
    check_result(hand)


@FAST
@given(seed=SEEDS, profile=PROFILES)
def test_cards_conserved_and_hands_end_with_one_winner(seed: int, profile: Profile) -> None:
    """R1.1, R3.3, R8.6: 20 cards / 120 points everywhere, <= 5 in hand, a valid result."""
    rng = random.Random(seed)
    play_hand(rng, new_hand(rng, profile))


@FAST
@given(seed=SEEDS, profile=PROFILES)
def test_played_out_hand_distributes_exactly_120_card_points(seed: int,
                                                             profile: Profile) -> None:
    """R1.1 / R5.5: a hand played to the last trick without claims: the tricks hold all 120
    card points; points are those plus the effective marriages."""
    rng = random.Random(seed)
    hand = new_hand(rng, profile)
    play_hand(rng, hand, claims=False)
    obs = observe(hand, 0)
    assert not hand.holding(0) and not hand.holding(1)
    assert hand.tricks_won(0) + hand.tricks_won(1) == len(obs.tricks)
    card_points = [0, 0]
    for t in obs.tricks:
        card_points[t.winner] += t.lead.points + t.follow.points
    if hand.closed_by is None:
        assert len(obs.tricks) == 10
        assert sum(card_points) == 120
    else:  # the stock left at the close stays out of play
        assert sum(card_points) + sum(c.points for c in hand.stock_cards()) == 120
    for seat in (0, 1):
        assert hand.points(seat) == card_points[seat] + effective_marriages(hand, seat)
    assert hand.result.reason is not Reason.FALSE_CLAIM


def expected_legal(hand: Hand) -> set[str]:
    """The legal actions worked out from RULES.md alone (R3.2, R3.4, R4.1, R5.1, R5.2, R6.1,
    R7.1, R9.3), from what the hand shows: an independent reference for the engine's list."""
    if hand.is_over:
        return set()
    seat = hand.to_act
    own = hand.holding(seat)
    trump = hand.trump_suit
    strict = hand.closed_by is not None or hand.stock_size == 0
    lead = hand.lead_card
    if lead is not None:  # following
        allowed = list(own)
        if strict:
            same = [c for c in own if c.suit == lead.suit]
            order = "ATKQJ"
            higher = [c for c in same if order.index(c.rank) < order.index(lead.rank)]
            trumps = [c for c in own if c.suit == trump]
            allowed = higher or same or trumps or list(own)
        return {f"play {c}" for c in allowed}
    sharp = hand.profile is Profile.SHARP
    won = hand.tricks_won(seat) > 0
    this_lead = []  # the actions taken on the lead under way
    for who, action in reversed(hand.history):
        if action.kind.value == "play":
            break
        assert who == seat
        this_lead.append(action)
    declared = [a.suit for a in this_lead if a.kind.value == "declare"]
    names = {str(c) for c in own}
    if declared:
        suit = declared[0].value
        marriage = {"K" + suit} if sharp else {"K" + suit, "Q" + suit}
        out = {f"play {c}" for c in names & marriage}
    else:
        out = {f"play {c}" for c in names}
    stock_open = hand.closed_by is None and hand.stock_size > 0
    if stock_open and hand.stock_size >= 2 and "J" + trump in names and (won or not sharp):
        out.add("exchange")
    if stock_open and not (sharp and hand.stock_size == 2):
        out.add("close")
    if not declared and (won or not sharp):
        out |= {f"declare {s}" for s in "CDHS" if {"K" + s, "Q" + s} <= names}
    if observe(hand, seat).tricks:
        out.add("claim")
    return out


@FAST
@given(seed=SEEDS, profile=PROFILES)
def test_legal_actions_follow_the_rules(seed: int, profile: Profile) -> None:
    """R3.2, R3.4, R4.1, R5.1, R5.2, R6.1, R7.1, R9.3: at every moment of random play the
    engine's legal actions are exactly those the rules allow."""
    rng = random.Random(seed)
    hand = new_hand(rng, profile)
    while not hand.is_over:
        legal = hand.legal_actions()
        assert {str(a) for a in legal} == expected_legal(hand)
        assert len(set(legal)) == len(legal)
        options = [a for a in legal if a.kind.value != "claim"] if rng.random() < 0.9 else legal
        hand.apply(hand.to_act, rng.choice(options))
    assert expected_legal(hand) == set() and hand.legal_actions() == ()


def reference_points(hand: Hand) -> tuple[int, int]:
    """Both seats' points (R5.5) from the public record: card points of the tricks won, plus
    the marriages of a seat that has won a trick (R5.3)."""
    obs = observe(hand, 0)
    out = []
    for seat in (0, 1):
        won = [t for t in obs.tricks if t.winner == seat]
        cards = sum(t.lead.points + t.follow.points for t in won)
        marriages = sum(40 if m.suit == obs.trump_suit else 20 for m in obs.marriages
                        if m.seat == seat)
        out.append(cards + marriages if won else cards)
    return out[0], out[1]


def reference_result(hand: Hand) -> tuple:
    """The finished hand's (winner, game points, reason) worked out from RULES.md alone
    (R5.3, R5.5, R7.2-R7.4, R8.1-R8.5), from the hand's public record."""
    obs = observe(hand, 0)
    trump = obs.trump_suit

    def points(seat: int, tricks: int) -> int:
        done = obs.tricks[:tricks]
        cards = sum(t.lead.points + t.follow.points for t in done if t.winner == seat)
        if not any(t.winner == seat for t in done):
            return cards  # R5.3: marriages count only once a trick is won
        return cards + sum(40 if m.suit == trump else 20 for m in obs.marriages
                           if m.seat == seat and m.trick <= tricks)

    def won_any(seat: int, tricks: int) -> bool:
        return any(t.winner == seat for t in obs.tricks[:tricks])

    n = len(obs.tricks)
    closer = obs.closed_by
    last_seat, last_action = hand.history[-1]
    if last_action.kind.value == "claim":
        claimer = last_seat
    elif points(obs.tricks[-1].winner, n) >= 66:  # R7.4: a deemed claim
        claimer = obs.tricks[-1].winner
    else:
        claimer = None
    if closer is not None:
        opp = 1 - closer
        at = obs.closed_after
        opp_had_trick = won_any(opp, at)
        failed = 2 if opp_had_trick else 3  # R8.4
        if claimer == closer:
            if points(closer, n) >= 66:  # R8.3
                gp = 3 if not opp_had_trick else 2 if points(opp, at) < 33 else 1
                return closer, gp, Reason.CLOSER_CLAIM
            return opp, failed, Reason.FALSE_CLAIM
        if claimer is None:
            return opp, failed, Reason.CLOSER_FAILED
        if points(claimer, n) >= 66:
            return opp, failed, Reason.CLOSER_FAILED
        return closer, 2 if won_any(closer, n) else 3, Reason.FALSE_CLAIM  # R8.2
    if claimer is None:
        return obs.tricks[-1].winner, 1, Reason.LAST_TRICK  # R8.5
    other = 1 - claimer
    if points(claimer, n) >= 66:  # R8.1
        gp = 3 if not won_any(other, n) else 2 if points(other, n) < 33 else 1
        return claimer, gp, Reason.CLAIM
    return other, 2 if won_any(other, n) else 3, Reason.FALSE_CLAIM  # R8.2


@settings(max_examples=300, deadline=None)
@given(seed=SEEDS, profile=PROFILES, claim_when_correct=st.booleans())
def test_results_follow_the_scoring_rules(seed: int, profile: Profile,
                                          claim_when_correct: bool) -> None:
    """R7, R8: every random hand's winner, game points and reason are those the rules give."""
    rng = random.Random(seed)
    hand = new_hand(rng, profile)
    while not hand.is_over:
        legal = hand.legal_actions()
        seat = hand.to_act
        claim = Action.claim()
        if claim in legal and claim_when_correct and hand.points(seat) >= 66:
            action = claim
        elif claim in legal and rng.random() < 0.85:
            action = rng.choice([a for a in legal if a is not claim])
        else:
            action = rng.choice(legal)
        hand.apply(seat, action)
    res = hand.result
    assert (res.winner, res.game_points, res.reason) == reference_result(hand)
    assert res.points == reference_points(hand)


def state(hand: Hand) -> tuple:
    return (hand.holding(0), hand.holding(1), hand.stock_cards(), len(hand.history),
            hand.points(0), hand.points(1), hand.pending_points(0), hand.pending_points(1),
            hand.tricks_won(0), hand.tricks_won(1), hand.to_act, hand.lead_card,
            hand.closed_by, hand.trump_card, hand.result, hand.legal_actions())


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, profile=PROFILES)
def test_legal_actions_apply_and_all_others_are_refused(seed: int, profile: Profile) -> None:
    """R11.1: every legal action applies; every other action by either seat raises
    IllegalActionError and leaves the state unchanged."""
    rng = random.Random(seed)
    hand = new_hand(rng, profile)
    while True:
        legal = set(hand.legal_actions())
        before = state(hand)
        observed = (observe(hand, 0).to_dict(), observe(hand, 1).to_dict())
        for seat in (0, 1):
            for action in EVERY_ACTION:
                if seat == hand.to_act and action in legal:
                    trial = hand.copy()
                    trial.apply(seat, action)
                    assert trial.history[-1] == (seat, action)
                    check_invariants(trial)
                    continue
                try:
                    hand.apply(seat, action)
                except IllegalActionError as err:
                    assert err.rule in {"R8.6", "R3.1", "R11.1", "R4.1", "R6.1", "R5.1",
                                        "R7.1", "R3.4"}
                    assert str(err).startswith(err.rule)
                else:
                    raise AssertionError(f"{action} by seat {seat} was accepted, not legal")
                assert state(hand) == before
        assert (observe(hand, 0).to_dict(), observe(hand, 1).to_dict()) == observed
        if hand.is_over:
            break
        # go on without claiming (a claim was tried on a copy above), to reach late states
        options = sorted((a for a in legal if a.kind.value != "claim"), key=str)
        hand.apply(hand.to_act, rng.choice(options))


@settings(max_examples=100, deadline=None)
@given(seed=SEEDS, profile=PROFILES, claim_bias=st.booleans())
def test_replaying_a_transcript_gives_the_same_match(seed: int, profile: Profile,
                                                     claim_bias: bool) -> None:
    """R9.1 / R2: a whole match re-played from its seed and action list is identical."""
    rng = random.Random(seed)
    match = Match(seed=seed, profile=profile)
    while not match.is_over:
        legal = match.legal_actions()
        hand = match.hand
        seat = match.to_act
        if claim_bias and Action.claim() in legal and hand.points(seat) >= 66:
            action = Action.claim()  # claim when correct, so matches are not all false claims
        else:
            action = rng.choice(legal)
        before = len(match.results)
        match.apply(seat, action)
        if len(match.results) > before:
            check_result(match.hands[len(match.results) - 1])
    assert min(match.counters) <= 0 < max(match.counters)  # R9.1: one winner, no tie
    assert match.winner == match.counters.index(min(match.counters))
    assert sum(7 - c for c in match.counters) == sum(r.game_points for r in match.results)
    assert match.schneider == (match.counters[1 - match.winner] == 7)
    again = Match.replay(seed, profile, list(match.history))
    assert again.results == match.results
    assert again.counters == match.counters
    assert again.winner == match.winner
    assert again.schneider == match.schneider
    assert again.history == match.history
    assert [h.dealer for h in again.hands] == [h.dealer for h in match.hands]
    assert [h.deck for h in again.hands] == [h.deck for h in match.hands]
    for seat in (0, 1):
        assert again.observe(seat) == match.observe(seat)
