"""An event's standings with their tie-breaks, and its crosstable, from its pairs' results.

Order (docs/events.md, "Standings"):

1. match points (2 / 1 / 0 per pair; a Swiss bye counts 2);
2. the game points difference (scored minus conceded, over the pairs played);
3. Buchholz in a Swiss event (the sum of the match points of the opponents met), Sonneborn-Berger
   in the others (the sum over the pairs of the opponent's match points times the share of the
   pair won: all of it for 2, half for 1);
4. game points scored;
5. the seed (the order the field was entered in).

Bots equal on 1-4 share a rank. Only decided pairs count (`done` and `forfeited`); a `void`
pair counts for neither bot, and pairs not decided yet are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from events.formats import SWISS
from events.scoring import FORFEIT_A, FORFEIT_B, FORFEIT_BOTH

DONE = "done"
FORFEITED = "forfeited"
DECIDED = (DONE, FORFEITED)
BYE_POINTS = 2


@dataclass(frozen=True)
class PairScore:
    """A pair as the standings see it: its bots, state and result (None until decided)."""

    round: int | None
    board: int
    a: int
    b: int
    state: str
    points_a: int | None = None
    points_b: int | None = None
    game_points_a: int | None = None
    game_points_b: int | None = None
    forfeit: str | None = None

    @property
    def decided(self) -> bool:
        return self.state in DECIDED

    def of(self, bot: int) -> tuple[int, int, int, int]:
        """(points, opponent's points, game points scored, conceded) of `bot` in this pair."""
        if bot == self.a:
            return (self.points_a or 0, self.points_b or 0, self.game_points_a or 0,
                    self.game_points_b or 0)
        return (self.points_b or 0, self.points_a or 0, self.game_points_b or 0,
                self.game_points_a or 0)

    def opponent(self, bot: int) -> int:
        return self.b if bot == self.a else self.a

    def forfeited_by(self, bot: int) -> bool:
        return self.forfeit == FORFEIT_BOTH or \
            self.forfeit == (FORFEIT_A if bot == self.a else FORFEIT_B)


@dataclass
class Row:
    """One bot's line of the standings."""

    bot: int
    seed: int  # its place in the field as entered, from 0
    rank: int = 0
    points: int = 0
    scored: int = 0  # game points
    conceded: int = 0
    buchholz: int = 0
    sonneborn_berger: float = 0.0
    pairs: int = 0  # decided pairs
    won: int = 0  # pairs won 2-0
    split: int = 0
    lost: int = 0
    forfeits: int = 0  # pairs it forfeited
    byes: int = 0
    withdrawn: bool = False
    opponents: list[int] = field(default_factory=list)

    @property
    def difference(self) -> int:
        return self.scored - self.conceded

    @property
    def tiebreak(self) -> float:
        """The third criterion's value (Buchholz or Sonneborn-Berger, per the format)."""
        return self.buchholz if self.swiss else self.sonneborn_berger

    swiss: bool = False  # Buchholz (Swiss) or Sonneborn-Berger third

    def key(self) -> tuple[float, ...]:
        return (-self.points, -self.difference, -self.tiebreak, -self.scored)


def standings(field_: Sequence[int], pairs: Iterable[PairScore], format: str,
              byes: Mapping[int, int] | None = None,
              withdrawn: Iterable[int] = ()) -> list[Row]:
    """The standings of the bots of `field_` (in seed order) from `pairs`; `byes`: Swiss byes
    per bot; `withdrawn`: bots withdrawn (still listed, with what they scored)."""
    rows = {bot: Row(bot, seed, swiss=format == SWISS) for seed, bot in enumerate(field_)}
    out_of_event = set(withdrawn)
    decided = [p for p in pairs if p.decided]
    for p in decided:
        for bot in (p.a, p.b):
            row = rows[bot]
            points, _, scored, conceded = p.of(bot)
            row.points += points
            row.scored += scored
            row.conceded += conceded
            row.pairs += 1
            row.opponents.append(p.opponent(bot))
            if p.forfeited_by(bot):
                row.forfeits += 1
            row.won += points == 2
            row.split += points == 1
            row.lost += points == 0
    for bot, count in (byes or {}).items():
        rows[bot].byes = count
        rows[bot].points += BYE_POINTS * count
    for p in decided:
        for bot in (p.a, p.b):
            points = p.of(bot)[0]
            other = rows[p.opponent(bot)].points
            rows[bot].buchholz += other
            rows[bot].sonneborn_berger += other * points / 2
    for bot in out_of_event:
        rows[bot].withdrawn = True
    table = sorted(rows.values(), key=lambda r: (*r.key(), r.seed))
    for i, row in enumerate(table):
        same = i > 0 and table[i - 1].key() == row.key()
        row.rank = table[i - 1].rank if same else i + 1
    return table


def crosstable(order: Sequence[int], pairs: Iterable[PairScore]
               ) -> dict[tuple[int, int], list[PairScore]]:
    """The pairs between each two bots of `order`, both ways round: `(x, y)` holds the pairs
    x played against y, in round order (a double round-robin has two)."""
    wanted = set(order)
    table: dict[tuple[int, int], list[PairScore]] = {}
    for p in sorted(pairs, key=lambda p: (p.round or 0, p.board)):
        if p.a in wanted and p.b in wanted:
            table.setdefault((p.a, p.b), []).append(p)
            table.setdefault((p.b, p.a), []).append(p)
    return table
