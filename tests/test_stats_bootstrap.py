"""The cluster bootstrap of a pooled percentile, and the t interval on log per-run values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.histogram import LAYOUT, LatencyHistogram
from perfkit.stats import cluster_bootstrap_quantile, percentile_ci_across_runs, t_log_interval
from perfkit.stats.bootstrap import _resampled_positions
from perfkit.warning import Code


def _runs(n_runs: int, n_requests: int = 3000, seed: int = 1) -> list[LatencyHistogram]:
    rng = np.random.default_rng(seed)
    return [LatencyHistogram.from_values_us(
        np.exp(rng.normal(7.0 + rng.normal(0, 0.05), 0.5, n_requests))) for _ in range(n_runs)]


def test_resampled_positions_equal_explicit_merges():
    hists = _runs(8)
    counts = np.vstack([h.counts for h in hists])
    nz = np.flatnonzero(counts.any(axis=0))
    first = nz[0]
    cum = np.cumsum(counts[:, first:nz[-1] + 1], axis=1, dtype=np.float64)
    rng = np.random.default_rng(5)
    weights = rng.multinomial(8, [1 / 8] * 8, size=60).astype(np.float64)
    # extreme resamples (one run repeated) stress the search's edges
    weights[:8] = np.eye(8) * 8
    for q in (50.0, 99.0, 99.9, 100.0):
        got = _resampled_positions(cum, weights, q) + first
        for row, idx in zip(weights, got, strict=True):
            merged = LatencyHistogram.merge(
                [h for h, w in zip(hists, row, strict=True) for _ in range(int(w))])
            assert LAYOUT.highest[idx] == merged.percentile_us(q)


def test_cluster_bootstrap_estimate_is_the_merged_percentile_and_inside_the_interval():
    hists = _runs(12)
    ci = cluster_bootstrap_quantile(hists, 99, n_resamples=400, seed=2)
    assert ci.estimate_ms == LatencyHistogram.merge(hists).percentile_ms(99)
    assert ci.low_ms <= ci.estimate_ms <= ci.high_ms
    assert ci.method == "cluster_bootstrap" and ci.n_runs == 12
    again = cluster_bootstrap_quantile(hists, 99, n_resamples=400, seed=2)
    assert again == ci


def test_cluster_bootstrap_of_identical_runs_has_no_width():
    one = _runs(1)[0]
    ci = cluster_bootstrap_quantile([one] * 10, 99, n_resamples=100)
    assert ci.low_ms == ci.high_ms == ci.estimate_ms == one.percentile_ms(99)


def test_cluster_bootstrap_accepts_a_counts_matrix():
    hists = _runs(10)
    a = cluster_bootstrap_quantile(hists, 99.9, n_resamples=300, seed=4)
    b = cluster_bootstrap_quantile(np.vstack([h.counts for h in hists]), 99.9, 300, seed=4)
    assert a == b


def test_cluster_bootstrap_refuses_a_fraction_for_a_percentile():
    with pytest.raises(ValueError, match="percentile must be in"):
        cluster_bootstrap_quantile(_runs(3), 0.99)


def test_few_runs_warn_in_the_plain_bootstrap():
    ci = cluster_bootstrap_quantile(_runs(5), 99, n_resamples=100)
    assert Code.BOOTSTRAP_UNDER_COVERS in {w.code for w in ci.warnings}


def test_t_log_interval_matches_scipy_t_interval_on_logs():
    values = np.array([3.1, 2.9, 3.4, 3.0, 3.3])
    ci = t_log_interval(values, 99)
    logs = np.log(values)
    lo, hi = sps.t.interval(0.95, len(values) - 1, loc=logs.mean(), scale=sps.sem(logs))
    assert ci.low_ms == pytest.approx(math.exp(lo), rel=1e-12)
    assert ci.high_ms == pytest.approx(math.exp(hi), rel=1e-12)
    assert ci.estimate_ms == pytest.approx(math.exp(logs.mean()), rel=1e-12)
    assert ci.estimand == "geometric mean of per-run p99"


def test_a_counts_matrix_gives_the_same_interval_as_histograms():
    hists = _runs(7)
    a = percentile_ci_across_runs(hists, 99.9)
    b = percentile_ci_across_runs(np.vstack([h.counts for h in hists]), 99.9)
    assert a == b


def test_the_cluster_bootstrap_can_be_asked_for():
    ci = percentile_ci_across_runs(_runs(10), 99, n_resamples=200, method="cluster_bootstrap")
    assert ci.method == "cluster_bootstrap"
    with pytest.raises(ValueError, match="histogram for every run"):
        percentile_ci_across_runs([1.0, 2.0], 99, method="cluster_bootstrap")
