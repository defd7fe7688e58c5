"""One hand (deal) of Schnapsen: the mutable state, its legal actions, and how it is scored.

The state keeps each player's cards as a 20-bit mask (see `Card.index`) and the stock as a list
of card indices with the face-up trump card first and the top of the stock last. Legal actions
are interned `Action` values, cached per state, so that search bots and batch simulations can
play many hands a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from engine.actions import CLAIM, CLOSE, DECLARE_ACTIONS, EXCHANGE, PLAY_ACTIONS, Action, ActionKind
from engine.cards import ALL_CARDS, SUITS, Card, Suit, cards_of_mask
from engine.deal import check_deck
from engine.errors import IllegalActionError
from engine.record import Exchange, Marriage, Trick
from engine.rules import HALF_POINTS, WINNING_POINTS, Profile, Reason

# --- tables over card indices (index = suit * 5 + rank, rank 0 = ace ... 4 = jack) ----------
_POINTS = tuple(c.points for c in ALL_CARDS)
_ALL_BITS = (1 << 20) - 1
_PLAY = ActionKind.PLAY
_SUIT_MASK = tuple(0b11111 << (5 * s) for s in range(4))
# Cards of the same suit that beat card i (a lower rank number is a higher card).
_HIGHER = tuple(((1 << (i % 5)) - 1) << (5 * (i // 5)) for i in range(20))
_KING = 2
_QUEEN = 3
_JACK = 4
_MARRIAGE_MASK = tuple((1 << (5 * s + _KING)) | (1 << (5 * s + _QUEEN)) for s in range(4))


def _follower_wins_table(trump: int) -> tuple[bool, ...]:
    """`table[lead * 20 + follow]`: does the follower win the trick? (R3.1)."""
    table = []
    for lead in range(20):
        for follow in range(20):
            if follow // 5 == lead // 5:
                table.append(follow % 5 < lead % 5)
            else:
                table.append(follow // 5 == trump)
    return tuple(table)


_FOLLOWER_WINS = tuple(_follower_wins_table(t) for t in range(4))

# Legal-action tuples, cached by a key of the hand mask and a few flags (see legal_actions).
_PLAYS: dict[int, tuple[Action, ...]] = {}
_LEADS: dict[int, tuple[Action, ...]] = {}
_SPECIALS: dict[int, tuple[Action, ...]] = {}  # exchange, close, declare, claim, by flags
_CACHE_LIMIT = 500_000


def _plays(mask: int) -> tuple[Action, ...]:
    plays = _PLAYS.get(mask)
    if plays is None:
        if len(_PLAYS) > _CACHE_LIMIT:
            _PLAYS.clear()
        plays = _PLAYS[mask] = tuple(PLAY_ACTIONS[c.index] for c in cards_of_mask(mask))
    return plays


def strict_follow_mask(mask: int, lead: int, trump: int) -> int:
    """The cards of `mask` that strict play allows in answer to card `lead` (R3.4)."""
    same = mask & _SUIT_MASK[lead // 5]
    if same:
        return (same & _HIGHER[lead]) or same
    return (mask & _SUIT_MASK[trump]) or mask


class HandResult(NamedTuple):
    """A finished hand: its winner, the game points won, why (R8.6), points and tricks."""

    winner: int
    game_points: int
    reason: Reason
    points: tuple[int, int]
    tricks: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """The conformance-case form of the result."""
        return {"winner": self.winner, "game_points": self.game_points,
                "reason": self.reason.value, "points": list(self.points),
                "tricks": list(self.tricks)}


class Hand:
    """One hand: deal it from a deck (R2.2), apply actions, read the result.

    `deck` is top card first; `dealer` is the seat that dealt. The non-dealer leads first.
    """

    __slots__ = ("profile", "dealer", "deck", "history", "to_act", "_hands", "_stock", "_trump",
                 "_trump_card", "_jack_bit", "_sharp", "_wins", "_leader", "_lead", "_declared",
                 "_closed_by", "_close_position", "_closed_after", "_card_points",
                 "_marriage_points", "_tricks_won", "_tricks", "_marriages", "_exchanges",
                 "_result", "_legal", "_trick_views")

    def __init__(self, deck: Sequence[Card], dealer: int,
                 profile: Profile | str = Profile.SOFT) -> None:
        if dealer not in (0, 1):
            raise ValueError(f"dealer must be seat 0 or 1, not {dealer!r}")
        self.profile = profile if profile.__class__ is Profile else Profile(profile)
        self.dealer = dealer
        forehand = 1 - dealer
        try:
            bits = [c.bit for c in deck]
        except AttributeError:
            raise ValueError("a deck is a sequence of Card values") from None
        if len(bits) != 20 or sum(bits) != _ALL_BITS:
            check_deck(deck)
        hands = [0, 0]
        hands[forehand] = bits[0] | bits[1] | bits[2] | bits[7] | bits[8]
        hands[dealer] = bits[3] | bits[4] | bits[5] | bits[9] | bits[10]
        self._hands = hands
        # Face-up trump card first, then the face-down cards bottom to top (deck[11] on top).
        trump_card = deck[6].index
        stock = [c.index for c in deck[:10:-1]]
        stock.insert(0, trump_card)
        self._stock = stock
        self._trump = trump_card // 5
        self._trump_card = trump_card
        self._jack_bit = 1 << (self._trump * 5 + _JACK)
        self._sharp = self.profile is Profile.SHARP
        self._wins = _FOLLOWER_WINS[self._trump]
        self._leader = forehand
        self.to_act: int | None = forehand  # the seat to act, None when over
        self._lead = -1  # the card led in the trick under way, or -1
        self._declared = -1  # suit declared on this lead, whose K or Q must be led next
        self._closed_by: int | None = None
        self._close_position: tuple[int, bool] | None = None
        self._closed_after = -1  # tricks completed when the stock was closed
        self._card_points = [0, 0]
        self._marriage_points = [0, 0]
        self._tricks_won = [0, 0]
        self._tricks: list[tuple[int, int, int, int]] = []  # (leader, lead, follow, winner)
        self._marriages: list[tuple[int, int, int]] = []  # (seat, suit, tricks completed)
        self._exchanges: list[tuple[int, int]] = []  # (seat, card taken)
        self._result: HandResult | None = None
        self._legal: tuple[Action, ...] | None = None
        self._trick_views: tuple[Trick, ...] = ()  # finished tricks as values (see `tricks`)
        self.history: list[tuple[int, Action]] = []
        self.deck: tuple[Card, ...] = tuple(deck)

    # --- reading the state -----------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self._result is not None

    @property
    def result(self) -> HandResult | None:
        """The result once the hand is over (R8), else None."""
        return self._result

    @property
    def trump_suit(self) -> Suit:
        return SUITS[self._trump]

    @property
    def trump_card(self) -> Card:
        """The face-up trump card, or after a close or exhaustion the one last seen (R10.1)."""
        return ALL_CARDS[self._trump_card]

    @property
    def stock_size(self) -> int:
        """Cards in the stock, the trump card included (R2.3); kept as it was after a close."""
        return len(self._stock)

    @property
    def closed_by(self) -> int | None:
        return self._closed_by

    @property
    def closed_after(self) -> int | None:
        """Tricks finished when the stock was closed; None if it was not closed."""
        return self._closed_after if self._closed_by is not None else None

    @property
    def is_strict(self) -> bool:
        """Whether strict play applies: the stock is closed or exhausted (R3.4)."""
        return self._closed_by is not None or not self._stock

    @property
    def lead_card(self) -> Card | None:
        """The card led in the trick under way, if any."""
        return ALL_CARDS[self._lead] if self._lead >= 0 else None

    @property
    def leader(self) -> int:
        """The seat on lead for the trick under way (or the next one)."""
        return self._leader

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The finished tricks, in order. Each is made once: a trick never changes once
        finished, so the tuple only grows."""
        views = self._trick_views
        if len(views) < len(self._tricks):
            views += tuple(Trick(ldr, ALL_CARDS[a], ALL_CARDS[b], w)
                           for ldr, a, b, w in self._tricks[len(views):])
            self._trick_views = views
        return views

    @property
    def marriages(self) -> tuple[Marriage, ...]:
        """The marriages declared, in order (R5.1)."""
        if not self._marriages:
            return ()
        return tuple(Marriage(s, SUITS[suit], n) for s, suit, n in self._marriages)

    @property
    def exchanges(self) -> tuple[Exchange, ...]:
        """The trump-jack exchanges, in order (R4.1)."""
        if not self._exchanges:
            return ()
        return tuple(Exchange(s, ALL_CARDS[c]) for s, c in self._exchanges)

    def holding(self, seat: int) -> tuple[Card, ...]:
        """The cards in `seat`'s hand. Hidden information: never show it to the other seat."""
        return cards_of_mask(self._hands[seat])

    def stock_cards(self) -> tuple[Card, ...]:
        """The stock, top card first, trump card last. Hidden information."""
        return tuple(ALL_CARDS[i] for i in reversed(self._stock))

    def points(self, seat: int) -> int:
        """Card points won plus effective marriage points (R5.5)."""
        if self._tricks_won[seat]:
            return self._card_points[seat] + self._marriage_points[seat]
        return self._card_points[seat]

    def pending_points(self, seat: int) -> int:
        """Marriage points declared but not yet effective (R5.3)."""
        return 0 if self._tricks_won[seat] else self._marriage_points[seat]

    def tricks_won(self, seat: int) -> int:
        return self._tricks_won[seat]

    # --- legal actions ---------------------------------------------------------------------
    def legal_actions(self) -> tuple[Action, ...]:
        """The actions the seat to act may take; `claim`, when legal, comes last."""
        legal = self._legal
        if legal is not None:
            return legal
        seat = self.to_act
        if seat is None:
            return ()  # the hand is over (_end sets the cache to () as well)
        mask = self._hands[seat]
        stock = self._stock
        if self._lead >= 0:
            if self._closed_by is not None or not stock:
                mask = strict_follow_mask(mask, self._lead, self._trump)
            legal = _PLAYS.get(mask)
            if legal is None:
                legal = _plays(mask)
            self._legal = legal
            return legal
        # Leading. flags: 1 exchange (R4.1), 2 close (R6.1), 4 declare (R5.1), 8..32 the
        # declared suit + 1 whose K or Q must be led (R5.1), 64 claim (R7.1), 128 sharp (R9.3).
        declared = self._declared
        if self._sharp:
            won = self._tricks_won[seat] > 0
            flags = 128
            if self._closed_by is None and stock:
                n = len(stock)
                if n >= 2 and won and mask & self._jack_bit:
                    flags |= 1
                if n != 2:
                    flags |= 2
            if declared < 0:
                if won:
                    flags |= 4
            else:
                flags |= (declared + 1) << 3
        else:
            flags = 0
            if self._closed_by is None and stock:
                flags = 3 if len(stock) >= 2 and mask & self._jack_bit else 2
            flags |= 4 if declared < 0 else (declared + 1) << 3
        if self._tricks:
            flags |= 64
        key = mask | (flags << 20)
        actions = _LEADS.get(key)
        if actions is None:
            if len(_LEADS) > _CACHE_LIMIT:
                _LEADS.clear()
            actions = _LEADS[key] = _build_lead_actions(mask, flags)
        self._legal = actions
        return actions

    # --- applying actions ------------------------------------------------------------------
    def apply(self, seat: int, action: Action) -> None:
        """Apply `action` by `seat`, or raise IllegalActionError and change nothing (R11.1)."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if seat != self.to_act or action not in legal:
            raise self.why_illegal(seat, action)
        self.history.append((seat, action))
        self._legal = None
        kind = action.kind
        if kind is _PLAY:
            self._play(seat, action.card.index)  # type: ignore[union-attr]
        elif kind is ActionKind.CLAIM:
            self._finish_claim(seat, deemed=False)
        elif kind is ActionKind.DECLARE:
            assert action.suit is not None
            suit = SUITS.index(action.suit)
            self._marriage_points[seat] += 40 if suit == self._trump else 20
            self._marriages.append((seat, suit, len(self._tricks)))
            self._declared = suit
        elif kind is ActionKind.CLOSE:
            other = 1 - seat
            self._closed_by = seat
            self._close_position = (self.points(other), self._tricks_won[other] > 0)
            self._closed_after = len(self._tricks)
        else:  # exchange
            jack = self._trump * 5 + _JACK
            taken = self._stock[0]
            self._hands[seat] ^= (1 << jack) | (1 << taken)
            self._stock[0] = jack
            self._trump_card = jack
            self._exchanges.append((seat, taken))

    def _play(self, seat: int, card: int) -> None:
        hands = self._hands
        hands[seat] ^= 1 << card
        lead = self._lead
        if lead < 0:
            self._lead = card
            self._declared = -1
            self.to_act = 1 - seat
            return
        leader = 1 - seat
        winner = seat if self._wins[lead * 20 + card] else leader
        self._card_points[winner] += _POINTS[lead] + _POINTS[card]
        self._tricks_won[winner] += 1
        self._tricks.append((leader, lead, card, winner))
        self._lead = -1
        self._leader = winner
        self.to_act = winner
        stock = self._stock
        if stock and self._closed_by is None:  # R3.3 the winner draws first
            hands[winner] |= 1 << stock.pop()
            hands[1 - winner] |= 1 << stock.pop()
        if not hands[0] and not hands[1]:
            self._finish_last_trick(winner)

    # --- the end of a hand and its score (R7, R8) --------------------------------------------
    def _finish_claim(self, claimer: int, deemed: bool) -> None:
        other = 1 - claimer
        correct = self.points(claimer) >= WINNING_POINTS  # R7.2
        closer = self._closed_by
        if closer is None:
            if correct:  # R8.1
                winner, reason = claimer, Reason.CLAIM
                game_points = self._ordinary_game_points(other)
            else:  # R8.2
                winner, reason = other, Reason.FALSE_CLAIM
                game_points = 2 if self._tricks_won[other] else 3
        else:
            assert self._close_position is not None
            opp_points, opp_had_trick = self._close_position
            if claimer == closer and correct:  # R8.3
                winner, reason = closer, Reason.CLOSER_CLAIM
                game_points = 3 if not opp_had_trick else 2 if opp_points < HALF_POINTS else 1
            elif claimer == closer:  # R8.4: the closer's false claim
                winner, reason = other, Reason.FALSE_CLAIM
                game_points = 2 if opp_had_trick else 3
            elif correct:  # R8.4: the closer's opponent claims correctly first
                winner, reason = claimer, Reason.CLOSER_FAILED
                game_points = 2 if opp_had_trick else 3
            else:  # R8.2: a false claim by the closer's opponent
                winner, reason = closer, Reason.FALSE_CLAIM
                game_points = 2 if self._tricks_won[closer] else 3
        self._end(winner, game_points, reason)

    def _finish_last_trick(self, winner: int) -> None:
        """R7.4: the last trick's winner is deemed to claim when the claim would be correct."""
        if self.points(winner) >= WINNING_POINTS:
            self._finish_claim(winner, deemed=True)
            return
        closer = self._closed_by
        if closer is None:  # R8.5
            self._end(winner, 1, Reason.LAST_TRICK)
        else:  # R8.4: the hand ended with no correct claim by the closer
            assert self._close_position is not None
            self._end(1 - closer, 2 if self._close_position[1] else 3, Reason.CLOSER_FAILED)

    def _ordinary_game_points(self, loser: int) -> int:
        if not self._tricks_won[loser]:
            return 3
        return 2 if self.points(loser) < HALF_POINTS else 1

    def _end(self, winner: int, game_points: int, reason: Reason) -> None:
        self._result = HandResult(winner, game_points, reason,
                                  (self.points(0), self.points(1)),
                                  (self._tricks_won[0], self._tricks_won[1]))
        self.to_act = None
        self._legal = ()

    # --- why an action is illegal (R11.1) -----------------------------------------------------
    def why_illegal(self, seat: int, action: object) -> IllegalActionError:
        """The error for `action` by `seat`, citing the rule it breaks.

        The order is the conformance contract's: hand over, turn, unknown action, then the
        action's own rule.
        """
        if self._result is not None:
            return IllegalActionError("R8.6", "the hand is over")
        if seat != self.to_act:
            return IllegalActionError(
                "R3.1", f"it is not seat {seat}'s turn: seat {self.to_act} is to act")
        if not isinstance(action, Action):
            return IllegalActionError("R11.1", f"unknown action {action!r}")
        leading = self._lead < 0
        stock = self._stock
        kind = action.kind
        won = self._tricks_won[seat] > 0
        if kind is ActionKind.EXCHANGE:
            return IllegalActionError("R4.1", _exchange_problem(
                leading, self._closed_by, len(stock),
                bool(self._hands[seat] & (1 << (self._trump * 5 + _JACK))),
                self._sharp and not won))
        if kind is ActionKind.CLOSE:
            if not leading:
                why = "only the player on lead may close, before leading"
            elif self._closed_by is not None:
                why = "the stock is already closed"
            elif not stock:
                why = "the stock is exhausted"
            else:
                why = "sharp profile: closing is not allowed with only one face-down card left"
            return IllegalActionError("R6.1", why)
        if kind is ActionKind.DECLARE:
            assert action.suit is not None
            suit = SUITS.index(action.suit)
            if not leading:
                why = "only the player on lead may declare a marriage, before leading"
            elif self._declared >= 0:
                why = "at most one marriage per lead (R5.2)"
            elif self._hands[seat] & _MARRIAGE_MASK[suit] != _MARRIAGE_MASK[suit]:
                why = f"you do not hold both the king and the queen of {action.suit}"
            else:
                why = "sharp profile: declare a marriage only after winning a trick (R9.3)"
            return IllegalActionError("R5.1", why)
        if kind is ActionKind.CLAIM:
            if not leading:
                why = "claim only on your own lead, before playing the lead card"
            else:
                why = "no claim on the first lead of a hand"
            return IllegalActionError("R7.1", why)
        assert action.card is not None
        card = action.card
        if not self._hands[seat] & card.bit:
            return IllegalActionError("R3.1", f"{card} is not in your hand")
        if leading:
            declared = SUITS[self._declared]
            if self._sharp:
                why = f"after declaring the {declared} marriage, lead its king (R9.3)"
            else:
                why = f"after declaring the {declared} marriage, lead its king or queen"
            return IllegalActionError("R5.1", why)
        lead = ALL_CARDS[self._lead]
        allowed = cards_of_mask(strict_follow_mask(self._hands[seat], self._lead, self._trump))
        allowed_text = " ".join(str(c) for c in allowed)
        if allowed[0].suit == lead.suit and allowed[0].index < lead.index:
            why = f"must follow suit with a higher card ({allowed_text})"
        elif allowed[0].suit == lead.suit:
            why = f"must follow suit ({allowed_text})"
        else:
            why = f"void in {lead.suit}: must play a trump ({allowed_text})"
        return IllegalActionError("R3.4", why)

    # --- positions and copies --------------------------------------------------------------
    @classmethod
    def from_position(cls, profile: Profile | str, dealer: int,
                      holdings: tuple[Iterable[Card], Iterable[Card]], stock: Sequence[Card],
                      trump_card: Card, leader: int, to_act: int | None, lead_card: Card | None,
                      tricks: Sequence[Trick], marriages: Sequence[Marriage],
                      exchanges: Sequence[Exchange], closed_by: int | None,
                      closed_after: int | None) -> Hand:
        """A hand in play, from where every card is and its public record (for search bots, see
        `engine.determinize`). `holdings` are both seats' cards; `stock` is top card first, the
        face-up trump card last (empty once exhausted); `trump_card` is the face-up one, or the
        one last seen. Points, tricks won, a marriage whose card is still to be led (R5.1) and
        the position at a close (R8.3) follow from the record. `deck` and `history` are empty.
        """
        hand = cls.__new__(cls)
        hand.profile = profile if profile.__class__ is Profile else Profile(profile)
        hand.dealer = dealer
        hand.deck = ()
        hand.history = []
        masks = [sum(c.bit for c in holdings[0]), sum(c.bit for c in holdings[1])]
        hand._hands = masks
        hand._stock = [c.index for c in reversed(stock)]
        trump = trump_card.index // 5
        hand._trump = trump
        hand._trump_card = trump_card.index
        hand._jack_bit = 1 << (trump * 5 + _JACK)
        hand._sharp = hand.profile is Profile.SHARP
        hand._wins = _FOLLOWER_WINS[trump]
        hand._leader = leader
        hand.to_act = to_act
        hand._lead = lead_card.index if lead_card is not None else -1
        hand._tricks = [(t.leader, t.lead.index, t.follow.index, t.winner) for t in tricks]
        hand._marriages = [(m.seat, SUITS.index(m.suit), m.trick) for m in marriages]
        hand._exchanges = [(e.seat, e.taken.index) for e in exchanges]
        card_points = [0, 0]
        tricks_won = [0, 0]
        for t in tricks:
            card_points[t.winner] += t.lead.points + t.follow.points
            tricks_won[t.winner] += 1
        marriage_points = [0, 0]
        for m in marriages:
            marriage_points[m.seat] += 40 if SUITS.index(m.suit) == trump else 20
        hand._card_points = card_points
        hand._tricks_won = tricks_won
        hand._marriage_points = marriage_points
        # The marriage declared on the lead under way, if its card is not led yet (R5.1).
        hand._declared = -1
        last = marriages[-1] if marriages else None
        if (last is not None and last.seat == to_act and lead_card is None
                and last.trick == len(tricks)
                and masks[last.seat] & _MARRIAGE_MASK[SUITS.index(last.suit)]
                == _MARRIAGE_MASK[SUITS.index(last.suit)]):
            hand._declared = SUITS.index(last.suit)
        hand._closed_by = closed_by
        hand._closed_after = closed_after if closed_after is not None else -1
        hand._close_position = None
        if closed_by is not None:
            opp = 1 - closed_by
            before = tricks[: hand._closed_after]
            opp_tricks = sum(1 for t in before if t.winner == opp)
            opp_points = sum(t.lead.points + t.follow.points for t in before if t.winner == opp)
            if opp_tricks:
                opp_points += sum(40 if SUITS.index(m.suit) == trump else 20
                                  for m in marriages
                                  if m.seat == opp and m.trick <= hand._closed_after)
            hand._close_position = (opp_points, opp_tricks > 0)
        hand._result = None
        hand._legal = None
        hand._trick_views = tuple(tricks)
        return hand

    def copy(self) -> Hand:
        """An independent copy (for search)."""
        new = Hand.__new__(Hand)
        for name in _SHARED_FIELDS:
            setattr(new, name, getattr(self, name))
        new._hands = self._hands[:]
        new._stock = self._stock[:]
        new._card_points = self._card_points[:]
        new._marriage_points = self._marriage_points[:]
        new._tricks_won = self._tricks_won[:]
        new._tricks = self._tricks[:]
        new._marriages = self._marriages[:]
        new._exchanges = self._exchanges[:]
        new.history = self.history[:]
        return new

    def __repr__(self) -> str:
        state = f"over: {self._result}" if self._result else f"seat {self.to_act} to act"
        return f"<Hand trump {self.trump_suit}, stock {len(self._stock)}, {state}>"


# Fields whose values are immutable, so a copy can share them.
_SHARED_FIELDS = ("profile", "dealer", "deck", "to_act", "_trump", "_trump_card", "_jack_bit",
                  "_sharp", "_wins", "_leader", "_lead", "_declared", "_closed_by",
                  "_close_position", "_closed_after", "_result", "_legal", "_trick_views")


def _exchange_problem(leading: bool, closed_by: int | None, stock_size: int, has_jack: bool,
                      sharp_no_trick: bool) -> str:
    if not leading:
        return "only the player on lead may exchange, before leading"
    if closed_by is not None:
        return "the stock is closed"
    if stock_size == 0:
        return "the stock is exhausted"
    if stock_size < 2:
        return "the stock needs a face-down card above the trump card"
    if not has_jack:
        return "you do not hold the trump jack"
    if sharp_no_trick:
        return "sharp profile: exchange only after winning a trick (R9.3)"
    return "exchange is not allowed now"


def _build_lead_actions(mask: int, flags: int) -> tuple[Action, ...]:
    declared = (flags >> 3 & 7) - 1
    if declared >= 0:
        must = 1 << (5 * declared + _KING)
        if not flags & 128:  # soft: the king or the queen (R5.1); sharp: the king (R9.3)
            must |= 1 << (5 * declared + _QUEEN)
        plays = _plays(mask & must)
    else:
        plays = _plays(mask)
    marriages = 0
    if flags & 4:
        for suit in range(4):
            if mask & _MARRIAGE_MASK[suit] == _MARRIAGE_MASK[suit]:
                marriages |= 1 << suit
    key = (flags & 0b1000111) | (marriages << 8)
    specials = _SPECIALS.get(key)
    if specials is None:
        specials = _SPECIALS[key] = _build_specials(flags, marriages)
    return plays + specials


def _build_specials(flags: int, marriages: int) -> tuple[Action, ...]:
    actions = []
    if flags & 1:
        actions.append(EXCHANGE)
    if flags & 2:
        actions.append(CLOSE)
    for suit in range(4):
        if marriages & (1 << suit):
            actions.append(DECLARE_ACTIONS[suit])
    if flags & 64:
        actions.append(CLAIM)
    return tuple(actions)
