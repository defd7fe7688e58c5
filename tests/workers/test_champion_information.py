"""The champion never uses a card its seat could not know: at a fixed seed its decision is the same
for every deal consistent with its observation.

At decisions of real hands (stock open, closed and exhausted), other full hands are drawn that
agree with everything the seat has seen (`engine.determinize`: the opponent's unknown cards and
the face-down stock placed anew); each gives the same observation, and one champion instance,
asked on each with the same rng seed, chooses the same action every time.
"""

from __future__ import annotations

import random

import pytest

from bots import make_bot
from bots.champion import ChampionBot
from bots.opponent import OpponentModel
from engine import Hand, Profile, deck_for, determinize, observe


def hidden(hand: Hand, seat: int) -> tuple[int, tuple[int, ...]]:
    """What `seat` cannot see: the opponent's cards and the stock order."""
    return hand._hands[1 - seat], tuple(hand._stock)


@pytest.mark.parametrize(("profile", "samples", "deals", "infer", "leads", "model"),
                         [(p, 4, 6, False, False, False) for p in Profile]
                         + [(Profile.SOFT, 16, 3, False, False, False),
                            (Profile.SOFT, 8, 3, True, False, False),
                            (Profile.SOFT, 8, 3, False, True, False),
                            (Profile.SOFT, 8, 3, False, False, True),
                            (Profile.SHARP, 8, 3, False, False, True)])
def test_the_decision_is_the_same_for_every_consistent_deal(profile, samples, deals, infer,
                                                            leads, model):
    """(16 samples: past `PRUNE_AFTER`, so the pruning of clearly worse actions is covered;
    `infer`, `leads` and `model`: the inferences from the opponent's answers, from its leads and
    from the learned model of its play read only the observation.)"""
    champion = ChampionBot(ms=0, samples=samples, infer=infer, leads=leads,
                           model=OpponentModel.load() if model else None)
    other = make_bot("rdeep", samples=2)
    checked = {"open": 0, "strict": 0}
    differing = 0
    for deal in range(deals):
        hand = Hand(deck_for(31, deal), deal % 2, profile)
        rng = random.Random(deal)
        while hand.to_act is not None:
            seat = hand.to_act
            obs = observe(hand, seat)
            if seat == 0 and len(obs.legal_actions) > 1:
                action = champion.choose(obs, random.Random(99))
                for k in range(3):
                    alt = determinize(obs, random.Random(1000 * deal + k))
                    differing += hidden(alt, seat) != hidden(hand, seat)
                    assert observe(alt, seat) == obs
                    assert champion.choose(observe(alt, seat), random.Random(99)) is action
                checked["strict" if obs.closed_by is not None or obs.stock_size == 0
                        else "open"] += 1
            else:
                action = (champion if seat == 0 else other).choose(obs, rng)
            hand.apply(seat, action)
    assert checked["open"] >= 5 * deals // 3 and checked["strict"] >= 5 * deals // 6, checked
    assert differing >= 10 * deals // 3  # the other deals really hide other cards
