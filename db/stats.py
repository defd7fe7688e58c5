"""Statistics for batch simulations, written here in a few lines (no scipy); pure functions
of the totals that `db.batch` stores (shared by the workers and the dashboard).

Every figure is computed from the per-pair sums that the chunks store, so the totals never depend
on the order in which chunks finish. The statistical unit is the duplicate pair (one deal played
twice with the seats swapped): the two plays of a pair are correlated, so the variance is taken
over pairs.

- mean with a 95% confidence interval: normal approximation, mean ± 1.96 · sd / √n;
- Elo-style difference: from the score fraction s (a hand won counts 1, lost 0),
  elo = -400 · log10(1/s - 1), its interval from the interval of s;
- SPRT: the generalised SPRT with the normal approximation on the pair scores (as chess engine
  testing uses), H0: elo = elo0 against H1: elo = elo1, bounds from alpha and beta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054


@dataclass
class Totals:
    """Integer sums over finished pairs (exact); adding two Totals gives the Totals of both.

    A pair's score fraction for A is wins/2 (wins = hands A won of the two), so the sums of the
    score and its square are `wins_a / 2` and `wins_sq / 4`.
    """

    pairs: int = 0
    net: int = 0  # sum over pairs of A's net game points (A's minus B's, both plays)
    net_sq: int = 0
    wins_a: int = 0  # hands A won
    wins_sq: int = 0  # sum over pairs of (hands A won in the pair) squared
    points_a: int = 0  # game points A won
    points_b: int = 0

    @property
    def wins_b(self) -> int:
        return 2 * self.pairs - self.wins_a

    @property
    def score(self) -> float:
        return self.wins_a / 2

    @property
    def score_sq(self) -> float:
        return self.wins_sq / 4

    def add_pair(self, net: int, wins_a: int, points_a: int, points_b: int) -> None:
        self.pairs += 1
        self.net += net
        self.net_sq += net * net
        self.wins_a += wins_a
        self.wins_sq += wins_a * wins_a
        self.points_a += points_a
        self.points_b += points_b

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))

    def __add__(self, other: Totals) -> Totals:
        return Totals(**{k: v + getattr(other, k) for k, v in vars(self).items()})


def mean_ci(total: float, total_sq: float, n: int) -> tuple[float, float, float]:
    """Mean and 95% confidence interval (low, high) from a sum and a sum of squares."""
    if n == 0:
        return 0.0, -math.inf, math.inf
    mean = total / n
    if n < 2:
        return mean, -math.inf, math.inf
    var = max(0.0, (total_sq - n * mean * mean) / (n - 1))
    half = Z95 * math.sqrt(var / n)
    return mean, mean - half, mean + half


def elo(score: float) -> float:
    """Elo difference for a score fraction (clamped away from 0 and 1)."""
    s = min(max(score, 1e-6), 1 - 1e-6)
    return -400.0 * math.log10(1 / s - 1)


def elo_score(diff: float) -> float:
    """Expected score fraction for an Elo difference."""
    return 1 / (1 + 10 ** (-diff / 400))


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test on A's pair scores."""

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, t: Totals) -> float:
        """Log-likelihood ratio of H1 over H0 (normal approximation)."""
        if t.pairs < 2:
            return 0.0
        mean = t.score / t.pairs
        var = (t.score_sq / t.pairs) - mean * mean
        if var <= 0:
            return 0.0
        s0, s1 = elo_score(self.elo0), elo_score(self.elo1)
        return t.pairs * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)

    def decide(self, t: Totals) -> str | None:
        """'H1' (A is stronger by elo1), 'H0' (not), or None while undecided."""
        llr = self.llr(t)
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


def summary(t: Totals, sprt: Sprt | None = None) -> dict:
    """The result table of a simulation, as plain numbers (JSON-ready)."""
    hands = 2 * t.pairs
    net, net_lo, net_hi = mean_ci(t.net / 2, t.net_sq / 4, t.pairs)
    score, score_lo, score_hi = mean_ci(t.score, t.score_sq, t.pairs)
    out = {
        "pairs": t.pairs,
        "hands": hands,
        "points_per_deal_a": t.points_a / hands if hands else 0.0,
        "points_per_deal_b": t.points_b / hands if hands else 0.0,
        "net_per_deal": net,
        "net_per_deal_ci": [net_lo, net_hi],
        "win_rate_a": t.wins_a / hands if hands else 0.0,
        "win_rate_b": t.wins_b / hands if hands else 0.0,
        "score": score,
        "elo": elo(score) if hands else 0.0,
        "elo_ci": [elo(score_lo), elo(score_hi)] if hands else [None, None],
    }
    if sprt is not None:
        out["sprt"] = {
            "elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
            "llr": sprt.llr(t), "lower": sprt.lower, "upper": sprt.upper,
            "decision": sprt.decide(t),
        }
    return _finite(out)


def _finite(value):
    """Infinities (an interval from fewer than two pairs) become None, for JSON."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
