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
  testing uses), H0: elo = elo0 against H1: elo = elo1, bounds from alpha and beta;
- the paired model of version tests (`PairOutcomes`, `paired_llr`, `paired_decision`, ...):
  duplicate pairs of Bummerls, each pair 0, 1 or 2 match points for the candidate — a
  trinomial, the pentanomial of chess testing for a game without draws (see below and
  docs/versions.md).
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


# --- Paired model: duplicate pairs of Bummerls (version tests) ---------------------------------
#
# A version test plays a candidate against a baseline in duplicate pairs of Bummerls: the same
# deck seeds twice with the seats swapped. A Bummerl has no draw, so a pair ends in one of three
# outcomes for the candidate: lost both (0 match points), split (1) or won both (2). The pair is
# the statistical unit (its two Bummerls share their deals and are correlated), so the model is a
# trinomial over pairs: the counterpart, for a game without draws, of the pentanomial model that
# chess engine testing (fishtest) uses for game pairs, whose five outcomes 0, ½, 1, 1½, 2 come
# from draws being possible in each game. The test is the same generalised SPRT with the normal
# approximation as `Sprt`, on the pair score x = points / 2 in {0, ½, 1}, whose variance is the
# empirical variance of the pairs (not the variance an unpaired binomial model would assume:
# pairing lowers it, which is what makes the test shorter).


@dataclass
class PairOutcomes:
    """Counts of the candidate's duplicate pairs by outcome (exact; adding two adds the counts)."""

    lost_both: int = 0
    split: int = 0
    won_both: int = 0

    @property
    def pairs(self) -> int:
        return self.lost_both + self.split + self.won_both

    @property
    def points(self) -> int:
        """Match points the candidate won (0, 1 or 2 a pair)."""
        return self.split + 2 * self.won_both

    @property
    def score(self) -> float:
        """The candidate's fraction of the match points, 0..1 (½ with no pairs)."""
        return self.points / (2 * self.pairs) if self.pairs else 0.5

    def add(self, points: int) -> None:
        """Count one pair in which the candidate won `points` Bummerls (0, 1 or 2)."""
        if points == 0:
            self.lost_both += 1
        elif points == 1:
            self.split += 1
        elif points == 2:
            self.won_both += 1
        else:
            raise ValueError(f"a duplicate pair gives 0, 1 or 2 match points, not {points!r}")

    def as_list(self) -> list[int]:
        """[lost_both, split, won_both]."""
        return [self.lost_both, self.split, self.won_both]

    def __add__(self, other: PairOutcomes) -> PairOutcomes:
        return PairOutcomes(*(a + b for a, b in zip(self.as_list(), other.as_list(), strict=True)))


# An empty outcome counts this many pseudo-pairs in the variance (not in the mean): with every
# pair alike (say ten pairs all won) the empirical variance is 0 and the LLR undefined; half a
# pair per empty cell keeps it finite and lets a run of wins decide after about ten pairs. Once
# every outcome has been seen the variance is exactly the empirical one (as in `Sprt`).
_EMPTY_CELL = 0.5


def _pair_mean_var(o: PairOutcomes) -> tuple[float, float]:
    """Mean pair score (real counts) and its variance (empty cells regularised)."""
    counts = [c if c > 0 else _EMPTY_CELL for c in o.as_list()]
    n = sum(counts)
    m = (counts[1] * 0.5 + counts[2]) / n
    var = (counts[1] * 0.25 + counts[2]) / n - m * m
    return o.score, var


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's bounds on the LLR: (lower, upper) = (log(β/(1-α)), log((1-β)/α))."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError(f"alpha and beta must lie strictly between 0 and 1, not {alpha}, {beta}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def paired_llr(o: PairOutcomes, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (elo = elo1) over H0 (elo = elo0) on the trinomial.

    Elo is that of the match score: elo_score(elo) is the candidate's expected fraction of match
    points. Normal approximation, as fishtest's pentanomial GSPRT: n·(s1-s0)·(2x̄-s0-s1)/(2σ²),
    σ² the variance of the pair score. 0 with fewer than two pairs.
    """
    if o.pairs < 2:
        return 0.0
    mean, var = _pair_mean_var(o)
    s0, s1 = elo_score(elo0), elo_score(elo1)
    return o.pairs * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def paired_decision(
    o: PairOutcomes, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05
) -> str | None:
    """'H1' (the candidate is better by elo1), 'H0' (it is not better than elo0), None yet."""
    lower, upper = sprt_bounds(alpha, beta)
    llr = paired_llr(o, elo0, elo1)
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None


def paired_score_ci(o: PairOutcomes) -> tuple[float, float, float]:
    """The candidate's score and its 95% interval over pairs, clipped to 0..1.

    No pairs: (½, 0, 1), nothing known; one pair: its score and the whole range.
    """
    if o.pairs < 2:
        return o.score, 0.0, 1.0
    mean, var = _pair_mean_var(o)
    half = Z95 * math.sqrt(var * o.pairs / (o.pairs - 1) / o.pairs)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def paired_elo_ci(o: PairOutcomes) -> tuple[float, float, float]:
    """Elo of the match score and its 95% interval (finite: scores are clamped off 0 and 1)."""
    score, lo, hi = paired_score_ci(o)
    return elo(score), elo(lo), elo(hi)


def paired_summary(o: PairOutcomes, elo0: float, elo1: float, alpha: float = 0.05,
                   beta: float = 0.05) -> dict:
    """A version test's result as plain numbers (JSON-ready): the outcome counts, score and
    Elo with their 95% intervals, and the SPRT's LLR, bounds and decision."""
    score, score_lo, score_hi = paired_score_ci(o)
    e, elo_lo, elo_hi = paired_elo_ci(o)
    lower, upper = sprt_bounds(alpha, beta)
    return _finite({
        "pairs": o.pairs, "lost_both": o.lost_both, "split": o.split, "won_both": o.won_both,
        "score": score, "score_ci": [score_lo, score_hi], "elo": e, "elo_ci": [elo_lo, elo_hi],
        "sprt": {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta,
                 "llr": paired_llr(o, elo0, elo1), "lower": lower, "upper": upper,
                 "decision": paired_decision(o, elo0, elo1, alpha, beta)},
    })
