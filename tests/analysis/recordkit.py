"""Match records of matches played in-process by house bots (no server), for the analysis's
tests and bench/analysis.py."""

from __future__ import annotations

import random
import time
from typing import Any

from bots import make_bot
from engine import Match
from engine.matchrecord import RECORD_VERSION, hand_deal


def play_record(seed: int, bots: tuple[str, str] = ("bully", "rdeep"), match_id: int = 1,
                **options: Any) -> tuple[dict[str, Any], float]:
    """A finished match of two house bots as a match record, and the seconds it took."""
    players = [make_bot(name, **options.get(name, {})) for name in bots]
    rng = random.Random(seed)
    match = Match(seed)
    hands: list[dict[str, Any]] = []
    seq = 0
    start = time.perf_counter()
    while not match.is_over:
        if not hands or len(hands) == len(match.results):
            number = match.hand_number
            hands.append({"number": number, "dealer": match.dealer,
                          **hand_deal(seed, number, match.dealer), "actions": [],
                          "refusals": [], "result": None})
        seat = match.to_act
        assert seat is not None
        action = players[seat].choose(match.observe(seat), rng)
        hands[-1]["actions"].append({"seq": seq, "seat": seat, **action.to_dict(),
                                     "think_ms": None})
        result = match.apply(seat, action)
        if result is not None:
            hands[-1]["result"] = result.to_dict()
        seq += 1
    took = time.perf_counter() - start
    record = {
        "record_version": RECORD_VERSION, "match_id": match_id, "profile": "soft",
        "seed": seed, "first_dealer": match.first_dealer, "origin": "manual", "rated": False,
        "time_control": {"move_ms": 5000, "bank_ms": 30000, "max_illegal": 3},
        "bots": [{"bot_id": i + 1, "name": f"house-{n}", "kind": "house", "strategy": n,
                  "version": None} for i, n in enumerate(bots)],
        "created_at": "2026-12-03T10:00:00Z", "finished_at": "2026-12-03T10:01:00Z",
        "hands": hands,
        "result": {"winner": match.winner, "counters": list(match.counters),
                   "schneider": match.schneider, "end_reason": "played",
                   "end_detail": None, "forfeit_seat": None, "illegal": [0, 0],
                   "bank_left_ms": [30000, 30000]},
    }
    return record, took
