"""What one seat may know (R10): the observation, built from the public record and own hand.

Observations and their parts (`engine.record`) are named tuples: immutable, and cheap to build
for the bots that read one per move.

`observe()` reads the hand through its public API: the public record and the observing seat's
own cards, nothing else, and `Observation` has no field that could hold the opponent's hand or
the stock order. `determinize()` goes the other way for search bots: a full hand consistent with
an observation.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from engine.actions import Action
from engine.cards import ALL_CARDS, Card, Suit
from engine.hand import Hand
from engine.record import Exchange, Marriage, Trick
from engine.rules import Profile


class Observation(NamedTuple):
    """Everything one seat may know at one moment (R10.1), and nothing it may not (R10.2)."""

    seat: int  # the observing seat
    profile: Profile
    hand_number: int  # 0-based number of the hand within the match
    dealer: int
    to_act: int | None  # the seat to act, None when the hand is over
    hand: tuple[Card, ...]  # the observing seat's own cards
    opponent_hand_size: int
    trump_suit: Suit
    trump_card: Card  # the face-up trump card, or the one last seen after close/exhaustion
    trump_card_face_up: bool
    stock_size: int  # cards in the stock, the trump card included
    closed_by: int | None
    closed_after: int | None  # tricks finished when the stock was closed
    leader: int  # the seat on lead in the trick under way
    lead_card: Card | None  # the card led in the trick under way
    tricks: tuple[Trick, ...]
    marriages: tuple[Marriage, ...]
    exchanges: tuple[Exchange, ...]
    points: int  # own points (R5.5)
    pending_points: int  # own declared marriage points not yet effective (R5.3)
    tricks_won: int
    opponent_tricks_won: int
    counters: tuple[int, int]  # both match counters, from 7 down (R9.1)
    legal_actions: tuple[Action, ...]  # what the observing seat may do now (empty if not to act)

    # --- derived from the public record only ---------------------------------------------------
    def played_cards(self) -> set[Card]:
        """Every card played so far, the trick under way included."""
        played = {c for t in self.tricks for c in (t.lead, t.follow)}
        if self.lead_card is not None:
            played.add(self.lead_card)
        return played

    def unseen_cards(self) -> set[Card]:
        """Cards whose place this seat cannot see: the opponent's hand and the face-down stock.

        The trump card still in the stock is excluded (its place is known).
        """
        unseen = set(ALL_CARDS) - set(self.hand) - self.played_cards()
        if self.stock_size:
            unseen.discard(self.trump_card)
        return unseen

    def known_opponent_cards(self) -> set[Card]:
        """Cards the opponent was shown to hold (R10.2) and has not played since."""
        opponent = 1 - self.seat
        known: set[Card] = set()
        for ex in self.exchanges:
            if ex.seat == opponent:
                known.add(ex.taken)
        for m in self.marriages:
            if m.seat == opponent:
                known.add(Card.from_text("K" + m.suit.value))
                known.add(Card.from_text("Q" + m.suit.value))
        # R3.3: with the stock exhausted (never closed), the loser of the fifth trick took the
        # trump card on the last draw.
        exhausted = self.stock_size == 0 and self.closed_by is None and len(self.tricks) >= 5
        if exhausted and self.tricks[4].winner != opponent:
            known.add(self.trump_card)
        return known & self.unseen_cards()

    def strict_from(self) -> int | None:
        """The tricks finished when strict play began (R3.4): at the close, or 5 once the stock
        ran out (R3.3); None while the stock is open."""
        if self.closed_by is not None:
            return self.closed_after or 0
        if self.stock_size == 0:
            return 5
        return None

    def ruled_out_cards(self) -> set[Card]:
        """Unseen cards strict play shows the opponent cannot hold now (R3.4): after failing to
        follow a suit it has none of it (and no trump if it did not trump); after following
        with a lower card, none of the higher ones of the suit."""
        start = self.strict_from()
        if start is None:
            return set()
        opponent = 1 - self.seat
        out: set[Card] = set()
        for trick in self.tricks[start:]:
            if trick.leader == opponent:
                continue
            lead, follow = trick.lead, trick.follow
            if follow.suit != lead.suit:
                out |= {c for c in ALL_CARDS if c.suit == lead.suit}
                if follow.suit != self.trump_suit:
                    out |= {c for c in ALL_CARDS if c.suit == self.trump_suit}
            elif follow.index > lead.index:  # a lower card: ranks are ordered high to low
                out |= {c for c in ALL_CARDS if c.suit == lead.suit and c.index < lead.index}
        return out & self.unseen_cards()

    # --- plain data -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (cards and actions as text)."""
        return {
            "seat": self.seat,
            "profile": self.profile.value,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "to_act": self.to_act,
            "hand": [str(c) for c in self.hand],
            "opponent_hand_size": self.opponent_hand_size,
            "trump_suit": self.trump_suit.value,
            "trump_card": str(self.trump_card),
            "trump_card_face_up": self.trump_card_face_up,
            "stock_size": self.stock_size,
            "closed_by": self.closed_by,
            "closed_after": self.closed_after,
            "leader": self.leader,
            "lead_card": None if self.lead_card is None else str(self.lead_card),
            "tricks": [{"leader": t.leader, "lead": str(t.lead), "follow": str(t.follow),
                        "winner": t.winner} for t in self.tricks],
            "marriages": [{"seat": m.seat, "suit": m.suit.value, "trick": m.trick}
                          for m in self.marriages],
            "exchanges": [{"seat": e.seat, "taken": str(e.taken)} for e in self.exchanges],
            "points": self.points,
            "pending_points": self.pending_points,
            "tricks_won": self.tricks_won,
            "opponent_tricks_won": self.opponent_tricks_won,
            "counters": list(self.counters),
            "legal_actions": [str(a) for a in self.legal_actions],
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Observation:
        """The observation from `to_dict()`'s form."""
        card = Card.from_text
        return Observation(
            seat=d["seat"], profile=Profile(d["profile"]), hand_number=d["hand_number"],
            dealer=d["dealer"], to_act=d["to_act"], hand=tuple(card(c) for c in d["hand"]),
            opponent_hand_size=d["opponent_hand_size"], trump_suit=Suit(d["trump_suit"]),
            trump_card=card(d["trump_card"]), trump_card_face_up=d["trump_card_face_up"],
            stock_size=d["stock_size"], closed_by=d["closed_by"],
            closed_after=d["closed_after"], leader=d["leader"],
            lead_card=None if d["lead_card"] is None else card(d["lead_card"]),
            tricks=tuple(Trick(t["leader"], card(t["lead"]), card(t["follow"]), t["winner"])
                         for t in d["tricks"]),
            marriages=tuple(Marriage(m["seat"], Suit(m["suit"]), m["trick"])
                            for m in d["marriages"]),
            exchanges=tuple(Exchange(e["seat"], card(e["taken"])) for e in d["exchanges"]),
            points=d["points"], pending_points=d["pending_points"],
            tricks_won=d["tricks_won"], opponent_tricks_won=d["opponent_tricks_won"],
            counters=(d["counters"][0], d["counters"][1]),
            legal_actions=tuple(Action.from_text(a) for a in d["legal_actions"]),
        )


def observe(hand: Hand, seat: int, counters: tuple[int, int] = (7, 7),
            hand_number: int = 0) -> Observation:
    """Build `seat`'s observation of `hand` from its public record and `seat`'s own cards."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    other = 1 - seat
    own = hand.holding(seat)
    lead_card = hand.lead_card
    leader = hand.leader
    opponent_size = len(own)
    if lead_card is not None:
        opponent_size += -1 if leader == other else 1
    closed_by = hand.closed_by
    stock_size = hand.stock_size
    to_act = hand.to_act
    return Observation(
        seat, hand.profile, hand_number, hand.dealer, to_act, own, opponent_size,
        hand.trump_suit, hand.trump_card,
        closed_by is None and stock_size > 0,  # trump_card_face_up
        stock_size, closed_by, hand.closed_after, leader, lead_card,
        hand.tricks, hand.marriages, hand.exchanges,
        hand.points(seat), hand.pending_points(seat), hand.tricks_won(seat),
        hand.tricks_won(other), counters,
        hand.legal_actions() if to_act == seat else (),
    )


def determinize(obs: Observation, rng: random.Random) -> Hand:
    """A full hand consistent with `obs`: the opponent's unknown cards and the face-down stock
    drawn uniformly from the unseen cards. For search bots; its `history` is empty.
    """
    known = obs.known_opponent_cards()
    free = sorted(obs.unseen_cards() - known)
    rng.shuffle(free)
    need = obs.opponent_hand_size - len(known)
    if need < 0 or need > len(free):
        raise ValueError("the observation is inconsistent: cannot place the opponent's cards")
    opponent_cards = [*known, *free[:need]]
    face_down = free[need:]
    if (len(face_down) + 1 if obs.stock_size else 0) != obs.stock_size:
        raise ValueError("the observation is inconsistent: stock size does not match")
    # The stock top card first: the last face-down card is drawn first, the trump card last.
    stock = [*reversed(face_down), obs.trump_card] if obs.stock_size else []
    holdings = (obs.hand, opponent_cards) if obs.seat == 0 else (opponent_cards, obs.hand)
    return Hand.from_position(
        obs.profile, obs.dealer, holdings, stock, obs.trump_card, obs.leader, obs.to_act,
        obs.lead_card, obs.tricks, obs.marriages, obs.exchanges, obs.closed_by,
        obs.closed_after)
