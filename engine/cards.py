"""Cards, suits and ranks (R1): 20 interned card values that round-trip through text (`"TH"`)."""

from __future__ import annotations

from enum import StrEnum


class Suit(StrEnum):
    """A suit, written with one letter (R1.2)."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"


class Rank(StrEnum):
    """A rank, written with one letter; members are in rank order, high to low (R1.1)."""

    ACE = "A"
    TEN = "T"
    KING = "K"
    QUEEN = "Q"
    JACK = "J"


SUITS: tuple[Suit, ...] = tuple(Suit)
RANKS: tuple[Rank, ...] = tuple(Rank)
RANK_POINTS: dict[Rank, int] = {Rank.ACE: 11, Rank.TEN: 10, Rank.KING: 4, Rank.QUEEN: 3,
                                Rank.JACK: 2}


class Card:
    """One of the 20 cards. There is exactly one instance per card, so `is` and `==` agree.

    `index` is `suit_number * 5 + rank_number` (both in the order of `SUITS` and `RANKS`), and
    `bit` is `1 << index`: the engine keeps a player's cards as a bit mask.
    """

    __slots__ = ("index", "suit", "rank", "points", "bit", "_text")

    index: int
    suit: Suit
    rank: Rank
    points: int
    bit: int

    def __init__(self, index: int) -> None:
        if _INTERNED:
            raise TypeError("Card values are interned: use Card.from_text() or ALL_CARDS")
        self.index = index
        self.suit = SUITS[index // 5]
        self.rank = RANKS[index % 5]
        self.points = RANK_POINTS[self.rank]
        self.bit = 1 << index
        self._text = self.rank.value + self.suit.value

    @staticmethod
    def from_text(text: str) -> Card:
        """The card written `text`, rank then suit (`"TH"`); raises ValueError otherwise."""
        card = _BY_TEXT.get(text.strip().upper()) if isinstance(text, str) else None
        if card is None:
            raise ValueError(f"not a card: {text!r} (write rank A T K Q J, then suit C D H S)")
        return card

    @staticmethod
    def from_index(index: int) -> Card:
        """The card with this index (0..19)."""
        return _BY_INDEX[index]

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card({self._text!r})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Card.from_index, (self.index,))


_INTERNED = False
_BY_INDEX: list[Card] = [Card(i) for i in range(20)]
_INTERNED = True
_BY_TEXT: dict[str, Card] = {str(c): c for c in _BY_INDEX}

ALL_CARDS: tuple[Card, ...] = tuple(_BY_INDEX)


def cards_of_mask(mask: int) -> tuple[Card, ...]:
    """The cards whose bits are set in `mask`, in index order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(_BY_INDEX[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def parse_cards(texts: list[str] | tuple[str, ...] | str) -> list[Card]:
    """Cards from a list of texts, or from one string separated by spaces or commas."""
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    return [Card.from_text(t) for t in texts]
