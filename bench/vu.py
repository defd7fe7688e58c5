"""Benchmark: a bummerl house bot against the VU course's RdeepBot inside the VU engine
(`schnapsen==0.0.5`, https://github.com/intelligent-systems-course/schnapsen).

The VU package is not a dependency of bummerl: install it in a venv of its own and run this file
with that venv's Python (bummerl's engine and bots are pure Python and are imported from this
checkout):

    python3 -m venv /tmp/vu-venv && /tmp/vu-venv/bin/pip install schnapsen==0.0.5
    nice -n 19 /tmp/vu-venv/bin/python bench/vu.py -n 200 --ms 100 --clock cpu --procs 2

The adapter (`BummerlInVu`) turns the VU bot's `PlayerPerspective` into a bummerl `Observation`
of seat 0: the tricks, marriages and trump exchanges of the VU game history (with the seat that
led each), the own hand, the sizes, the trump card (the one last seen once the talon is gone),
the current lead; the hidden cards are placed by any consistent assumption (VU's
`make_assumption`) only to build the position, and `engine.observe` keeps nothing of them. The
bummerl bot then chooses among the bummerl actions that are VU moves (the VU rules have no
closing and no claims: a seat with 66 wins at once), and its action is played as the VU move:
a card, a trump exchange, or a marriage (VU declares and leads the king in one move). Its search
still assumes bummerl's rules (closing and claims possible) for the rest of the hand.

Each game is a fresh VU game from seed `seed + i`; games alternate which bot leads first. It
prints the games won and the game points with 95 % intervals: a `progress` line about every
`--every` games, then the `RESULT` line.

`--see-all` gives the champion's search the true deal (read from the VU game's own state)
instead of deals drawn from what its seat knows: it then plays as if it saw every card. That is
not a fair player but a bound: what this search could win if it knew everything, so the gap to
the fair champion is what the hidden cards cost it, and the rest is the search's own.
`--see-hand` gives it the opponent's true hand but not the stock's order (bench/seeing.py): the
most that inferring the opponent's hand from its play could give this search.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seeing import SIGHTS, add_sight_options, give_sight  # noqa: E402

from engine import Action, ActionKind, Card, Hand, Profile, Suit, observe  # noqa: E402
from engine.record import Exchange, Marriage, Trick  # noqa: E402

RANKS = {"ACE": "A", "TEN": "T", "KING": "K", "QUEEN": "Q", "JACK": "J"}
SUITS = {"HEARTS": "H", "CLUBS": "C", "SPADES": "S", "DIAMONDS": "D"}


def card(vu_card: Any) -> Card:
    """The bummerl card of a VU card."""
    return Card.from_text(RANKS[vu_card.rank.name] + SUITS[vu_card.suit.name])


def hand_of(perspective: Any, leader_move: Any, rng: random.Random, true: bool = False) -> Hand:
    """The VU position `perspective` (seat 0 to act) as a bummerl hand: the hidden cards placed
    by VU's `make_assumption`, or with `true` where they really are (the VU game's own state:
    only for `--see-all`)."""
    history = perspective.get_game_history()
    me, other = 0, 1
    first_leader = me if history[0][0].am_i_leader() else other
    dealer = 1 - first_leader  # bummerl: the dealer's opponent leads the first trick
    tricks: list[Trick] = []
    marriages: list[Marriage] = []
    exchanges: list[Exchange] = []
    trump_card = None
    for i, (persp, trick) in enumerate(history):
        if persp.get_trump_card() is not None:
            trump_card = card(persp.get_trump_card())
        if trick is None:
            continue
        leader = me if persp.am_i_leader() else other
        if trick.is_trump_exchange():
            exchanges.append(Exchange(leader, card(trick.trump_card)))
            continue
        lead_move = trick.leader_move
        if lead_move.is_marriage():
            marriages.append(Marriage(leader, Suit(SUITS[lead_move.suit.name]), len(tricks)))
            lead_move = lead_move.underlying_regular_move()
        nxt = history[i + 1][0]
        winner = me if nxt.am_i_leader() else other
        tricks.append(Trick(leader, card(lead_move.card), card(trick.follower_move.card), winner))
    assert trump_card is not None
    leader = me if perspective.am_i_leader() else other
    lead_card = None
    state = (perspective._PlayerPerspective__game_state if true
             else perspective.make_assumption(leader_move=leader_move, rand=rng))
    mine = [card(c) for c in perspective.get_hand().get_cards()]
    theirs = [card(c) for c in (state.follower.hand if leader == me
                                else state.leader.hand).get_cards()]
    if leader_move is not None:
        if leader_move.is_marriage():
            marriages.append(Marriage(other, card(leader_move.king_card).suit, len(tricks)))
            leader_move = leader_move.underlying_regular_move()
        lead_card = card(leader_move.card)
        theirs.remove(lead_card)
    talon = [card(c) for c in state.talon.get_cards()]
    stock = [c for c in talon if c is not trump_card] + ([trump_card] if talon else [])
    return Hand.from_position(Profile.SOFT, dealer, (mine, theirs), stock, trump_card, leader, me,
                              lead_card, tricks, marriages, exchanges, None, None)


def vu_move(action: Action, perspective: Any) -> Any | None:
    """The VU move of a bummerl action, if it is one of the VU position's valid moves."""
    for move in perspective.valid_moves():
        if action.kind is ActionKind.PLAY and move.is_regular_move() \
                and card(move.card) is action.card:
            return move
        if action.kind is ActionKind.EXCHANGE and move.is_trump_exchange():
            return move
        if action.kind is ActionKind.DECLARE and move.is_marriage() \
                and SUITS[move.suit.name] == action.suit.value:  # type: ignore[union-attr]
            return move
    return None


def make_adapter(bot: Any, seed: int, see: str = "") -> Any:
    """`bot` as a VU bot; `see` ("all" or "hand", bench/seeing.py): its search is given the
    true deal, or the opponent's true hand."""
    from schnapsen.game import Bot as VuBot

    class BummerlInVu(VuBot):
        """A bummerl bot playing in the VU engine through the adapter."""

        def __init__(self) -> None:
            super().__init__("bummerl")
            self.rng = random.Random(seed)
            self.unmapped = 0  # decisions where no bummerl action was a VU move

        def get_move(self, perspective: Any, leader_move: Any) -> Any:
            hand = hand_of(perspective, leader_move, self.rng, true=bool(see))
            obs = observe(hand, 0)  # the same whichever deal it is built from
            if see:  # the search is given the true deal (or hand) every time: a bound
                give_sight(bot, lambda: hand, see)
            legal = tuple(a for a in obs.legal_actions if vu_move(a, perspective) is not None)
            if not legal:
                self.unmapped += 1
                return self.rng.choice(perspective.valid_moves())
            move = vu_move(bot.choose(obs._replace(legal_actions=legal), self.rng), perspective)
            assert move is not None
            return move

    return BummerlInVu()


def play_games(job: tuple[str, dict, list[int], int, int, str]) -> list[tuple[int, int, int]]:
    """Play the given games; per game (won, game points signed for bummerl, unmapped)."""
    from schnapsen.bots import RdeepBot
    from schnapsen.game import SchnapsenGamePlayEngine

    from bots import make_bot

    strategy, options, games, samples, depth, see = job
    engine = SchnapsenGamePlayEngine()
    out = []
    for g in games:
        ours = make_adapter(make_bot(strategy, **options), g, see)
        rdeep = RdeepBot(num_samples=samples, depth=depth, rand=random.Random(10**6 + g))
        first, second = (ours, rdeep) if g % 2 == 0 else (rdeep, ours)
        winner, points, _ = engine.play_game(first, second, random.Random(g))
        won = winner is ours
        out.append((int(won), points if won else -points, ours.unmapped))
    return out


def interval(values: list[float]) -> tuple[float, float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / max(n - 1, 1)
    half = 1.96 * math.sqrt(var / n)
    return mean, mean - half, mean + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--games", type=int, default=200)
    parser.add_argument("--strategy", default="champion", help="the bummerl house strategy")
    parser.add_argument("--ms", type=float, default=100.0, help="champion's budget per move")
    parser.add_argument("--clock", default="cpu", choices=["wall", "cpu"])
    parser.add_argument("--objective", default="points", choices=["points", "wins"],
                        help="what the champion maximizes: game points or hands won")
    parser.add_argument("--samples", type=int, default=16, help="VU RdeepBot num_samples")
    parser.add_argument("--depth", type=int, default=4, help="VU RdeepBot depth")
    parser.add_argument("--seed", type=int, default=0, help="first game's seed")
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--every", type=int, default=50,
                        help="games between progress lines")
    parser.add_argument("--search", default="pimc", choices=["pimc", "presumed"],
                        help="how the champion values a deal (ChampionBot's search)")
    add_sight_options(parser)
    args = parser.parse_args()
    if args.see and not args.strategy.startswith("champion"):
        parser.error(f"--see-{args.see} needs a champion strategy (its search draws the deals)")
    options: dict = {}
    if args.strategy.startswith("champion"):
        options = {"ms": args.ms, "clock": args.clock}
        if args.objective != "points":
            options["objective"] = args.objective
        if args.search != "pimc":
            options["search"] = args.search
    games = list(range(args.seed, args.seed + args.games))
    step = 5
    jobs = [(args.strategy, options, games[i:i + step], args.samples, args.depth, args.see)
            for i in range(0, len(games), step)]
    seeing = f" {SIGHTS[args.see]}" if args.see else ""
    print(f"{args.strategy} {options}{seeing} vs VU RdeepBot(num_samples={args.samples}, depth="
          f"{args.depth}) in the VU engine, {args.games} games from seed {args.seed}", flush=True)
    start = time.monotonic()
    end = None if args.minutes is None else start + 60 * args.minutes
    results: list[tuple[int, int, int]] = []
    shown = 0  # games when the last progress line was printed
    with multiprocessing.Pool(args.procs) as pool:
        for part in pool.imap(play_games, jobs):
            results += part
            if len(results) >= shown + args.every and len(results) < len(games):
                report(results, start, final=False)
                shown = len(results)
            if end is not None and time.monotonic() > end:
                pool.terminate()
                break
    report(results, start, final=True)


def report(results: list[tuple[int, int, int]], start: float, final: bool) -> None:
    """The games won and the game points so far, with 95 % intervals: a `RESULT` line at the
    end, a `progress` line before."""
    won = interval([float(w) for w, _, _ in results])
    points = interval([float(p) for _, p, _ in results])
    print(f"{'RESULT' if final else 'progress'} {len(results)} games: won {won[0]:.1%} "
          f"(95% [{won[1]:.1%}, {won[2]:.1%}]); "
          f"game points per game {points[0]:+.3f} (95% [{points[1]:+.3f}, {points[2]:+.3f}]); "
          f"decisions with no mapped action {sum(u for _, _, u in results)}; "
          f"{time.monotonic() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
