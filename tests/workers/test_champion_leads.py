"""What the opponent's leads say about its hand (`bots.leads`): the times its cards came
into its hand agree with the record, and deals in which it held the trump jack or a marriage at
a lead and did not use it weigh less (R4.1, R5.1)."""

from __future__ import annotations

import random

import pytest

from bots import make_bot
from bots.champion import ChampionBot
from bots.leads import DEALT, DECLARE_SKIP, EXCHANGE_SKIP, draw_times, lead_weight
from engine import Action, Card, Hand, Profile, deck_for, determinize, observe


def observations(deals: int):
    """(hand, seat to act, its observation) at every decision of hands between two champions."""
    bots = [make_bot("champion", ms=0, samples=6), make_bot("rdeep", samples=2)]
    rng = random.Random(5)
    for deal in range(deals):
        hand = Hand(deck_for(41, deal), deal % 2)
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            yield hand, seat, obs
            hand.apply(seat, bots[(seat + deal) % 2].choose(obs, rng))


def test_draw_times_agree_with_when_each_card_was_played_and_shown():
    rng = random.Random(1)
    checked = 0
    for hand, seat, obs in observations(12):
        opponent = 1 - seat
        for held in (set(hand.holding(opponent)),
                     set(determinize(obs, rng).holding(opponent))):
            times = draw_times(obs, held, rng)
            assert times is not None, obs
            assert sum(t == 0 for t in times.values()) == DEALT
            drawn = sorted(t for t in times.values() if t)
            assert drawn == sorted(set(drawn))  # one card per draw
            for t, trick in enumerate(obs.tricks):
                card = trick.lead if trick.leader == opponent else trick.follow
                if card in times:
                    assert times[card] <= t
            for m in obs.marriages:
                if m.seat == opponent:
                    for card in (Card.from_text("K" + m.suit.value),
                                 Card.from_text("Q" + m.suit.value)):
                        if card in times:
                            assert times[card] <= m.trick
            checked += 1
    assert checked > 200


def first_lead(hold: list[str], lead: str, trump_suit_of: str | None = None,
               profile: Profile = Profile.SOFT):
    """A deal where seat 1 (on lead first) holds `hold`, leads `lead` without declaring or
    exchanging, and seat 0 is to answer: seat 0's observation."""
    for deal in range(5000):
        deck = deck_for(9, deal)
        hand = Hand(deck, 0, profile)
        mine = {str(c) for c in hand.holding(1)}
        if not set(hold) <= mine or lead not in mine:
            continue
        if trump_suit_of is not None and hand.trump_suit.value != trump_suit_of:
            continue
        hand.apply(1, Action.play(Card.from_text(lead)))
        return observe(hand, 0)
    raise AssertionError("no such deal")


def plain_cards(obs) -> list[Card]:
    """Unseen cards that make neither a marriage nor an exchange: no king, queen or trump jack."""
    return sorted(c for c in obs.unseen_cards() if c.rank.value not in "KQ"
                  and not (c.rank.value == "J" and c.suit == obs.trump_suit))


def test_an_undeclared_marriage_at_a_lead_weighs_less():
    """Seat 1 led a card without declaring the marriage it held: deals giving it that marriage
    weigh `DECLARE_SKIP` (both cards were dealt, it had no draw yet); others weigh 1."""
    obs = first_lead(["KH", "QH"], "AS")
    assert not any(a.kind.name == "DECLARE" for a in obs.legal_actions)
    rng = random.Random(2)
    with_pair = {Card.from_text("KH"), Card.from_text("QH")}
    others = plain_cards(obs)
    assert obs.opponent_hand_size == 4
    assert lead_weight(obs, with_pair | set(others[:2]), rng) == DECLARE_SKIP
    assert lead_weight(obs, {Card.from_text("KH"), *others[:3]}, rng) == 1.0
    assert lead_weight(obs, set(others[:4]), rng) == 1.0


def test_an_unexchanged_trump_jack_at_a_lead_weighs_less():
    trump = "H"
    obs = first_lead(["J" + trump], "AS", trump)
    rng = random.Random(3)
    jack = Card.from_text("J" + trump)
    others = plain_cards(obs)
    assert lead_weight(obs, {jack, *others[:3]}, rng) == EXCHANGE_SKIP
    assert lead_weight(obs, set(others[:4]), rng) == 1.0


def test_in_the_sharp_profile_the_first_lead_says_nothing():
    """R9.3: before winning a trick it may neither declare nor exchange."""
    obs = first_lead(["KH", "QH"], "AS", None, Profile.SHARP)
    jack = Card.from_text("J" + obs.trump_suit.value)
    held = {Card.from_text("KH"), Card.from_text("QH"), *plain_cards(obs)[:2]}
    assert lead_weight(obs, held, random.Random(5)) == 1.0
    if jack in obs.unseen_cards():
        assert lead_weight(obs, {jack, *plain_cards(obs)[:3]}, random.Random(5)) == 1.0


def test_a_card_drawn_after_the_lead_weighs_nothing():
    """After one trick the opponent drew one card: a marriage it holds now whose other half may
    be that card weighs `DECLARE_SKIP` only when the drawn card is not part of it, so on
    average between that and 1."""
    obs = None
    for _hand, seat, o in observations(40):
        if (len(o.tricks) == 1 and o.lead_card is None and o.tricks[0].leader != seat
                and not o.marriages and not o.exchanges and o.stock_size > 2):
            obs = o
            break
    assert obs is not None
    rng = random.Random(4)
    suit = next(s for s in "CDHS" if {Card.from_text("K" + s), Card.from_text("Q" + s)}
                <= obs.unseen_cards())
    pair = {Card.from_text("K" + suit), Card.from_text("Q" + suit)}
    rest = plain_cards(obs)[:3]
    weights = [lead_weight(obs, pair | set(rest), rng) for _ in range(400)]
    assert set(weights) <= {DECLARE_SKIP, 1.0}
    # the drawn card is one of the five it holds, uniformly: 2 in 5 it is half of the marriage
    assert 0.3 < sum(w == 1.0 for w in weights) / len(weights) < 0.5


@pytest.mark.parametrize("seed", range(3))
def test_with_leads_the_search_draws_fewer_deals_with_an_unused_marriage(seed):
    obs = first_lead(["KH", "QH"], "AS")
    pair = {Card.from_text("KH").bit | Card.from_text("QH").bit}.pop()
    plain, weighing = ChampionBot(ms=0, samples=4), ChampionBot(ms=0, samples=4, leads=True)
    rng = random.Random(seed)
    count = {}
    for bot in (plain, weighing):
        count[bot.leads] = sum(bot.deal(obs, rng, 0, None)._hands[1] & pair == pair
                               for _ in range(600))
    assert count[True] < 0.6 * count[False]
