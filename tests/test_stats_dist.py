"""perfkit.stats.dist against scipy.stats: the same values, to the bit where the same special
function is evaluated, and within 1e-10 for the binomial (Cephes against Boost)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from perfkit.stats import dist

Q = np.array([1e-6, 0.001, 0.025, 0.2, 0.5, 0.8, 0.975, 0.999, 1 - 1e-9])
X = np.array([-40.0, -3.2, -1.0, 0.0, 0.5, 2.7, 9.0, 1e3])
DF = (1, 2.5, 3.72, 7, 30, 1e6)


def test_the_normal_is_scipy_stats_norm():
    assert np.array_equal(dist.norm_ppf(Q), stats.norm.ppf(Q))
    assert np.array_equal(dist.norm_cdf(X), stats.norm.cdf(X))
    assert np.array_equal(dist.norm_sf(X), stats.norm.sf(X))
    assert dist.norm_sf(1.959963984540054) == pytest.approx(0.025, rel=1e-12)  # known answer


@pytest.mark.parametrize("df", DF)
def test_t_and_chi_squared_are_scipy_stats(df):
    assert np.array_equal(dist.t_ppf(Q, df), stats.t.ppf(Q, df))
    assert np.array_equal(dist.t_sf(X, df), stats.t.sf(X, df))
    assert np.array_equal(dist.chi2_ppf(Q, df), stats.chi2.ppf(Q, df))


def test_known_answers():
    assert dist.t_ppf(0.975, 4) == pytest.approx(2.7764451051977987, rel=1e-14)
    assert dist.chi2_ppf(0.95, 1) == pytest.approx(3.841458820694124, rel=1e-14)
    assert dist.f_sf(4.0, 1, 10) == pytest.approx(stats.f.sf(4.0, 1, 10), rel=0, abs=0)


@pytest.mark.parametrize(("dfn", "dfd"), [(1, 3), (2, 7), (3, 2.5), (1, 100), (6, 40)])
def test_f_is_scipy_stats_f(dfn, dfd):
    xs = np.array([0.0, 0.1, 1.0, 3.5, 40.0])
    assert np.array_equal(dist.f_sf(xs, dfn, dfd), stats.f.sf(xs, dfn, dfd))


@pytest.mark.parametrize("n", [1, 2, 5, 17, 100, 1000])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.99, 0.999])
def test_the_binomial_tails_agree_with_scipy_stats_outside_its_support_too(n, p):
    k = np.arange(-2, n + 3)
    assert np.allclose(dist.binom_cdf(k, n, p), stats.binom.cdf(k, n, p), rtol=0, atol=1e-10)
    assert np.allclose(dist.binom_sf(k, n, p), stats.binom.sf(k, n, p), rtol=0, atol=1e-10)


def test_midranks_are_scipy_rankdata_ties_and_infinities_included():
    values = np.array([3.0, np.inf, 1.0, 3.0, -np.inf, np.inf, 2.0, 3.0])
    assert np.array_equal(dist.midranks(values), stats.rankdata(values))
    assert dist.midranks([5.0, 5.0]).tolist() == [1.5, 1.5]
