"""The champion's presumed-payoff search (`ChampionBot(search="presumed")`, bots/presumed.py):
the opponent's presumed decision sees only its observation; it never values a deal below PIMC's
clairvoyant opponent; where every card is known it chooses as the exact solver does (R3.3); its
own choice is the same for every deal consistent with its seat's observation (R10)."""

from __future__ import annotations

import random

import pytest
from endgame_helpers import random_exhausted_hand, random_strict_hand

from bots import ChampionBot
from bots.batch import play_pair
from bots.champion import sample_hand, solved_value
from bots.endgame import Position, Solver, best_action
from bots.presumed import hides_cards, presumed_choice, presumed_value
from engine import Hand, Profile, observe


def closed_hand(rng: random.Random) -> Hand:
    """A hand whose stock was closed with cards left in it (R6), cards hidden from both."""
    while True:
        hand = random_strict_hand(rng, close_rate=1.0)
        if hides_cards(hand):
            return hand


def solver_for(me: int):  # type: ignore[no-untyped-def]
    def solve(deal: Hand) -> int:
        return solved_value(deal, me, None)
    return solve


def other_deal_of_the_same_view(hand: Hand, seat: int, rng: random.Random) -> Hand:
    """`hand` with the cards `seat` cannot see dealt again (the other seat's hand and the
    stock): a deal `seat` cannot tell from `hand`."""
    view = observe(hand, seat)
    return sample_hand(view, rng, sum(c.bit for c in view.ruled_out_cards()))


def test_the_opponents_presumed_decision_is_the_same_whatever_our_cards():
    rng = random.Random(5)
    checked = 0
    for _ in range(40):
        hand = closed_hand(rng)
        me = hand.to_act
        assert me is not None
        lead = hand.legal_actions()[0]
        hand.apply(me, lead)  # the opponent answers this lead
        if hand.to_act is None or hand.to_act == me or len(hand.legal_actions()) < 2:
            continue
        opponent = hand.to_act
        twin = other_deal_of_the_same_view(hand, opponent, rng)
        assert observe(twin, opponent) == observe(hand, opponent)
        choices = {presumed_choice(deal, opponent, random.Random(9), 3, solver_for(me),
                                   sample_hand) for deal in (hand, twin)}
        assert len(choices) == 1
        checked += 1
    assert checked >= 10


def test_a_presumed_opponent_never_does_better_than_a_clairvoyant_one():
    rng = random.Random(11)
    raised = 0
    for _ in range(300):
        hand = closed_hand(rng)
        me = hand.to_act
        assert me is not None
        solve = solver_for(me)
        presumed = presumed_value(hand, me, random.Random(3), 3, solve, sample_hand)
        clairvoyant = solve(hand)
        assert presumed >= clairvoyant
        raised += presumed > clairvoyant
    assert raised  # on some deals not seeing our cards costs the opponent


def test_where_every_card_is_known_it_is_the_exact_solver():
    rng = random.Random(17)
    bot = ChampionBot(ms=0, samples=4, search="presumed")
    for _ in range(25):
        hand = random_exhausted_hand(rng)
        me = hand.to_act
        assert me is not None and not hides_cards(hand)
        assert presumed_value(hand, me, random.Random(1), 3, solver_for(me),
                              sample_hand) == solver_for(me)(hand)
        pos = Position.from_hand(hand)
        values = Solver.for_position(pos).action_values(pos)
        best = max(values.values())
        chosen = bot.choose(observe(hand, me), random.Random(2))
        assert values[chosen] == best
        assert chosen == best_action(values)


def test_its_choice_is_the_same_for_every_deal_of_one_observation():
    rng = random.Random(23)
    bot = ChampionBot(ms=0, samples=6, search="presumed")
    differ = 0
    for _ in range(8):
        hand = closed_hand(rng)
        me = hand.to_act
        assert me is not None
        twin = other_deal_of_the_same_view(hand, me, rng)
        differ += twin.holding(1 - me) != hand.holding(1 - me)
        assert observe(twin, me) == observe(hand, me)
        assert (bot.choose(observe(hand, me), random.Random(4))
                == bot.choose(observe(twin, me), random.Random(4)))
    assert differ


def test_it_plays_whole_hands_and_refuses_unknown_settings():
    presumed = ChampionBot(ms=0, samples=4, search="presumed")
    pair = play_pair(presumed, ChampionBot(ms=0, samples=4), 3, 0, Profile.SOFT)
    assert pair.points_a + pair.points_b > 0
    with pytest.raises(ValueError, match="search must be one of pimc, presumed"):
        ChampionBot(ms=0, samples=4, search="clairvoyant")
    with pytest.raises(ValueError, match="presumed_worlds must be at least 1"):
        ChampionBot(ms=0, samples=4, search="presumed", presumed_worlds=0)
