"""Order statistics of the pairwise differences x_i - y_j, without forming the m n of them.

The Hodges-Lehmann shift and the Moses interval (:mod:`perfkit.stats.mannwhitney`) are order
statistics of the m n differences; sorting them all costs O(m n) memory (20 GB for 50,000 runs
a side). :func:`kth_difference` selects the k-th smallest in O((m + n) log(m n)) memory-light
steps, as Johnson and Mizoguchi's selection in X + Y does ("Selecting the Kth element in X + Y
and X1 + X2 + ... + Xm", SIAM J. Comput. 7, 1978): with y sorted, row i's differences are
sorted, so the count of those <= t is one binary search per row; a random pivot among the
candidates left halves them in expectation, each round O(m log n).

The values are the ones the full computation would sort, bit for bit: a row is compared as
``x_i - y_j`` computed in floating point (monotone in y_j), never rearranged. Infinite values
follow :func:`perfkit.stats.mannwhitney._pairwise_differences`: inf - inf of one sign is a tie
(0), any other difference with an infinite value is infinite.
"""

from __future__ import annotations

import numpy as np

#: candidates left when they are sorted outright (1M floats, 8 MB)
SORT_BELOW = 1 << 20


def kth_difference(x: np.ndarray, y: np.ndarray, k: int) -> float:
    """The ``k``-th smallest (1-based) of every ``x_i - y_j``; ``x``, ``y`` sorted, no NaN."""
    fx, fy = x[np.isfinite(x)], y[np.isfinite(y)]
    x_hi, x_lo = int(np.sum(x == np.inf)), int(np.sum(x == -np.inf))
    y_hi, y_lo = int(np.sum(y == np.inf)), int(np.sum(y == -np.inf))
    below = x_lo * (len(fy) + y_hi) + len(fx) * y_hi  # -inf differences
    above = x_hi * (len(fy) + y_lo) + len(fx) * y_lo  # +inf differences
    zeros = x_hi * y_hi + x_lo * y_lo  # inf - inf of one sign: ties at 0
    if k <= below:
        return -np.inf
    if k > len(x) * len(y) - above:
        return np.inf
    k -= below
    under = _count(fx, fy[::-1], 0.0, strict=True).sum()
    upto = _count(fx, fy[::-1], 0.0, strict=False).sum()
    if k <= under:
        return _kth_finite(fx, fy[::-1], k)
    if k <= upto + zeros:
        return 0.0
    return _kth_finite(fx, fy[::-1], k - zeros)


def count_below(x: np.ndarray, y: np.ndarray, t: float, strict: bool) -> int:
    """How many ``x_i - y_j`` are < t (``strict``) or <= t, for a finite t; sorted input."""
    fx, fy = x[np.isfinite(x)], y[np.isfinite(y)]
    x_hi, x_lo = int(np.sum(x == np.inf)), int(np.sum(x == -np.inf))
    y_hi, y_lo = int(np.sum(y == np.inf)), int(np.sum(y == -np.inf))
    minus_inf = x_lo * (len(fy) + y_hi) + len(fx) * y_hi
    zeros = x_hi * y_hi + x_lo * y_lo
    at_zero = zeros if (0.0 < t if strict else 0.0 <= t) else 0
    return minus_inf + at_zero + int(_count(fx, fy[::-1], t, strict).sum())


def _count(x: np.ndarray, yd: np.ndarray, t: float, strict: bool,
           lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """Per row i, the first j in [lo_i, hi_i) where x_i - yd_j exceeds t (reaches it when
    ``strict``), minus lo_i: how many of the row's candidates are <= t (< t)."""
    a = np.zeros(len(x), dtype=np.int64) if lo is None else lo.copy()
    b = np.full(len(x), len(yd), dtype=np.int64) if hi is None else hi.copy()
    start = a.copy()
    if len(yd) == 0:
        return b - start
    open_ = a < b
    while open_.any():
        mid = (a + b) // 2
        d = x - yd[np.minimum(mid, len(yd) - 1)]
        past = (d >= t) if strict else (d > t)
        a = np.where(open_ & ~past, mid + 1, a)
        b = np.where(open_ & past, mid, b)
        open_ = a < b
    return a - start


def _kth_finite(x: np.ndarray, yd: np.ndarray, k: int) -> float:
    """The k-th smallest of x_i - yd_j (yd descending, so each row ascends)."""
    rng = np.random.default_rng(k)
    lo = np.zeros(len(x), dtype=np.int64)
    hi = np.full(len(x), len(yd), dtype=np.int64)
    before = 0  # candidates ruled out below the window
    while True:
        sizes = hi - lo
        total = int(sizes.sum())
        if total <= SORT_BELOW:
            rows = np.repeat(np.arange(len(x)), sizes)
            offsets = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            values = np.sort(x[rows] - yd[lo[rows] + offsets])
            return float(values[k - before - 1])
        pick = int(rng.integers(total))
        ends = np.cumsum(sizes)
        row = int(np.searchsorted(ends, pick, side="right"))
        t = float(x[row] - yd[lo[row] + pick - (ends[row] - sizes[row])])
        less = _count(x, yd, t, strict=True, lo=lo, hi=hi)
        upto = _count(x, yd, t, strict=False, lo=lo, hi=hi)
        if before + int(less.sum()) >= k:
            hi = lo + less
        elif before + int(upto.sum()) >= k:
            return t
        else:
            before += int(upto.sum())
            lo = lo + upto
