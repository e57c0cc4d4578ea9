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

from perfkit.histogram import LAYOUT, LatencyHistogram, check_percentile
from perfkit.stats._dist import Binom, binom_cdf
from perfkit.warning import Code, Warn

INDEPENDENCE_LABEL = "assumes independent requests"


@dataclasses.dataclass(frozen=True)
class MedianCI:
    """A median with its order-statistic interval (unpacks as ``est, low, high, warnings``)."""

    estimate: float
    low: float
    high: float
    warnings: tuple[Warn, ...]
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
    warnings: tuple[Warn, ...]


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
    dist = Binom(n, p)
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


def _sorted_runs(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The per-run values sorted; NaN (a run not ranked) raises ValueError."""
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if np.isnan(x).any():
        raise ValueError("values contain NaN: rank failed runs (+inf) or exclude them explicitly")
    return x


def _no_runs(confidence: float) -> MedianCI:
    return MedianCI(math.nan, -math.inf, math.inf, (Warn(Code.NO_RUNS),), 0, confidence, 1.0)


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
    x = _sorted_runs(values)
    n = len(x)
    if n == 0:
        return _no_runs(confidence)
    lo, hi, achieved = order_statistic_bounds(n, 0.5, confidence)
    low = float(x[lo - 1]) if lo >= 1 else -math.inf
    high = float(x[hi - 1]) if hi <= n else math.inf
    mid = n // 2
    estimate = float(x[mid]) if n % 2 else _midpoint(x[mid - 1], x[mid])
    warnings: tuple[Warn, ...] = ()
    if math.isinf(low) or math.isinf(high):
        need = min_n_for_finite_ci(0.5, confidence)
        warnings = (Warn(Code.MEDIAN_CI_NEEDS_RUNS, need=need, confidence=confidence),)
    return MedianCI(estimate, low, high, warnings, n, confidence, achieved)


def interpolated_median_ci(values: Sequence[float] | np.ndarray, confidence: float = 0.95,
                           *, interpolate: bool = True) -> MedianCI:
    """Median of per-run values with an order-statistic interval interpolated to ``confidence``.

    Parameters
    ----------
    values : array-like of float
        One value per run; ``+inf`` ranks a run above every finite one, NaN is refused.
    confidence : float
        Nominal coverage in (0, 1).
    interpolate : bool
        False keeps the exact order statistics (coverage >= ``confidence`` whatever the
        distribution), for values known to be far from smooth (e.g. two modes).

    Returns
    -------
    MedianCI
        Distribution-free: the coverage holds for any continuous distribution of the values.
        With ``d`` the deepest order statistic whose interval ``(x_(d), x_(n-d+1))`` still has
        exact coverage ``g_d >= confidence``, the bounds interpolate between ``x_(d)`` and
        ``x_(d+1)`` (and their mirror images) with Hettmansperger and Sheather's weight, which
        brings the coverage to ``confidence`` rather than the 97.9% that 10 runs give exactly.
        Tied values (printed, rounded or bucketed per-run values) lie on a grid, where the
        median itself can sit on a grid value that interpolation would cut off: each
        interpolated bound is then moved out by the grid step (the smallest gap between
        distinct values), never beyond the exact bound; when it reaches the exact bound
        ``achieved_confidence`` is that bound's exact coverage. When even the range of the
        runs falls short of ``confidence`` by more than half its miss rate the bounds are
        infinite with a warning naming the runs needed; in between (5 runs at 95%: the range,
        93.75%) the range is returned with ``achieved_confidence`` below ``confidence`` and a
        warning.

    Notes
    -----
    Hettmansperger and Sheather, "Confidence intervals based on interpolated order statistics",
    Statistics & Probability Letters 4 (1986) 75-79; Conover (1999), section 3.2.
    """
    _check_confidence(confidence)
    x = _sorted_runs(values)
    n = len(x)
    if n == 0:
        return _no_runs(confidence)
    mid = n // 2
    estimate = float(x[mid]) if n % 2 else _midpoint(x[mid - 1], x[mid])
    cover = _median_coverages(n)  # cover[d] = exact coverage of (x_(d), x_(n-d+1)), d >= 1
    if cover[1] < confidence:
        return _too_few_runs(x, estimate, confidence)
    d = max(k for k in range(1, (n + 1) // 2 + 1) if cover[k] >= confidence)
    exact = (float(x[d - 1]), float(x[n - d]))
    if d + 1 > n - d or not interpolate:
        return MedianCI(estimate, *exact, (), n, confidence, cover[d])
    share = (cover[d] - confidence) / (cover[d] - cover[d + 1])
    lam = (n - d) * share / (d + (n - 2 * d) * share)
    low = _between(x[d - 1], x[d], lam)
    high = _between(x[n - d], x[n - d - 1], lam)
    step = _grid_step(x)
    if step > 0:  # tied values lie on a grid: never cut off a median sitting on a grid value
        low, high = max(exact[0], low - step), min(exact[1], high + step)
    achieved = cover[d] if (low, high) == exact else confidence
    return MedianCI(estimate, low, high, (), n, confidence, achieved)


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
    warnings: list[Warn] = []
    if n == 0:
        return QuantileCI(qf, math.nan, 0.0, math.inf, 0, confidence, 1.0, INDEPENDENCE_LABEL,
                          (Warn(Code.EMPTY_HISTOGRAM),))
    lo, hi, achieved = order_statistic_bounds(n, p, confidence)
    cum = np.cumsum(hist.counts)
    ranks = np.array([max(lo, 1), min(hi, n)])
    idx = np.searchsorted(cum, ranks, side="left")
    low_ms = float(LAYOUT.lowest[idx[0]]) / 1000.0 if lo >= 1 else 0.0
    high_ms = float(LAYOUT.highest[idx[1]]) / 1000.0 if hi <= n else math.inf
    if lo < 1 or hi > n:
        need = min_n_for_finite_ci(p, confidence)
        warnings.append(Warn(Code.QUANTILE_CI_NEEDS_REQUESTS, requests=n, q=qf, need=need,
                             confidence=confidence))
    return QuantileCI(qf, hist.percentile_ms(qf), low_ms, high_ms, n, confidence, achieved,
                      INDEPENDENCE_LABEL, tuple(warnings))


def _too_few_runs(x: np.ndarray, estimate: float, confidence: float) -> MedianCI:
    """Even the range misses ``confidence``: the range if it falls short by at most half the
    nominal miss rate (5 runs at 95%: 93.75%), else no interval."""
    n = len(x)
    floor = confidence - (1.0 - confidence) / 2.0
    reach = _median_coverages(n)[1]
    if reach >= floor:
        note = Warn(Code.MEDIAN_CI_RANGE, runs=n, coverage=reach)
        return MedianCI(estimate, float(x[0]), float(x[-1]), (note,), n, confidence, reach)
    need = next(m for m in range(n + 1, 10 * n + 100) if _median_coverages(m)[1] >= floor)
    note = Warn(Code.MEDIAN_CI_NONE, runs=n, confidence=confidence, coverage=reach, need=need)
    return MedianCI(estimate, -math.inf, math.inf, (note,), n, confidence, 1.0)


@lru_cache(maxsize=256)
def _median_coverages(n: int) -> tuple[float, ...]:
    """Exact coverage of ``(x_(d), x_(n-d+1))`` for the median, indexed by d (0 unused)."""
    d = np.arange(0, (n + 1) // 2 + 2)
    cover = 1.0 - 2.0 * binom_cdf(d - 1, n, 0.5)
    return tuple(float(c) for c in cover)


def _grid_step(x: np.ndarray) -> float:
    """Smallest gap between distinct sorted values when some values tie, else 0."""
    distinct = np.unique(x[np.isfinite(x)])
    if len(distinct) == np.isfinite(x).sum() or len(distinct) < 2:
        return 0.0
    return float(np.diff(distinct).min())


def _between(a: float, b: float, lam: float) -> float:
    """``(1 - lam) a + lam b``, exact when the two are equal (also for infinities)."""
    if a == b or lam == 0.0:
        return float(a)
    return float((1.0 - lam) * a + lam * b)


def _midpoint(a: float, b: float) -> float:
    if a == b:  # also inf == inf
        return float(a)
    return float((a + b) / 2.0)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), e.g. 0.95; got {confidence!r}")
