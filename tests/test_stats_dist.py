"""The distribution functions from scipy.special agree with scipy.stats (issue 33).

Each is checked against the scipy.stats function it replaced, over the ranges the analysis
uses (its quantiles, degrees of freedom and counts).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.stats import _dist

X = np.linspace(-8.0, 8.0, 161)
Q = np.r_[1e-9, np.linspace(0.001, 0.999, 57), 1 - 1e-9]


@pytest.mark.parametrize("df", [1, 2, 3.5, 7, 30, 200, 10_000])
def test_t_chi2_and_f_match_scipy_stats(df):
    np.testing.assert_allclose(_dist.t_ppf(Q, df), sps.t.ppf(Q, df), rtol=1e-11)
    np.testing.assert_allclose(_dist.t_sf(X, df), sps.t.sf(X, df), rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(_dist.chi2_ppf(Q, df), sps.chi2.ppf(Q, df), rtol=1e-11)
    f = np.abs(X)
    np.testing.assert_allclose(_dist.f_sf(f, df, df + 3), sps.f.sf(f, df, df + 3), rtol=1e-11)


def test_normal_matches_scipy_stats_in_both_tails():
    np.testing.assert_allclose(_dist.norm_sf(X), sps.norm.sf(X), rtol=1e-14)
    np.testing.assert_allclose(_dist.norm_cdf(X), sps.norm.cdf(X), rtol=1e-14)
    np.testing.assert_allclose(_dist.norm_ppf(Q), sps.norm.ppf(Q), rtol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 5, 17, 100, 1000, 100_000])
@pytest.mark.parametrize("p", [0.01, 0.5, 0.9, 0.99, 0.999])
def test_binomial_cdf_sf_ppf_match_scipy_stats(n, p):
    mine, theirs = _dist.Binom(n, p), sps.binom(n, p)
    for k in [*range(-2, min(n, 60) + 2), n - 1, n, n + 1, n * p]:
        assert mine.cdf(k) == pytest.approx(theirs.cdf(k), rel=1e-10, abs=1e-300), k
        assert mine.sf(k) == pytest.approx(theirs.sf(k), rel=1e-10, abs=1e-300), k
    for q in [0.0, 1e-6, 0.005, 0.025, 0.3, 0.975, 0.995, 1.0]:
        assert mine.ppf(q) == theirs.ppf(q), q


def test_midranks_match_scipy_stats_with_ties_and_infinities():
    rng = np.random.default_rng(33)
    for _ in range(300):
        a = rng.integers(0, 6, rng.integers(1, 40)).astype(float)
        if rng.random() < 0.3:
            a[rng.integers(0, a.size)] = np.inf
        np.testing.assert_array_equal(_dist.rankdata(a), sps.rankdata(a))
