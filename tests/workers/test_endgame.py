"""The exact endgame solver agrees with a plain minimax over the engine, and finds known moves."""

from __future__ import annotations

import random

import pytest
from endgame_helpers import brute_force, brute_force_actions, random_strict_hand

from bots.endgame import Position, SearchTimeout, Solver, best_action, solve
from engine import Action, ActionKind, Card, Hand, Profile, deck_for


def answer_randomly(hand: Hand, rng: random.Random) -> None:
    """Half the time, play a random lead so that the position is the follower's to answer."""
    if rng.random() < 0.5:
        plays = [a for a in hand.legal_actions() if a.kind is ActionKind.PLAY]
        hand.apply(hand.to_act, rng.choice(plays))


@pytest.mark.parametrize("profile", list(Profile))
def test_solver_equals_brute_force_on_random_positions(profile):
    """R3-R8 as the engine applies them: every legal action's value, leads and answers,
    closed and exhausted stocks, marriages, claims (false ones included)."""
    rng = random.Random(f"endgame:{profile}")
    kinds = set()
    for _ in range(120):
        hand = random_strict_hand(rng, profile, max_cards=4)
        answer_randomly(hand, rng)
        if hand.is_over:
            continue
        expected = brute_force_actions(hand)
        assert solve(Position.from_hand(hand)) == expected, (hand.holding(0), hand.holding(1))
        kinds |= {a.kind for a in expected}
    assert {ActionKind.PLAY, ActionKind.CLAIM, ActionKind.DECLARE} <= kinds


@pytest.mark.parametrize("profile", list(Profile))
def test_wins_only_values_are_the_sign_of_the_game_points(profile):
    """A solver that counts hands won (+1/-1) gives each action the sign of its exact game
    points (R8: never 0), closed stocks and claims included, with or without a table."""
    rng = random.Random(f"wins:{profile}")
    closed = 0
    for _ in range(150):
        hand = random_strict_hand(rng, profile, max_cards=5)
        answer_randomly(hand, rng)
        if hand.is_over:
            continue
        pos = Position.from_hand(hand)
        points = solve(pos)
        wins = Solver.for_position(pos, wins_only=True).action_values(pos)
        assert wins == {a: 1 if v > 0 else -1 for a, v in points.items()}, (
            hand.holding(0), hand.holding(1))
        closed += hand.closed_by is not None
    assert closed >= 10


def test_solver_equals_brute_force_right_after_a_close():
    """R6.2/R6.3/R8.3/R8.4: the value of closing is the solved closed position."""
    rng = random.Random("close")
    checked = 0
    while checked < 12:
        hand = Hand(deck_for(rng.randrange(10**6), 0), rng.randrange(2))
        for _ in range(rng.randrange(0, 7)):  # a few random tricks with the stock open
            if hand.is_over:
                break
            plays = [a for a in hand.legal_actions() if a.kind is ActionKind.PLAY]
            hand.apply(hand.to_act, rng.choice(plays))
        if hand.is_over or hand.lead_card is not None or Action.close() not in hand.legal_actions():
            continue
        hand.apply(hand.to_act, Action.close())
        me = hand.to_act
        assert Solver.for_position(Position.from_hand(hand)).value(
            Position.from_hand(hand)) == brute_force(hand, me)
        checked += 1


def test_a_correct_claim_is_taken():
    """R7.1/R7.2: with 66 on lead the solver claims (nothing scores more)."""
    rng = random.Random("claims")
    seen = 0
    while seen < 20:
        hand = random_strict_hand(rng, max_cards=4)
        seat = hand.to_act
        if hand.points(seat) < 66 or Action.claim() not in hand.legal_actions():
            continue
        values = solve(Position.from_hand(hand))
        assert best_action(values) is Action.claim()
        assert values[Action.claim()] == max(brute_force_actions(hand).values()) > 0
        seen += 1


def test_a_false_claim_when_it_loses_least():
    """R8.2 vs R8.3: against a closer who had left us no trick, a false claim (2) can beat
    letting the closer succeed (3). The solver finds such claims, and only where they are best."""
    rng = random.Random(5)
    found = 0
    for _ in range(600):
        hand = random_strict_hand(rng, max_cards=3)
        if hand.closed_by is None:
            continue
        pos = Position.from_hand(hand)
        values = solve(pos)
        claim = Action.claim()
        if (claim in values and pos.points(pos.to_act) < 66
                and all(v < values[claim] for a, v in values.items() if a is not claim)):
            assert best_action(values) is claim
            assert values == brute_force_actions(hand)
            found += 1
    assert found >= 1


def test_constructed_endgame_lead_the_trump_ace():
    """Trump spades, stock exhausted, seat 0 to lead with AS JS AD against TS KC QC; seat 0 has
    50 card points and seat 1 29. AS wins the ten (R3.4: follow suit) for 71 and a claim while
    seat 1 is under 33: 2 game points. AD is trumped by TS, JS loses to TS: both worse."""
    def mask(text: str) -> int:
        return sum(Card.from_text(t).bit for t in text.split())

    pos = Position(trump=3, hands=(mask("AS JS AD"), mask("TS KC QC")), card_points=(50, 29),
                   marriage_points=(0, 0), tricks_won=(4, 3), to_act=0, leader=0, lead=-1,
                   declared=-1, closer=None, close_position=None, started=True, sharp=False)
    values = solve(pos)
    assert best_action(values) == Action.from_text("play AS")
    assert values[Action.from_text("play AS")] == 2
    assert all(v < 2 for a, v in values.items() if a != Action.from_text("play AS"))
    assert values[Action.claim()] == -2  # 50 < 66: a false claim (R8.2)


def test_node_limit_stops_the_search():
    rng = random.Random(9)
    hand = random_strict_hand(rng, max_cards=5)
    while len(hand.holding(hand.to_act)) < 5:
        hand = random_strict_hand(rng, max_cards=5)
    with pytest.raises(SearchTimeout):
        solve(Position.from_hand(hand), node_limit=1)


def test_position_needs_the_strict_phase():
    with pytest.raises(ValueError, match="stock exhausted or closed"):
        Position.from_hand(Hand(deck_for(1, 0), 0))


def test_a_solver_shared_across_positions_gives_the_fresh_values():
    """The champion keeps one solver (one transposition table) per hand facts for a whole move:
    values from the shared table equal a fresh solver's, and the brute force's."""
    rng = random.Random("shared")
    shared: dict[tuple[int, bool, int, int], Solver] = {}
    checked = 0
    for _ in range(150):
        hand = random_strict_hand(rng, max_cards=4)
        answer_randomly(hand, rng)
        if hand.is_over:
            continue
        pos = Position.from_hand(hand)
        fresh = Solver.for_position(pos)
        solver = shared.setdefault(fresh.facts, fresh)
        values = solver.action_values(pos)
        assert values == fresh.action_values(pos) or solver is fresh
        if checked < 40:
            assert values == brute_force_actions(hand)
        checked += 1
    assert checked > 100 and len(shared) < checked
