"""Order-statistic intervals: median of runs, percentile within one run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.histogram import LatencyHistogram
from perfkit.stats import median_ci, quantile_ci
from perfkit.stats.orderstats import min_n_for_finite_ci
from perfkit.warning import Code, Warn


@pytest.mark.parametrize("n", [6, 7, 10, 11, 20, 31, 60])
def test_median_ci_matches_scipy_quantile_test(n):
    x = np.random.default_rng(n).lognormal(0, 0.3, n)
    ci = median_ci(x)
    ref = sps.quantile_test(x, q=np.median(x), p=0.5).confidence_interval(0.95)
    assert (ci.low, ci.high) == (ref.low, ref.high)
    assert ci.estimate == np.median(x) and ci.achieved_confidence >= 0.95


def test_median_ci_textbook_orders():
    # Conover (1999) table: n=10 -> (x(2), x(9)), n=20 -> (x(6), x(15)) at 95%
    assert tuple(median_ci(np.arange(1.0, 11.0)))[1:3] == (2.0, 9.0)
    assert tuple(median_ci(np.arange(1.0, 21.0)))[1:3] == (6.0, 15.0)


def test_median_ci_below_six_runs_is_infinite_and_says_how_many():
    est, low, high, warnings = median_ci([3.0, 1.0, 2.0, 5.0, 4.0])
    assert est == 3.0 and (low, high) == (-math.inf, math.inf)
    assert warnings == (Warn(Code.MEDIAN_CI_NEEDS_RUNS, need=6, confidence=0.95),)
    assert str(warnings[0]) == "need >= 6 runs for a 95% median CI"
    assert median_ci(np.arange(6.0)).warnings == ()


def test_median_ci_keeps_failed_runs_ranked_last():
    ci = median_ci([1.0, 2.0, 3.0, 4.0, 5.0, math.inf])
    assert ci.estimate == 3.5 and ci.high == math.inf


def test_median_ci_refuses_nan():
    with pytest.raises(ValueError, match="NaN"):
        median_ci([1.0, float("nan")])


@pytest.mark.parametrize("q,n_min", [(50, 6), (90, 36), (99, 368), (99.9, 3688)])
def test_minimum_requests_for_a_finite_95_percent_percentile_ci(q, n_min):
    assert min_n_for_finite_ci(q / 100) == n_min
    too_few = quantile_ci(LatencyHistogram.from_values_us(np.arange(1, n_min) * 3.0), q)
    enough = quantile_ci(LatencyHistogram.from_values_us(np.arange(1, n_min + 1) * 3.0), q)
    assert math.isinf(too_few.high_ms) or too_few.low_ms == 0.0
    assert too_few.warnings[0]["need"] == n_min
    assert math.isfinite(enough.high_ms) and enough.low_ms > 0 and enough.warnings == ()


def test_minimum_n_agrees_with_a_binomial_search():
    for p in (0.5, 0.75, 0.9, 0.95, 0.99, 0.999):
        n = next(n for n in range(1, 10_000) if sps.binom.sf(n - 1, n, p) <= 0.025
                 and sps.binom.cdf(0, n, p) <= 0.025)
        assert min_n_for_finite_ci(p) == n


def test_quantile_ci_matches_scipy_on_exactly_recorded_values():
    # values below 2048 us land in exact HDR buckets, so the histogram is the sample
    x = np.random.default_rng(4).permutation(np.arange(1, 1501)).astype(float)
    ci = quantile_ci(LatencyHistogram.from_values_us(x), 99)
    ref = sps.quantile_test(x, q=1485, p=0.99).confidence_interval(0.95)
    assert (ci.low_ms, ci.high_ms) == (ref.low / 1000, ref.high / 1000)
    assert ci.label == "assumes independent requests"
    assert ci.low_ms <= ci.estimate_ms <= ci.high_ms


def test_quantile_ci_widens_to_bucket_edges_above_exact_range():
    x = np.random.default_rng(5).lognormal(9, 0.5, 5000)  # ~8 ms: 4 us buckets
    ci = quantile_ci(LatencyHistogram.from_values_us(x), 99)
    ref = sps.quantile_test(np.rint(x), q=1, p=0.99).confidence_interval(0.95)
    assert ci.low_ms <= ref.low / 1000 and ci.high_ms >= ref.high / 1000
    assert ci.high_ms - ref.high / 1000 < 0.01


def test_quantile_ci_refuses_a_fraction():
    with pytest.raises(ValueError, match="percentile must be in"):
        quantile_ci(LatencyHistogram.from_values_us([1.0, 2.0]), 0.99)


def test_coordinated_omission_known_answer_through_quantile_ci():
    """10,000 requests of 1 ms every 10 ms, then one 100 s stall (DESIGN.md section 6)."""
    from hdrh.histogram import HdrHistogram

    from perfkit.histogram import HIGHEST_US, LOWEST_US, SIGNIFICANT_FIGURES

    plain = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    corrected = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    for value_us in [1_000] * 10_000 + [100_000_000]:
        plain.record_value(value_us)
        corrected.record_corrected_value(value_us, 10_000)
    uncorrected = quantile_ci(LatencyHistogram(plain), 99.99)
    assert uncorrected.estimate_ms == 1.0
    # and 10,001 requests cannot bound a p99.99 from above at all: the CI says so
    assert uncorrected.high_ms == math.inf and uncorrected.warnings[0]["need"] == 36887
    p75 = quantile_ci(LatencyHistogram(corrected), 75)
    p9999 = quantile_ci(LatencyHistogram(corrected), 99.99)
    assert p75.estimate_ms / 1000 == pytest.approx(50, rel=0.01)
    assert p75.low_ms < 50_000 < p75.high_ms
    assert p9999.estimate_ms / 1000 == pytest.approx(100, rel=0.01)
