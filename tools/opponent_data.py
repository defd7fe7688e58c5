"""Self-play records of a house bot's open-stock decisions: the data `tools/opponent_fit.py`
fits the champion's opponent model (`bots/opponent.py`) from.

Each line of the output (JSON) is one decision of either seat while the stock is open and more
than one action is legal, as the deciding seat saw it: its hand, the trump suit, the card led
(if it answers), the trick number, its points, and the action it chose among the legal ones.

Run: `.venv/bin/python tools/opponent_data.py -n 5000 --ms 50 --procs 2 -o /tmp/opponent.jsonl`
(docs/house-bots.md)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots import Bot, make_bot  # noqa: E402
from bots.batch import deck_for, play_hand  # noqa: E402
from engine import Observation, Profile  # noqa: E402
from engine.cards import SUITS  # noqa: E402


def record_of(obs: Observation, action: object) -> dict:
    """One decision as `tools/opponent_fit.py` reads it."""
    return {"hand": [c.index for c in obs.hand], "trump": SUITS.index(obs.trump_suit),
            "lead": -1 if obs.lead_card is None else obs.lead_card.index,
            "t": len(obs.tricks), "points": obs.points + obs.pending_points,
            "legal": [str(a) for a in obs.legal_actions], "chosen": str(action)}


class Recording(Bot):
    """Wraps a bot and keeps a record of each of its open-stock decisions."""

    def __init__(self, bot: Bot, into: list[dict]) -> None:
        self.bot = bot
        self.into = into

    def choose(self, observation, rng, deadline=None):  # type: ignore[no-untyped-def]
        action = self.bot.choose(observation, rng, deadline)
        if (observation.closed_by is None and observation.stock_size
                and len(observation.legal_actions) > 1):
            self.into.append(record_of(observation, action))
        return action


def play_some(job: tuple[str, int, list[int], float]) -> tuple[int, list[dict]]:
    """Play the given deals; (hands played, their records)."""
    strategy, seed, deals, ms = job
    records: list[dict] = []
    bots = (Recording(make_bot(strategy, ms=ms, clock="cpu"), records),
            Recording(make_bot(strategy, ms=ms, clock="cpu"), records))
    for deal in deals:
        rngs = (random.Random(f"opp:{seed}:{deal}:0"), random.Random(f"opp:{seed}:{deal}:1"))
        play_hand(deck_for(seed, deal), deal % 2, Profile.SOFT, bots, rngs)
    return len(deals), records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--hands", type=int, default=1500)
    parser.add_argument("--strategy", default="champion-v1")
    parser.add_argument("--ms", type=float, default=50.0, help="CPU ms per move")
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7001)
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args()
    jobs = [(args.strategy, args.seed, list(range(i, min(i + 10, args.hands))), args.ms)
            for i in range(0, args.hands, 10)]
    start = time.monotonic()
    hands = count = 0
    with open(args.out, "w") as out, multiprocessing.Pool(args.procs) as pool:
        for played, records in pool.imap_unordered(play_some, jobs):
            for r in records:
                out.write(json.dumps(r) + "\n")
            out.flush()
            hands += played
            count += len(records)
            print(f"{hands} hands, {count} decisions, {time.monotonic() - start:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
