"""Deals that one seat cannot tell apart (the no-leak tests of the kit's environments, issue
45): the same own cards and the same public history, the opponent's hand or the stock order
changed. Made with the engine: cards whose place the seat cannot see, and that were never
shown to it, swap places in the deck, and the same actions are replayed on the new deck."""

from __future__ import annotations

import random
from collections.abc import Iterator

from engine import Hand, IllegalActionError, Profile, deck_for, observe


def indistinguishable(hand: Hand, seat: int, rng: random.Random) -> Hand | None:
    """A hand dealt from another deck, with `hand`'s actions replayed on it, that `seat` cannot
    tell from `hand` and whose opponent's cards or stock differ; None when the shuffle changed
    nothing or made a replayed action illegal (the moved cards changed what was legal)."""
    obs = observe(hand, seat)
    hidden = obs.unseen_cards() - obs.known_opponent_cards()
    deck = list(hand.deck)
    places = [i for i, card in enumerate(deck) if card in hidden]
    cards = [deck[i] for i in places]
    rng.shuffle(cards)
    other = list(deck)
    for i, card in zip(places, cards, strict=True):
        other[i] = card
    twin = Hand(other, hand.dealer, hand.profile)
    try:
        for actor, action in hand.history:
            twin.apply(actor, action)
    except IllegalActionError:
        return None
    if (twin.holding(1 - seat), twin.stock_cards()) == (hand.holding(1 - seat),
                                                        hand.stock_cards()):
        return None
    return twin


def twins(count: int, seed: int) -> Iterator[tuple[Hand, Hand, int]]:
    """(hand, twin, seat): random hands of both profiles stopped at a random point, each with
    a twin that `seat` cannot tell apart from it."""
    rng = random.Random(seed)
    for n in range(count):
        profile = Profile.SOFT if n % 2 == 0 else Profile.SHARP
        hand = Hand(deck_for(seed * 1000 + n, 0), dealer=n % 2, profile=profile)
        stop = rng.randrange(1, 20)
        while not hand.is_over and len(hand.history) < stop:
            actor = hand.to_act
            assert actor is not None
            hand.apply(actor, rng.choice(hand.legal_actions()))
        if hand.is_over:
            continue
        for seat in (0, 1):
            twin = indistinguishable(hand, seat, rng)
            if twin is not None:
                yield hand, twin, seat
