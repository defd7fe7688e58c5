"""The analysis of a finished match, from its match record (docs/match-record.md): every
decision of both seats (`decision.analyse` on the seat's observation before it acted), and a
summary per seat of the game points lost, exact and estimated apart, by kind.

A mistake is a decision whose loss is above its noise: an exact loss above 0, an estimated one
above `NOISE_Z` standard errors (beyond its 95 % interval; one with no sampling noise, all
deals valued, above 0). An estimate's loss is never below 0 (its best action is the highest
mean), so without this most estimated decisions counted as mistakes, noise included.

Pure: a record dict in, a JSON-ready dict out (its form: docs/analysis.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from analysis.decision import ENUMERATE, KINDS, SAMPLES, analyse
from engine import Action, Card, Match
from engine.matchrecord import verify_record

ANALYSIS_VERSION = 2  # 2: estimated mistakes counted only beyond their noise (1: any loss)
NOISE_Z = 1.96  # an estimated loss is a mistake above this many standard errors (95 %)


def count_actions(record: dict[str, Any]) -> int:
    """The actions of a record (what a progress bar counts)."""
    return sum(len(h.get("actions", [])) for h in record.get("hands", []))


def _tally() -> dict[str, Any]:
    return {"loss": 0.0, "decisions": 0, "mistakes": 0, "by_kind": {}}


def is_mistake(decision: dict[str, Any]) -> bool:
    """Whether a decision's loss is above its noise (exact: above 0; estimated: above NOISE_Z
    standard errors)."""
    return decision["loss"] > NOISE_Z * (decision.get("loss_se") or 0.0)


def summarise(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per seat: the decisions, game points lost (every loss, summed) and mistakes (losses
    above their noise, `is_mistake`), exact and estimated apart, and the losses by kind."""
    seats = [{"exact": _tally(), "estimate": _tally()} for _ in range(2)]
    for d in decisions:
        part = seats[d["seat"]][d["method"]]
        part["decisions"] += 1
        if is_mistake(d):
            part["mistakes"] += 1
        if d["loss"] > 0:
            part["loss"] = round(part["loss"] + d["loss"], 4)
            by_kind = part["by_kind"]
            by_kind[d["kind"]] = round(by_kind.get(d["kind"], 0.0) + d["loss"], 4)
    return seats


def analyse_record(record: dict[str, Any], samples: int = SAMPLES,
                   enumerate_limit: int = ENUMERATE,
                   progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The analysis of a finished match record. ValueError naming what is wrong when the
    record is not one or does not replay (InvalidRecordError is a ValueError)."""
    check = verify_record(record)
    if not check["verified"]:
        raise ValueError(f"match {record.get('match_id')}: the record does not verify: "
                         + "; ".join(check["problems"][:3]))
    decks = [[Card.from_text(t) for t in h["deck"]] for h in record["hands"]]
    match = Match(profile=record["profile"], first_dealer=record["first_dealer"], decks=decks)
    decisions = []
    seconds = {"exact": 0.0, "estimate": 0.0}
    for number, hand in enumerate(record["hands"]):
        for entry in hand["actions"]:
            seat = entry["seat"]
            action = Action.from_dict(entry)
            start = time.perf_counter()
            found = analyse(match.observe(seat), action, samples, enumerate_limit)
            if found is not None:
                seconds[found["method"]] += time.perf_counter() - start
                decisions.append({"seq": entry["seq"], "hand": number, **found})
            match.apply(seat, action)
            if progress is not None:
                progress(1)
    return {
        "analysis_version": ANALYSIS_VERSION,
        "budget": {"samples": samples, "enumerate": enumerate_limit},
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
        "seats": summarise(decisions),
        "decisions": decisions,
    }


__all__ = ["ANALYSIS_VERSION", "KINDS", "NOISE_Z", "analyse_record", "count_actions",
           "is_mistake", "summarise"]
