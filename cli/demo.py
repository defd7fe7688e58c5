"""`bummerl demo`: two house bots play a Bummerl in the terminal, trick by trick."""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from engine import Action, ActionKind, Card, Match

SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
REASONS = {
    "claim": "claimed 66",
    "false_claim": "won on the opponent's false claim",
    "closer_claim": "closed the stock and claimed 66",
    "closer_failed": "won: the closer failed",
    "last_trick": "took the last trick (nobody reached 66)",
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="watch two house bots play a Bummerl in the terminal",
        description="Two house bots (engine only, no service) play one match, shown trick by "
                    "trick.")
    parser.add_argument("--bots", nargs=2, default=["bully", "rdeep"], metavar=("SEAT0", "SEAT1"),
                        help="house strategies for seats 0 and 1 (random, bully, rdeep, champion)")
    parser.add_argument("--seed", default=None, help="match seed (default: random)")
    parser.add_argument("--profile", default="soft", choices=["soft", "sharp"])
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to pause per trick")
    parser.set_defaults(func=run)


def card_text(card: Card | None) -> str:
    return "" if card is None else f"{card.rank.value}{SYMBOLS[card.suit.value]}"


def describe(action: Action) -> str:
    if action.kind is ActionKind.PLAY:
        return card_text(action.card)
    if action.kind is ActionKind.DECLARE:
        return f"declares the marriage in {SYMBOLS[str(action.suit)]}"
    return {"exchange": "exchanges the trump jack", "close": "closes the stock",
            "claim": "claims 66"}[action.kind.value]


def run(args: argparse.Namespace) -> int:
    from bots import make_bot

    seed = args.seed if args.seed is not None else random.randrange(10**9)
    bots = [make_bot(name) for name in args.bots]
    names = [f"seat {s} ({args.bots[s]})" for s in (0, 1)]
    rng = random.Random(f"demo:{seed}")
    match = Match(seed=seed, profile=args.profile)
    print(f"Bummerl, {args.profile} profile, seed {seed}: {names[0]} vs {names[1]}")
    while not match.is_over:
        hand = match.hand
        print(f"\nHand {match.hand_number + 1}: {names[hand.dealer]} deals; trump card "
              f"{card_text(hand.trump_card)}; counters {match.counters[0]}:{match.counters[1]}")
        for seat in (0, 1):
            print(f"  {names[seat]} holds " + " ".join(card_text(c) for c in hand.holding(seat)))
        line: list[str] = []
        while hand.to_act is not None:
            seat = hand.to_act
            action = bots[seat].choose(match.observe(seat), rng)
            was_lead = hand.lead_card is None
            match.apply(seat, action)
            if action.kind is ActionKind.PLAY and was_lead:
                line = [f"  {names[seat]} leads {describe(action)}"]
            elif action.kind is ActionKind.PLAY:
                last = hand.tricks[-1]
                print(f"{line[0]}, {names[seat]} answers {describe(action)} -> "
                      f"{names[last.winner]} takes it")
                time.sleep(args.delay)
            else:
                print(f"  {names[seat]} {describe(action)}")
        result = hand.result
        assert result is not None
        print(f"  => {names[result.winner]} {REASONS[result.reason.value]}: "
              f"+{result.game_points} (points {result.points[0]}:{result.points[1]}, "
              f"tricks {result.tricks[0]}:{result.tricks[1]})")
    assert match.winner is not None
    schneider = " (Schneider!)" if match.schneider else ""
    print(f"\n{names[match.winner]} wins the Bummerl {match.counters[0]}:{match.counters[1]}"
          f"{schneider}")
    return 0
