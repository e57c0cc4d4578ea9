"""Mann-Whitney U: exact with ties, normal approximation, minimum p, Moses interval."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.stats import mannwhitney as mw
from perfkit.stats.mannwhitney import (
    hodges_lehmann_moses,
    mann_whitney,
    min_attainable_p,
    runs_to_reach_alpha,
)


def _brute_force_p(x: np.ndarray, y: np.ndarray) -> float:
    """Enumerate every split of the pooled midranks: p = 2 P(U <= min(U_x, U_y)), capped."""
    pooled = np.concatenate([x, y])
    ranks = sps.rankdata(pooled)
    n_x = len(x)
    u_x = ranks[:n_x].sum() - n_x * (n_x + 1) / 2
    u_y = n_x * len(y) - u_x
    if u_x == u_y:
        return 1.0
    us = np.array([ranks[list(c)].sum() for c in itertools.combinations(range(len(pooled)), n_x)])
    us -= n_x * (n_x + 1) / 2
    tail = np.mean(us <= u_x + 1e-9) if u_x < u_y else np.mean(us >= u_x - 1e-9)
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("sizes", [(1, 1), (2, 3), (3, 3), (4, 4), (5, 7), (9, 6), (12, 10),
                                   (20, 25), (25, 25)])
def test_exact_p_without_ties_matches_scipy(sizes):
    rng = np.random.default_rng(sum(sizes))
    for shift in (0.0, 0.7, 2.0):
        x = rng.normal(shift, 1, sizes[0])
        y = rng.normal(0, 1, sizes[1])
        test, _ = mann_whitney(x, y)
        ref = sps.mannwhitneyu(x, y, method="exact")
        assert test.method == "exact"
        assert test.u_x == ref.statistic
        assert test.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)


def test_exact_p_with_ties_matches_brute_force_enumeration():
    rng = np.random.default_rng(11)
    for _ in range(40):
        n_x, n_y = rng.integers(1, 8, size=2)
        x = rng.integers(0, 4, n_x).astype(float)
        y = rng.integers(1, 5, n_y).astype(float)
        test, _ = mann_whitney(x, y)
        assert test.p_value == pytest.approx(_brute_force_p(x, y), rel=1e-12), (x, y)


def test_infinite_values_tie_with_each_other_and_rank_last():
    x = np.array([1.0, np.inf, np.inf])
    y = np.array([0.5, 2.0, np.inf, 3.0])
    test, _ = mann_whitney(x, y)
    assert test.p_value == pytest.approx(_brute_force_p(np.array([1.0, 9, 9]),
                                                        np.array([0.5, 2.0, 9, 3.0])))


def test_normal_approximation_above_25_matches_scipy_with_tie_and_continuity_correction():
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(0.3, 1, 30), 1)  # rounding makes ties
    y = np.round(rng.normal(0, 1, 40), 1)
    test, _ = mann_whitney(x, y)
    ref = sps.mannwhitneyu(x, y, method="asymptotic", use_continuity=True)
    assert test.method == "normal"
    assert test.p_value == pytest.approx(ref.pvalue, rel=1e-9)


def test_identical_samples_give_p_one():
    assert mann_whitney(np.ones(4), np.ones(4))[0].p_value == 1.0
    assert mann_whitney(np.arange(5.0), np.arange(5.0))[0].p_value == 1.0
    assert mann_whitney(np.ones(30), np.ones(30))[0].p_value == 1.0


def test_nan_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        mann_whitney(np.array([1.0, np.nan]), np.array([2.0]))


def test_minimum_attainable_p_is_benchstats_table():
    # benchstat's uTestMinP (golang/perf benchmath): 2 / C(2n, n)
    known = {1: 1.0, 2: 1 / 3, 3: 0.1, 4: 0.02857142857142857, 5: 0.007936507936507936,
             6: 0.0021645021645021645, 9: 4.113533525298231e-05}
    for n, p in known.items():
        assert min_attainable_p(n, n) == pytest.approx(p, rel=1e-12)
    assert min_attainable_p(3, 4) == pytest.approx(2 / math.comb(7, 3))
    assert runs_to_reach_alpha(0.05) == 4 and runs_to_reach_alpha(0.01) == 5
    # Holm's first step over a family: 8 x 2 / C(10, 5) = 0.063, 8 x 2 / C(12, 6) = 0.017
    assert runs_to_reach_alpha(0.05, family=8) == 6 and runs_to_reach_alpha(0.05, family=4) == 5


def _moses_by_scipy_inversion(x, y, alpha):
    """Shifts between consecutive differences accepted by scipy's exact test, mapped to ends."""
    d = np.sort(np.subtract.outer(x, y).ravel())
    mids = np.concatenate([[d[0] - 1], (d[:-1] + d[1:]) / 2, [d[-1] + 1]])
    accepted = [sps.mannwhitneyu(x - m, y, method="exact").pvalue >= alpha for m in mids]
    where = np.flatnonzero(accepted)
    low = -math.inf if where[0] == 0 else d[where[0] - 1]
    high = math.inf if where[-1] == len(d) else d[where[-1]]
    return low, high


def test_moses_interval_equals_inverting_scipys_exact_test():
    rng = np.random.default_rng(8)
    for n_x, n_y, alpha in [(5, 5, 0.05), (6, 8, 0.05), (4, 4, 0.1), (10, 7, 0.01), (3, 3, 0.05)]:
        x = rng.normal(0.5, 1, n_x)
        y = rng.normal(0, 1, n_y)
        _, null = mann_whitney(x, y)
        _, low, high = hodges_lehmann_moses(x, y, null, alpha)
        assert (low, high) == _moses_by_scipy_inversion(x, y, alpha)


def test_hodges_lehmann_is_the_median_of_pairwise_differences():
    x = np.array([1.0, 4.0, 9.0])
    y = np.array([0.0, 2.0])
    _, null = mann_whitney(x, y)
    est, _, _ = hodges_lehmann_moses(x, y, null, 0.05)
    assert est == np.median([1, -1, 4, 2, 9, 7])


def test_interval_excludes_zero_exactly_when_p_below_alpha_without_ties():
    rng = np.random.default_rng(21)
    for _ in range(300):
        n_x, n_y = rng.integers(3, 12, size=2)
        x = rng.normal(rng.uniform(0, 2), 1, n_x)
        y = rng.normal(0, 1, n_y)
        test, null = mann_whitney(x, y)
        for alpha in (0.05, 0.1):
            _, low, high = hodges_lehmann_moses(x, y, null, alpha)
            assert (test.p_value < alpha) == (low > 0 or high < 0)


def test_with_tied_differences_the_interval_is_consistent_with_the_test():
    rng = np.random.default_rng(5)
    for _ in range(300):
        x = rng.integers(0, 6, rng.integers(3, 9)).astype(float)
        y = rng.integers(0, 4, rng.integers(3, 9)).astype(float)
        test, null = mann_whitney(x, y)
        _, low, high = hodges_lehmann_moses(x, y, null, 0.05)
        if test.p_value < 0.05:  # excluded, or open exactly at 0
            assert low >= 0 or high <= 0
        else:
            assert low <= 0 <= high


@pytest.mark.parametrize("kind", ["continuous", "rounded", "three values", "infinite", "equal"])
def test_the_shift_and_interval_by_selection_are_the_sorted_ones_bit_for_bit(kind, monkeypatch):
    """Above PAIRS_SORTED pairs (none by default) the Hodges-Lehmann shift and the Moses
    interval are selected among the differences (perfkit/stats/_pairwise.py) instead of sorted:
    the same values, ties, infinite values and a tie group the interval's U steps over (NaN
    ends) included."""
    rng = np.random.default_rng(["continuous", "rounded", "three values", "infinite",
                                 "equal"].index(kind))
    for _ in range(12):
        m, n = (int(v) for v in rng.integers(26, 90, 2))
        x, y = rng.normal(0, 1, m), rng.normal(0.3, 1, n)
        if kind in ("rounded", "infinite"):
            x, y = np.round(x, 1), np.round(y, 1)
        if kind == "three values":
            x, y = rng.integers(0, 3, m).astype(float), rng.integers(0, 3, n).astype(float)
        if kind == "infinite":
            x[rng.random(m) < 0.1], y[rng.random(n) < 0.1] = np.inf, np.inf
            x[rng.random(m) < 0.05], y[rng.random(n) < 0.05] = -np.inf, -np.inf
        if kind == "equal":
            x, y = np.full(m, 1.0), np.full(n, 1.0)
        _, null = mann_whitney(x, y)
        for alpha in (0.5, 0.05, 0.01):
            monkeypatch.setattr(mw, "PAIRS_SORTED", m * n)
            sorted_ = hodges_lehmann_moses(x, y, null, alpha)
            monkeypatch.setattr(mw, "PAIRS_SORTED", 0)
            selected = hodges_lehmann_moses(x, y, null, alpha)
            monkeypatch.undo()
            assert np.array_equal(sorted_, selected, equal_nan=True), (m, n, alpha)


def test_the_shift_of_4000_runs_a_side_never_holds_their_16_million_differences():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 4000), rng.normal(0.1, 1, 4000)
    tracemalloc.start()
    try:
        _, null = mann_whitney(x, y)
        shift, low, high = hodges_lehmann_moses(x, y, null, 0.05)
        peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert low < shift < high
    assert peak_bytes < 4000 * 4000 * 8 / 2  # the differences alone: 128 MB
