
"""The Mann-Whitney U test as benchstat does it, with the Moses interval from the same test.

- U of sample x counts pairs (x_i, y_j) with x_i > y_j, plus 1/2 for each tie (the midrank
  statistic). Two-sided p = 2 P(U <= min(U_x, U_y)), capped at 1; U_x == U_y gives p = 1.
- Both samples of at most :data:`EXACT_LIMIT` values: the exact permutation distribution of the
  midrank statistic given the observed ties (Klotz, "The Wilcoxon, ties, and the computer",
  JASA 61, 1966; Cheung and Klotz, Statistica Sinica 7, 1997), here by dynamic programming
  over the tie groups. Otherwise the normal approximation with tie and continuity correction
  (Lehmann, *Nonparametrics*, 1975, ch. 1).
- The shift interval inverts the same test (Moses, in Walker and Lev, 1953; Hollander, Wolfe
  and Chicken, *Nonparametric Statistical Methods*, 3rd ed., 2014, section 4.3): a shift d is
  inside it exactly when the test of ``x - d`` against ``y`` does not reject at alpha, so the
  interval excludes 0 exactly when p < alpha. The estimate is Hodges-Lehmann's median of the
  pairwise differences.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np

from perfkit.stats._dist import norm_cdf, rankdata
from perfkit.stats._pairwise import count_below, kth_difference

#: largest sample size (each side) for the exact distribution, as benchstat does
EXACT_LIMIT = 25
#: most pairwise differences sorted outright for the Hodges-Lehmann shift and Moses interval
#: under the normal method; beyond, they are selected (:mod:`perfkit.stats._pairwise`), with
#: the same values. None are: selection reads about 2 log2(N) p-values where sorting reads
#: the p of all 2N + 1 grid points, too many to remember (issue 33: at 500 runs a side, a
#: million normal tails, and the import of ``scipy.special`` on every command); the exact
#: method's p-values are all computed anyway and its shift is sorted
PAIRS_SORTED = 0


@dataclasses.dataclass(frozen=True)
class UTest:
    """Result of :func:`mann_whitney`: U of x (midrank), two-sided p and its method."""

    u_x: float
    u_y: float
    p_value: float
    method: str
    n_x: int
    n_y: int


class UNull:
    """The null distribution of U_x on the half-integer grid 0, 0.5, ..., n_x n_y.

    ``pvalues[k]`` is the two-sided p of U_x = k / 2 (the grid index is 2U).
    """

    def __init__(self, n_x: int, n_y: int, ties: tuple[int, ...], exact: bool):
        self.n_x, self.n_y, self.exact, self.ties = n_x, n_y, exact, ties
        self.method = "exact" if exact else "normal"
        self._pvalues: np.ndarray | None = None
        if exact:
            grid = np.arange(2 * n_x * n_y + 1) / 2.0
            pmf = _exact_pmf(ties, n_x)
            cdf = np.cumsum(pmf)
            sf = np.cumsum(pmf[::-1])[::-1]
            centre = n_x * n_y / 2.0
            p = np.where(grid < centre, 2.0 * cdf, 2.0 * sf)
            p[grid == centre] = 1.0
            self._pvalues = np.minimum(p, 1.0)

    @property
    def pvalues(self) -> np.ndarray:
        """The p of every 2U on the grid (the normal method's built on first use: 2 n_x n_y + 1
        floats, 800 MB at 10,000 runs a side; :meth:`p_at` reads a few without it)."""
        if self._pvalues is None:
            self._pvalues = self.p_at(np.arange(2 * self.n_x * self.n_y + 1))
        return self._pvalues

    def p_at(self, two_u: np.ndarray) -> np.ndarray:
        """The p of U = two_u / 2 (integer array), as :attr:`pvalues` holds it."""
        if self._pvalues is not None:
            return self._pvalues[two_u]
        return np.minimum(_normal_p(two_u / 2.0, self.n_x, self.n_y, self.ties), 1.0)

    def p_of(self, u_x: float) -> float:
        return float(self.p_at(np.array([int(round(2 * u_x))]))[0])


def mann_whitney(x: np.ndarray, y: np.ndarray) -> tuple[UTest, UNull]:
    """Two-sided Mann-Whitney U test of x against y; returns the test and its null distribution.

    Values may be +-inf (ranked beyond every finite value); NaN is refused.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(x) == 0 or len(y) == 0:
        raise ValueError("both samples need at least one value")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("NaN cannot be ranked: rank failed runs or exclude them explicitly")
    pooled = np.concatenate([x, y])
    ranks = rankdata(pooled)  # midranks; inf == inf ties, as it should
    n_x, n_y = len(x), len(y)
    u_x = float(ranks[:n_x].sum() - n_x * (n_x + 1) / 2.0)
    u_y = n_x * n_y - u_x
    _, tie_counts = np.unique(pooled, return_counts=True)
    null = null_distribution(n_x, n_y, tuple(int(t) for t in tie_counts))
    p = 1.0 if u_x == u_y else null.p_of(u_x)
    return UTest(u_x, u_y, p, null.method, n_x, n_y), null


@lru_cache(maxsize=256)
def null_distribution(n_x: int, n_y: int, ties: tuple[int, ...] | None = None) -> UNull:
    """The null distribution of U_x for these sizes and tie groups (None: no ties)."""
    if ties is None:
        ties = (1,) * (n_x + n_y)
    exact = n_x <= EXACT_LIMIT and n_y <= EXACT_LIMIT
    return UNull(n_x, n_y, ties, exact)


def min_attainable_p(n_x: int, n_y: int) -> float:
    """Smallest two-sided p any data of these sizes can give (no ties; method as used)."""
    if n_x == 0 or n_y == 0:
        return 1.0
    return float(null_distribution(n_x, n_y).p_at(np.array([0]))[0])


def attainable_size(n_x: int, n_y: int, alpha: float) -> float:
    """The size the two-sided test actually has at ``alpha`` with these run counts and no
    ties: P(p < alpha) when the two sides do not differ. The exact test's p-values are
    discrete, so this lies below ``alpha`` (5 vs 5 runs at 0.05: 8 of the 252 rank splits,
    0.0317); the normal approximation's is ``alpha`` itself."""
    null = null_distribution(n_x, n_y)
    if not null.exact:
        return float(alpha)
    pmf = _exact_pmf((1,) * (n_x + n_y), n_x)
    return float(pmf[null.pvalues < alpha].sum())


def runs_to_reach_alpha(alpha: float, limit: int = 50, family: int = 1) -> int | None:
    """Fewest equal runs per side whose smallest attainable p is below ``alpha`` (p < alpha is
    what a test must reach, so a design whose smallest p equals alpha cannot reject).

    ``family`` is the number of comparisons Holm adjusts together (the rows of one table): the
    smallest p times ``family`` (Holm's first step) must then be below ``alpha``, so 4 runs per
    side suffice alone at 0.05 but 6 are needed over 8 rows (Holm, Scand. J. Statist. 6, 1979).
    """
    for n in range(1, limit + 1):
        if min_attainable_p(n, n) * family < alpha:
            return n
    return None


def hodges_lehmann_moses(x: np.ndarray, y: np.ndarray, null: UNull,
                         alpha: float) -> tuple[float, float, float]:
    """Hodges-Lehmann shift of x over y and the Moses interval that inverts the U test.

    The interval is the closure of {d : p(U of x - d against y) >= alpha}, with U(d) counted
    on the pairwise differences D = x_i - y_j as #{D > d} + #{D == d} / 2 and p read from
    ``null`` (so the interval excludes 0 exactly when the test rejects; with tied differences
    at 0 the interval can be open at 0, reported as an endpoint equal to 0). Infinite values
    are allowed; two equal infinities differ by 0.
    """
    if len(x) * len(y) > PAIRS_SORTED and not null.exact:
        return _hl_moses_selected(np.asarray(x, dtype=np.float64),
                                  np.asarray(y, dtype=np.float64), null, alpha)
    diffs = _pairwise_differences(x, y)
    estimate = _median_sorted(diffs)
    uniq, counts = np.unique(diffs, return_counts=True)
    total = len(diffs)
    greater = total - np.cumsum(counts)  # #{D > d_i}
    # U along increasing shift: gap before d_1, d_1, gap, d_2, ..., d_m, gap after d_m
    u_points = greater + counts / 2.0
    u_seq = np.empty(2 * len(uniq) + 1)
    u_seq[0] = total
    u_seq[1::2] = u_points
    u_seq[2::2] = greater
    accepted = null.pvalues[np.rint(2 * u_seq).astype(np.int64)] >= alpha
    where = np.flatnonzero(accepted)
    if len(where) == 0:
        return estimate, math.nan, math.nan
    return estimate, _endpoint(where[0], uniq, low=True), _endpoint(where[-1], uniq, low=False)


def _hl_moses_selected(x: np.ndarray, y: np.ndarray, null: UNull,
                       alpha: float) -> tuple[float, float, float]:
    """:func:`hodges_lehmann_moses` by selection (:func:`perfkit.stats._pairwise.kth_difference`)
    instead of sorting the N = m n differences D; the same values.

    p is a non-increasing function of |U - N / 2|, and U(d) does not increase with d, so the
    accepted shifts are the positions where U lies in [N - u_hi, u_hi], u_hi the largest
    half-integer U accepted. The first is the point or the gap just after D_(N - floor(u_hi))
    (both end the interval at that difference; -inf when that rank is < 1), the last the point
    or the gap just before D_(N - ceil(N - u_hi) + 1) (+inf past N)."""
    x, y = np.sort(x), np.sort(y)
    total = len(x) * len(y)
    half = total // 2
    mid = kth_difference(x, y, half + 1)
    if total % 2:
        estimate = mid
    else:
        low_mid = kth_difference(x, y, half)
        with np.errstate(invalid="ignore"):
            estimate = low_mid if low_mid == mid else float((low_mid + mid) / 2.0)
    lo2, hi2 = total, 2 * total  # 2 u_hi in [N, 2N]: p(N / 2) = 1 is accepted
    while lo2 < hi2:  # the largest 2U whose p >= alpha
        m2 = (lo2 + hi2 + 1) // 2
        if null.p_at(np.array([m2]))[0] >= alpha:
            lo2 = m2
        else:
            hi2 = m2 - 1
    u_hi = lo2 / 2.0
    rank_low = total - int(math.floor(u_hi))
    rank_high = total - int(math.ceil(total - u_hi)) + 1
    low = kth_difference(x, y, rank_low) if rank_low >= 1 else -math.inf
    high = kth_difference(x, y, rank_high) if rank_high <= total else math.inf
    if low == high and math.isfinite(low):  # one tie group: its U steps may skip the range
        below = count_below(x, y, low, strict=True)
        upto = count_below(x, y, low, strict=False)
        steps = (total - below, total - (below + upto) / 2.0, total - upto)
        if not any(total - u_hi <= u <= u_hi for u in steps):
            return float(estimate), math.nan, math.nan
    return float(estimate), float(low), float(high)


# -- internals ---------------------------------------------------------------------------------
def _endpoint(position: int, uniq: np.ndarray, low: bool) -> float:
    """Shift value at a position of the gap/point sequence (odd positions are points)."""
    if position % 2 == 1:
        return float(uniq[position // 2])
    gap = position // 2  # gap between uniq[gap - 1] and uniq[gap]
    if low:
        return -math.inf if gap == 0 else float(uniq[gap - 1])
    return math.inf if gap == len(uniq) else float(uniq[gap])


def _pairwise_differences(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        diffs = np.subtract.outer(x, y).ravel()
    both_inf = np.isinf(np.repeat(x, len(y))) & np.isinf(np.tile(y, len(x)))
    diffs[both_inf & np.isnan(diffs)] = 0.0  # inf - inf: a tie
    return np.sort(diffs)


def _median_sorted(d: np.ndarray) -> float:
    n = len(d)
    if n % 2:
        return float(d[n // 2])
    a, b = d[n // 2 - 1], d[n // 2]
    if a == b:
        return float(a)
    with np.errstate(invalid="ignore"):
        return float((a + b) / 2.0)


def _exact_pmf(ties: tuple[int, ...], n_x: int) -> np.ndarray:
    """P(2 U_x = k), k = 0..2 n_x n_y, by dynamic programming over the tie groups.

    A tie group of size t whose members follow c earlier values has midrank c + (t + 1) / 2,
    so r members of x in it add r (2c + t + 1) to 2 R_x, and 2 U_x = 2 R_x - n_x (n_x + 1).
    ``ways[j, s]`` counts the placements of j x-values with 2 R_x = s; each group multiplies
    in C(t, r) ways of choosing its r x-members. Counts stay below C(50, 25) < 2**53.
    """
    n = sum(ties)
    n_y = n - n_x
    top = n_x * (2 * n - n_x + 1)  # largest 2 R_x
    ways = np.zeros((n_x + 1, top + 1), dtype=np.int64)
    ways[0, 0] = 1
    before = 0
    for t in ties:
        weight = 2 * before + t + 1
        new = np.zeros_like(ways)
        for r in range(min(t, n_x) + 1):
            shift = r * weight
            if shift > top:
                break
            new[r:, shift:] += math.comb(t, r) * ways[:n_x + 1 - r, :top + 1 - shift]
        ways = new
        before += t
    base = n_x * (n_x + 1)
    counts = ways[n_x, base:base + 2 * n_x * n_y + 1].astype(np.float64)
    return counts / float(math.comb(n, n_x))


def _normal_p(u: np.ndarray, n_x: int, n_y: int, ties: tuple[int, ...]) -> np.ndarray:
    """Normal approximation with tie and continuity correction (as benchstat)."""
    n = n_x + n_y
    t = np.asarray(ties, dtype=np.float64)
    tie_term = float((t ** 3 - t).sum()) / (n * (n - 1)) if n > 1 else 0.0
    sigma = math.sqrt(n_x * n_y * ((n + 1) - tie_term) / 12.0)
    mu = n_x * n_y / 2.0
    if sigma == 0:
        return np.ones_like(u)
    numer = u - mu
    numer = numer - np.sign(numer) * 0.5
    return 2.0 * norm_cdf(-np.abs(numer) / sigma)
