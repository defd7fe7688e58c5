"""The analysis of a decision: exact values equal a plain minimax over the engine where the seat
knows every card; an analysis reads only the seat's observation (the same for every deal it
cannot tell apart); the kinds of decisions (claims, closing) are classified."""

from __future__ import annotations

import random
from itertools import islice

import pytest
from endgame_helpers import brute_force_actions, random_exhausted_hand, random_strict_hand

from analysis import analyse
from analysis.deals import Deals
from engine import Action, ActionKind, Hand, Profile, deck_for, observe
from engine.rules import WINNING_POINTS


def values_of(found):
    return {a["action"]: a["value"] for a in found["actions"]}


@pytest.mark.parametrize("profile", [Profile.SOFT, Profile.SHARP])
def test_exact_values_equal_minimax_with_the_stock_exhausted(profile):
    rng = random.Random(31)
    checked = 0
    for _ in range(12):
        hand = random_strict_hand(rng, profile, max_cards=rng.choice((3, 4)), close_rate=0.0)
        if hand.closed_by is not None:
            continue
        seat = hand.to_act
        legal = hand.legal_actions()
        if len(legal) < 2:
            continue
        taken = rng.choice(legal)
        found = analyse(observe(hand, seat), taken)
        assert found["method"] == "exact" and found["basis"] == "every card known"
        truth = brute_force_actions(hand)
        assert values_of(found) == {str(a): float(v) for a, v in truth.items()}
        assert found["loss"] == max(truth.values()) - truth[taken]
        assert truth[Action.from_text(found["best"])] == max(truth.values())
        assert all(a["se"] is None for a in found["actions"])
        checked += 1
    assert checked >= 6


def test_exact_values_equal_minimax_on_full_exhausted_hands():
    rng = random.Random(7)
    for _ in range(3):
        hand = random_exhausted_hand(rng)
        found = analyse(observe(hand, hand.to_act), hand.legal_actions()[0])
        truth = brute_force_actions(hand)
        assert values_of(found) == {str(a): float(v) for a, v in truth.items()}


def test_a_closed_stock_is_the_mean_over_every_hand_the_opponent_could_hold():
    rng = random.Random(5)
    done = declares = 0
    while done < 6 or not declares:
        hand = random_strict_hand(rng, max_cards=3, close_rate=0.5)
        if hand.closed_by is None or len(hand.legal_actions()) < 2:
            continue
        if done >= 6 and not any(a.kind is ActionKind.DECLARE for a in hand.legal_actions()):
            continue
        seat = hand.to_act
        obs = observe(hand, seat)
        deals = Deals(obs)
        if deals.count > 64:
            continue  # sampled, not enumerated
        every = list(deals.all())
        assert deals.count == len(every)
        opponent = set(hand.holding(1 - seat))
        assert any(set(d.holding(1 - seat)) == opponent for d in every)  # the real one
        truths = [brute_force_actions(d) for d in every]
        for a in hand.legal_actions():
            if a.kind is ActionKind.DECLARE:  # one follow-up for every deal: the best mean
                children = [d.copy() for d in every]
                for child in children:
                    child.apply(seat, a)
                after = [brute_force_actions(child) for child in children]
                follow = max(after[0], key=lambda f: sum(t[f] for t in after))
                for t, t_after in zip(truths, after, strict=True):
                    t[a] = t_after[follow]
        found = analyse(obs, hand.legal_actions()[0])
        for a in hand.legal_actions():
            mean = sum(t[a] for t in truths) / len(truths)
            assert values_of(found)[str(a)] == round(mean, 4)
        dominant = [a for a in hand.legal_actions()
                    if all(t[a] == max(t.values()) for t in truths)]
        assert (found["method"] == "exact") == bool(dominant)
        declares += any(a.kind is ActionKind.DECLARE for a in hand.legal_actions())
        done += 1
    assert declares  # a declaration among them: its follow-up chosen once for all deals


def random_position(rng: random.Random) -> Hand:
    """A hand played at random to a random point (the stock open, closed or exhausted)."""
    while True:
        hand = Hand(deck_for(rng.randrange(10**9), 0), rng.randrange(2),
                    rng.choice(list(Profile)))
        stop = rng.randrange(1, 18)
        for _ in range(stop):
            legal = hand.legal_actions()
            choices = [a for a in legal if a.kind is not ActionKind.CLAIM
                       and (a.kind is not ActionKind.CLOSE or rng.random() < 0.2)]
            if hand.to_act is None or not choices:
                break
            hand.apply(hand.to_act, rng.choice(choices))
        if hand.to_act is not None and len(hand.legal_actions()) > 1:
            return hand


def test_every_consistent_deal_gives_the_same_analysis():
    rng = random.Random(11)
    phases = set()
    for _ in range(8):
        hand = random_position(rng)
        seat = hand.to_act
        obs = observe(hand, seat, (5, 3), 2)
        taken = rng.choice(hand.legal_actions())
        first = analyse(obs, taken, samples=4)
        phases.add(first["phase"])
        others = Deals(obs).sample(3, random.Random(rng.random()))
        for other in others:
            assert observe(other, seat, (5, 3), 2) == obs  # the seat cannot tell them apart
            assert set(other.holding(1 - seat)) | set(other.stock_cards()) == \
                set(hand.holding(1 - seat)) | set(hand.stock_cards())
            assert analyse(observe(other, seat, (5, 3), 2), taken, samples=4) == first
    assert "open" in phases


def test_strict_play_shows_what_the_opponent_cannot_hold():
    """After failing to follow a lead once the stock is closed, the opponent has none of that
    suit (R3.4): no consistent deal gives it one."""
    rng = random.Random(3)
    found = 0
    for _ in range(400):
        hand = random_strict_hand(rng, max_cards=3, close_rate=0.6)
        seat = hand.to_act
        obs = observe(hand, seat)
        barred = sum(c.bit for c in obs.ruled_out_cards())
        if not barred or hand.closed_by is None:
            continue
        for deal in islice(Deals(obs).all(), 50):
            assert not any(c.bit & barred for c in deal.holding(1 - seat))
        assert not any(c.bit & barred for c in hand.holding(1 - seat))  # the truth agrees
        found += 1
        if found == 5:
            break
    assert found == 5


def test_claims_false_and_missed_are_classified():
    rng = random.Random(2)
    false_claims = missed = 0
    for _ in range(300):
        hand = random_strict_hand(rng, max_cards=3, close_rate=0.2)
        seat = hand.to_act
        legal = hand.legal_actions()
        if legal[-1].kind is not ActionKind.CLAIM:
            continue
        obs = observe(hand, seat)
        if hand.points(seat) < WINNING_POINTS and false_claims < 3:
            found = analyse(obs, legal[-1])
            assert found["kind"] == "false claim" or found["loss"] == 0
            false_claims += 1
        elif hand.points(seat) >= WINNING_POINTS and missed < 3:
            found = analyse(obs, legal[0])
            # claiming is best; playing on may be as good (then no loss, no mistake)
            assert found["loss"] == 0 or (found["best"] == "claim"
                                          and found["kind"] == "missed claim")
            assert values_of(found)["claim"] == max(values_of(found).values())
            missed += 1
    assert false_claims == 3 and missed == 3


def test_an_illegal_action_is_refused_by_name():
    hand = Hand(deck_for(1, 0), 0)
    obs = observe(hand, hand.to_act)
    not_held = next(c for c in deck_for(1, 0) if c not in hand.holding(hand.to_act))
    with pytest.raises(ValueError, match=f"'play {not_held}' is not legal"):
        analyse(obs, Action.play(not_held))


def test_a_closing_that_cannot_fail_is_exact_and_checked_by_minimax():
    """A closing that wins 3 game points against every hand the opponent could hold is exactly
    best (3 is the most a hand gives, R8.3); playing on instead is an estimated loss."""
    from endgame_helpers import brute_force

    from engine.actions import CLOSE

    rng = random.Random(1)
    found = 0
    for _ in range(3000):
        hand = random_position(rng)
        if CLOSE not in hand.legal_actions() or hand.is_strict:
            continue
        seat = hand.to_act
        obs = observe(hand, seat)
        deals = Deals(obs)
        if deals.count <= 64 and obs.stock_size == 2:
            continue  # enumerated and solved: the other exact path
        closing = analyse(obs, CLOSE, samples=8)
        if not closing["basis"].startswith("a closing that wins 3"):
            continue
        assert closing["method"] == "exact" and closing["loss"] == 0
        assert closing["loss_se"] is None and closing["best"] == "close"
        for deal in [hand, *deals.sample(4, random.Random(found))]:  # the truth, and others
            deal.apply(seat, CLOSE)
            assert brute_force(deal, seat) == 3
        other = next(a for a in hand.legal_actions() if a is not CLOSE)
        playing_on = analyse(obs, other, samples=8)
        assert playing_on["best"] == "close" and playing_on["method"] == "estimate"
        found += 1
        if found == 2:
            break
    assert found == 2
