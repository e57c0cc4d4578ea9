"""Order-statistic confidence intervals: the median of runs, a quantile within one run.

Both are distribution-free: the number of observations below the true q-quantile is
Binomial(n, q), so the interval between two order statistics covers it with a probability
that the binomial distribution gives exactly (Conover, *Practical Nonparametric Statistics*,
3rd ed., 1999, section 3.2; benchstat's ``QuantileCI`` in aclements/go-moremath).

The intervals here are equal-tailed: each side misses with probability at most (1 - c) / 2.
When n is too small for that, the bound is infinite and a warning says how many are needed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np
from scipy import stats as sps

from perfkit.histogram import LAYOUT, LatencyHistogram, check_percentile

INDEPENDENCE_LABEL = "assumes independent requests"


@dataclasses.dataclass(frozen=True)
class MedianCI:
    """A median with its order-statistic interval (unpacks as ``est, low, high, warnings``)."""

    estimate: float
    low: float
    high: float
    warnings: tuple[str, ...]
    n: int
    confidence: float
    #: the coverage the chosen order statistics really have (>= ``confidence`` when finite)
    achieved_confidence: float

    def __iter__(self) -> Iterator:
        return iter((self.estimate, self.low, self.high, self.warnings))


@dataclasses.dataclass(frozen=True)
class QuantileCI:
    """A percentile of one run's histogram with its binomial interval, in milliseconds."""

    q: float
    estimate_ms: float
    low_ms: float
    high_ms: float
    n_requests: int
    confidence: float
    achieved_confidence: float
    label: str
    warnings: tuple[str, ...]


@lru_cache(maxsize=1024)
def order_statistic_bounds(n: int, p: float, confidence: float) -> tuple[int, int, float]:
    """1-based order statistics ``(lo, hi)`` of an equal-tailed interval for the p-quantile.

    ``lo`` is the largest order with P(X_(lo) > Q_p) = P(B <= lo - 1) <= a/2 and ``hi`` the
    smallest with P(X_(hi) < Q_p) = P(B >= hi) <= a/2, where B ~ Binomial(n, p) and
    a = 1 - confidence. ``lo == 0`` or ``hi == n + 1`` mean that side is unbounded. The third
    value is the achieved coverage 1 - P(B <= lo - 1) - P(B >= hi).
    """
    _check_confidence(confidence)
    if n <= 0:
        return 0, n + 1, 1.0
    tail = (1.0 - confidence) / 2.0
    dist = sps.binom(n, p)
    # largest j = lo - 1 with cdf(j) <= tail (ppf gives the smallest j with cdf(j) >= tail)
    j = int(dist.ppf(tail))
    while j >= 0 and dist.cdf(j) > tail:
        j -= 1
    while j + 1 <= n and dist.cdf(j + 1) <= tail:
        j += 1
    lo = j + 1
    # smallest hi with sf(hi - 1) = P(B >= hi) <= tail
    k = int(dist.ppf(1.0 - tail))
    while k - 1 >= -1 and dist.sf(k - 1) <= tail:
        k -= 1
    while dist.sf(k) > tail:
        k += 1
    hi = k + 1
    miss_low = float(dist.cdf(lo - 1)) if lo >= 1 else 0.0
    miss_high = float(dist.sf(hi - 1)) if hi <= n else 0.0
    return lo, min(hi, n + 1), 1.0 - miss_low - miss_high


def min_n_for_finite_ci(p: float, confidence: float = 0.95) -> int:
    """Smallest n for which the equal-tailed interval of the p-quantile is finite on both sides.

    Both extreme order statistics must miss with probability <= (1 - confidence) / 2:
    ``max(p, 1 - p) ** n <= (1 - confidence) / 2``.
    """
    _check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    worst = max(p, 1.0 - p)
    n = max(1, math.ceil(math.log(tail) / math.log(worst)))
    # guard against rounding right at the boundary
    while worst ** n > tail:
        n += 1
    while n > 1 and worst ** (n - 1) <= tail:
        n -= 1
    return n


def median_ci(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> MedianCI:
    """Median of per-run values with a distribution-free order-statistic interval.

    Parameters
    ----------
    values : array-like of float
        One value per run, in any unit. ``+inf`` is allowed (e.g. a failed latency run ranked
        worse than any finished one); NaN is refused: say what a failed run means first.
    confidence : float
        Nominal coverage in (0, 1).

    Returns
    -------
    MedianCI
        ``low``/``high`` are order statistics; they are -inf/+inf when n is too small for an
        equal-tailed interval (n < 6 at 95%), with a warning naming the runs needed.

    Notes
    -----
    Conover (1999), section 3.2; the same interval benchstat prints for its medians.
    """
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if np.isnan(x).any():
        raise ValueError("values contain NaN: rank failed runs (+inf) or exclude them explicitly")
    n = len(x)
    if n == 0:
        return MedianCI(math.nan, -math.inf, math.inf, ("no runs",), 0, confidence, 1.0)
    lo, hi, achieved = order_statistic_bounds(n, 0.5, confidence)
    low = float(x[lo - 1]) if lo >= 1 else -math.inf
    high = float(x[hi - 1]) if hi <= n else math.inf
    mid = n // 2
    estimate = float(x[mid]) if n % 2 else _midpoint(x[mid - 1], x[mid])
    warnings: tuple[str, ...] = ()
    if math.isinf(low) or math.isinf(high):
        need = min_n_for_finite_ci(0.5, confidence)
        warnings = (f"need >= {need} runs for a {_pct(confidence)} median CI",)
    return MedianCI(estimate, low, high, warnings, n, confidence, achieved)


def quantile_ci(hist: LatencyHistogram, q: float, confidence: float = 0.95) -> QuantileCI:
    """Binomial order-statistic interval for percentile ``q`` of one run's histogram.

    Parameters
    ----------
    hist : LatencyHistogram
        One run's latencies (microseconds inside; results are in milliseconds).
    q : float
        Percentile in (1, 100]; 0.99 raises (it is not p99).
    confidence : float
        Nominal coverage; each tail misses with probability <= (1 - confidence) / 2.

    Returns
    -------
    QuantileCI
        ``label`` says "assumes independent requests": requests inside a run are
        autocorrelated, so this is a within-run precision, never a claim about other runs.
        The lower bound is the lowest value of its HDR bucket and the upper bound the highest
        (the estimate is hdrh's highest-equivalent value), so bucketing only widens it.
        Infinite sides (low 0, high inf) come with a warning naming the requests needed
        (p99: 368, p99.9: 3688 at 95%).

    Notes
    -----
    Conover (1999), section 3.2; Hahn and Meeker, *Statistical Intervals* (1991), ch. 5.
    """
    qf = check_percentile(q)
    p = qf / 100.0
    n = hist.total_count
    warnings: list[str] = []
    if n == 0:
        return QuantileCI(qf, math.nan, 0.0, math.inf, 0, confidence, 1.0, INDEPENDENCE_LABEL,
                          ("empty histogram",))
    lo, hi, achieved = order_statistic_bounds(n, p, confidence)
    cum = np.cumsum(hist.counts)
    ranks = np.array([max(lo, 1), min(hi, n)])
    idx = np.searchsorted(cum, ranks, side="left")
    low_ms = float(LAYOUT.lowest[idx[0]]) / 1000.0 if lo >= 1 else 0.0
    high_ms = float(LAYOUT.highest[idx[1]]) / 1000.0 if hi <= n else math.inf
    if lo < 1 or hi > n:
        need = min_n_for_finite_ci(p, confidence)
        warnings.append(f"{n} requests are too few for a finite {_pct(confidence)} CI of "
                        f"p{qf:g}: need >= {need}")
    return QuantileCI(qf, hist.percentile_ms(qf), low_ms, high_ms, n, confidence, achieved,
                      INDEPENDENCE_LABEL, tuple(warnings))


def _midpoint(a: float, b: float) -> float:
    if a == b:  # also inf == inf
        return float(a)
    return float((a + b) / 2.0)


def _pct(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), e.g. 0.95; got {confidence!r}")
