"""A simple sensible bot. Run: bummerl-kit examples/simple_bot.py:SimpleBot

- claim as soon as a claim is correct (own points >= 66, R7.1/R7.2);
- declare the best marriage it can (40 before 20) and exchange the trump jack when allowed;
- leading: play the lowest non-trump card (keep trumps and aces);
- following: win the trick as cheaply as possible if the lead is worth it (an ace or ten),
  otherwise throw the lowest card that is allowed.
"""

from __future__ import annotations

from bummerl_kit import Bot, engine

ORDER = "JQKTA"  # low to high (R1.1)


def strength(card: engine.Card) -> int:
    return ORDER.index(card.rank.value)


class SimpleBot(Bot):
    def act(self, observation: engine.Observation) -> engine.Action:
        legal = observation.legal_actions
        kinds = {a.kind: a for a in legal}
        if engine.ActionKind.CLAIM in kinds and observation.points >= 66:
            return kinds[engine.ActionKind.CLAIM]
        if engine.ActionKind.EXCHANGE in kinds:
            return kinds[engine.ActionKind.EXCHANGE]
        declares = [a for a in legal if a.kind == engine.ActionKind.DECLARE]
        if declares:
            declares.sort(key=lambda a: a.suit != observation.trump_suit)
            return declares[0]
        cards = [a.card for a in legal if a.card is not None]  # the plays
        trump = observation.trump_suit
        lead = observation.lead_card

        def cheap(card: engine.Card) -> tuple[bool, int, int]:
            return (card.suit == trump, card.points, strength(card))

        if lead is None:  # leading: the cheapest non-trump card
            return engine.Action.play(min(cards, key=cheap))
        winners = [c for c in cards if self._beats(c, lead, trump)]
        if winners and (lead.points >= 10 or observation.points + lead.points >= 55):
            return engine.Action.play(min(winners, key=cheap))
        return engine.Action.play(min(cards, key=cheap))

    @staticmethod
    def _beats(card: engine.Card, lead: engine.Card, trump: engine.Suit) -> bool:
        if card.suit == lead.suit:
            return strength(card) > strength(lead)
        return card.suit == trump
