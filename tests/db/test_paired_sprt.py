"""The paired sequential test of version tests (bots/stats.py: PairOutcomes, paired_*).

Simulated duplicate pairs with a known Elo difference: a pair is lost both, split or won both
with probabilities chosen so that the expected match score is elo_score(elo); the SPRT must
accept H1 and H0 at the rates its α and β promise.
"""

from __future__ import annotations

import math
import random

import pytest

from bots.stats import (
    PairOutcomes,
    Sprt,
    Totals,
    elo_score,
    paired_decision,
    paired_elo_ci,
    paired_llr,
    paired_score_ci,
    paired_summary,
    sprt_bounds,
)

ELO0, ELO1 = 0.0, 40.0
ALPHA = BETA = 0.05
RUNS = 400
SPLIT = 0.5  # duplicate pairs split often: the deal, not the bot, decides many Bummerls


def pair_probs(elo: float, split: float = SPLIT) -> tuple[float, float, float]:
    """(lost both, split, won both) with mean pair score elo_score(elo)."""
    s = elo_score(elo)
    won = s - split / 2  # mean = split/2 + won
    lost = 1 - split - won
    assert won >= 0 and lost >= 0
    return lost, split, won


def draw_pair(rng: random.Random, probs: tuple[float, float, float]) -> int:
    u = rng.random()
    return 0 if u < probs[0] else 1 if u < probs[0] + probs[1] else 2


def run_test(rng: random.Random, elo: float, max_pairs: int = 20000) -> tuple[str | None, int]:
    probs = pair_probs(elo)
    o = PairOutcomes()
    while o.pairs < max_pairs:
        o.add(draw_pair(rng, probs))
        decision = paired_decision(o, ELO0, ELO1, ALPHA, BETA)
        if decision:
            return decision, o.pairs
    return None, o.pairs


def tolerance(p: float, n: int) -> float:
    """Three binomial standard errors."""
    return 3 * math.sqrt(p * (1 - p) / n)


def test_error_rates_are_those_alpha_and_beta_promise():
    rng = random.Random(24)
    at_h0 = [run_test(rng, ELO0)[0] for _ in range(RUNS)]
    at_h1 = [run_test(rng, ELO1)[0] for _ in range(RUNS)]
    false_h1 = at_h0.count("H1") / RUNS
    false_h0 = at_h1.count("H0") / RUNS
    # every run ends with a decision
    assert None not in at_h0 and None not in at_h1
    # Wald's bounds promise at most α and β (overshoot makes the real rates a little lower)
    assert false_h1 <= ALPHA + tolerance(ALPHA, RUNS), false_h1
    assert false_h0 <= BETA + tolerance(BETA, RUNS), false_h0
    # ... and not far below them either: the test is not merely timid
    assert false_h1 >= ALPHA / 5 and false_h0 >= BETA / 5, (false_h1, false_h0)


def test_halfway_between_the_hypotheses_it_decides_either_way():
    rng = random.Random(7)
    runs = [run_test(rng, (ELO0 + ELO1) / 2)[0] for _ in range(200)]
    assert 0.3 < runs.count("H1") / 200 < 0.7


def test_the_same_decisions_as_the_batch_sprt_on_the_same_pairs():
    """A pair of Bummerls is, to `Sprt`, a duplicate pair whose A won `points` of two hands."""
    sprt = Sprt(elo0=ELO0, elo1=ELO1, alpha=ALPHA, beta=BETA)
    rng = random.Random(11)
    compared = 0
    for elo in (ELO0, ELO1, 20.0, -30.0, 80.0):
        probs = pair_probs(elo)
        for _ in range(20):
            o, t = PairOutcomes(), Totals()
            for _ in range(5000):
                points = draw_pair(rng, probs)
                o.add(points)
                t.add_pair(0, points, 0, 0)
                if min(o.as_list()) > 0:  # every outcome seen: no regularisation
                    assert math.isclose(paired_llr(o, ELO0, ELO1), sprt.llr(t), abs_tol=1e-12)
                    mine = paired_decision(o, ELO0, ELO1, ALPHA, BETA)
                    assert mine == sprt.decide(t), (elo, o)
                    compared += 1
                    if mine:
                        break
    assert compared > 1000
    assert sprt_bounds(ALPHA, BETA) == (sprt.lower, sprt.upper)


def test_no_pairs_gives_finite_values_and_no_decision():
    o = PairOutcomes()
    assert o.pairs == 0 and o.score == 0.5
    assert paired_llr(o, ELO0, ELO1) == 0.0
    assert paired_decision(o, ELO0, ELO1) is None
    assert paired_score_ci(o) == (0.5, 0.0, 1.0)
    assert all(math.isfinite(x) for x in paired_elo_ci(o))


def test_all_wins_are_finite_and_soon_accept_h1():
    o = PairOutcomes()
    decided_at = None
    for _ in range(50):
        o.add(2)
        llr = paired_llr(o, ELO0, ELO1)
        assert math.isfinite(llr)
        if decided_at is None and paired_decision(o, ELO0, ELO1) == "H1":
            decided_at = o.pairs
    assert decided_at is not None and 3 <= decided_at <= 20
    score, lo, hi = paired_score_ci(o)
    assert score == 1.0 and 0.9 < lo <= hi == 1.0
    assert all(math.isfinite(x) for x in paired_elo_ci(o))
    # all losses, mirror image
    lost = PairOutcomes(lost_both=50)
    assert paired_decision(lost, ELO0, ELO1) == "H0"
    assert paired_llr(lost, ELO0, ELO1) == pytest.approx(-paired_llr(o, -ELO1, -ELO0))


def test_counts_add_and_score_ci_is_the_textbook_interval():
    o = PairOutcomes()
    for p in [0, 1, 1, 2, 2, 2, 1, 0, 1, 2]:
        o.add(p)
    assert o.as_list() == [2, 4, 4] and o.pairs == 10 and o.score == 0.6
    assert PairOutcomes(1, 2, 3) + PairOutcomes(1, 2, 1) == PairOutcomes(2, 4, 4)
    xs = [p / 2 for p in [0, 1, 1, 2, 2, 2, 1, 0, 1, 2]]
    sd = math.sqrt(sum((x - 0.6) ** 2 for x in xs) / 9)
    score, lo, hi = paired_score_ci(o)
    assert score == 0.6
    assert math.isclose(hi - score, 1.959963984540054 * sd / math.sqrt(10))
    e, elo_lo, elo_hi = paired_elo_ci(o)
    assert elo_lo < e < elo_hi and e > 0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="0, 1 or 2"):
        PairOutcomes().add(3)
    with pytest.raises(ValueError, match="alpha"):
        sprt_bounds(0.0, 0.05)


def test_summary_is_plain_numbers():
    import json

    for o in (PairOutcomes(), PairOutcomes(won_both=12), PairOutcomes(30, 60, 40)):
        s = paired_summary(o, ELO0, ELO1)
        assert json.loads(json.dumps(s, allow_nan=False)) == s
        assert s["pairs"] == o.pairs and s["sprt"]["decision"] == paired_decision(o, ELO0, ELO1)
        assert s["score_ci"][0] <= s["score"] <= s["score_ci"][1]
