"""The statistics of batch simulations (written in bots/stats.py, no scipy)."""

from __future__ import annotations

import math
import random

from bots.stats import Sprt, Totals, elo, elo_score, mean_ci, summary


def totals_from(pairs):
    t = Totals()
    for net, wins in pairs:
        t.add_pair(net, wins, max(net, 0), max(-net, 0))
    return t


def test_mean_ci_matches_the_textbook():
    xs = [1, 2, 3, 4, 5, 6, 7, 8]
    mean, lo, hi = mean_ci(sum(xs), sum(x * x for x in xs), len(xs))
    sd = math.sqrt(sum((x - 4.5) ** 2 for x in xs) / 7)
    assert mean == 4.5
    assert math.isclose(hi - mean, 1.959963984540054 * sd / math.sqrt(8))
    assert math.isclose(mean - lo, hi - mean)


def test_elo_round_trip_and_known_values():
    assert elo(0.5) == 0
    assert math.isclose(elo(0.75), 190.848, abs_tol=1e-3)
    for d in (-300, -50, 0, 120):
        assert math.isclose(elo(elo_score(d)), d, abs_tol=1e-9)


def test_totals_add_up_exactly():
    rng = random.Random(4)
    pairs = [(rng.randint(-6, 6), rng.randint(0, 2)) for _ in range(100)]
    assert totals_from(pairs[:37]) + totals_from(pairs[37:]) == totals_from(pairs)


def test_summary_of_an_even_match():
    t = totals_from([(1, 1), (-1, 1), (2, 2), (-2, 0)] * 50)
    s = summary(t)
    assert s["hands"] == 400 and s["win_rate_a"] == 0.5 and s["elo"] == 0
    lo, hi = s["elo_ci"]
    assert lo < 0 < hi
    assert s["net_per_deal"] == 0


def test_summary_with_too_few_pairs_has_no_interval():
    s = summary(totals_from([(2, 2)]), Sprt())
    assert s["net_per_deal_ci"] == [None, None]
    assert s["sprt"]["decision"] is None


def test_sprt_decides_for_a_clearly_stronger_and_an_equal_player():
    sprt = Sprt(elo0=0, elo1=50)
    rng = random.Random(1)

    def run(p_win: float) -> tuple[str | None, int]:
        t = Totals()
        for _ in range(20000):
            wins = (rng.random() < p_win) + (rng.random() < p_win)
            t.add_pair(0, wins, 0, 0)
            decision = sprt.decide(t)
            if decision:
                return decision, t.pairs
        return None, t.pairs

    assert run(elo_score(150))[0] == "H1"
    assert run(0.5)[0] == "H0"
    assert sprt.lower < 0 < sprt.upper
